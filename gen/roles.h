#pragma once
// The generator's instruction templates ("roles", one per OpKind of the profile's mix) and
// the instructions of an ISA that follow each, derived from the ISA tables rather than from
// mnemonics. An instruction follows a role when it runs on the role's queue, has the fields
// the role sets (by name and kind; every other field of its own has a default, which the
// generator leaves) and exactly the role's operands (field, read or write, SRAM or DDR). A
// copy of `move` under a new opcode and mnemonic is therefore generated like `move`, with
// no code change. Control instructions: `nop` is the one the ISA model does not treat as a
// barrier and `halt` ends every program (isa/token_order.h, gen/program_check.h); any other
// control instruction follows the sync role.
//
// The templates keep what is generator policy (distributions, how inputs are fitted);
// operand sizes come from the ISA's operand expressions (operand_bytes) and enum fields are
// drawn over the values the ISA lists.
#include <array>
#include <cstdint>
#include <vector>

#include "gen/factor.h"
#include "gen/profile.h"
#include "isa/instruction.h"
#include "util/rng.h"

namespace npuforge::gen {

inline constexpr unsigned kMaxRoleFields = 16;

// Field indexes of each role, in the order of its field list (roles.cc).
namespace dma { enum : unsigned { sram, ddr, rows, row_bytes, stride }; }  // load and store
namespace gemm { enum : unsigned { dst, a, b, bias, qp, m, n, k, scale, shift, relu, has_bias, per_channel }; }
namespace im2col {
enum : unsigned { dst, src, h, w, c, kh, kw, stride_h, stride_w, pad_top, pad_left, pad_bottom, pad_right, dil_h, dil_w };
}
namespace eltwise { enum : unsigned { dst, a, b, len, op, scale, shift, lo, hi }; }
namespace pool {
enum : unsigned { dst, src, h, w, c, window_h, window_w, stride_h, stride_w, pad_top, pad_left, pad_bottom, pad_right,
                  mode, count_pad };
}
namespace move { enum : unsigned { dst, src, len }; }
namespace lut { enum : unsigned { dst, src, table, len }; }

// One instruction bound to a role: the slot of each of the role's fields and, for address
// fields, the index of the operand they address.
struct Bound {
  const isa::InstrSpec* spec = nullptr;
  std::array<uint8_t, kMaxRoleFields> slot{};
  std::array<uint8_t, kMaxRoleFields> operand{};
  unsigned operator[](unsigned field) const { return slot[field]; }
  const isa::FieldSpec& field(unsigned f) const { return spec->fields[slot[f]]; }
  isa::Instruction make() const { return isa::Instruction::make(*spec); }
};

class Roles {
 public:
  // Binds every instruction of `isa`. Throws npuforge::Error naming the role, what it needs
  // and the profile's reason to need it, when a role the profile uses has no instruction.
  Roles(const isa::Isa& isa, const Profile& profile);
  const std::vector<Bound>& of(OpKind kind) const { return by_kind_[static_cast<unsigned>(kind)]; }
  // One instruction of the role, uniformly; draws from `rng` only when there is a choice,
  // so an ISA with one instruction per role spends no random numbers here.
  const Bound& pick(OpKind kind, Rng& rng) const {
    const auto& v = of(kind);
    return v.size() == 1 ? v.front() : v[rng.below(v.size())];
  }
  const isa::InstrSpec& halt() const { return *halt_; }
  // The largest rows and row_bytes every LOAD and STORE takes (a spill is stored by one and
  // reloaded by another, so the shape must fit both).
  DmaLimits dma_limits() const;
  // The longest `len` every ELTWISE, MOVE and LUT takes (UINT64_MAX when the ISA has none).
  uint64_t max_len() const;

 private:
  std::array<std::vector<Bound>, kNumOpKinds> by_kind_;
  const isa::InstrSpec* halt_ = nullptr;
};

// The bytes an operand of `in` covers, from the ISA's expression over its current fields
// (0: unused). `operand` indexes in.spec->operands (Bound::operand).
inline uint64_t operand_bytes(const isa::Instruction& in, unsigned operand) {
  const int64_t bytes = in.spec->operands[operand].bytes.eval(in.raw.data());
  return bytes > 0 ? static_cast<uint64_t>(bytes) : 0;
}

// The value of the `index`-th entry of an enum field's list, as the ISA gives it.
inline uint32_t enum_value(const isa::FieldSpec& f, uint64_t index) { return f.enum_values[index].second; }

}  // namespace npuforge::gen
