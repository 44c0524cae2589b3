#pragma once
// Bit-exact reference semantics of every instruction of isa/npu_isa.yaml. One
// implementation, used by the golden model (sim/golden.h), the sequential timing backend and
// the SystemC model (sim/sc_model/).
//
// Two ways to run an instruction:
//  - execute(instr, memory): reads and writes Memory directly (golden model, simple backends);
//  - compute(instr, operands): works on operand buffers the caller fetched itself (a TLM model
//    that moves data over sockets): one input span per read operand, and the write operand's
//    buffer pre-filled with its current contents (STORE writes DDR rows `stride` apart and
//    leaves the gaps unchanged; every other instruction overwrites its whole write extent).
// Both give identical results, also when a write operand overlaps a read operand (inputs are
// read as they were before the instruction).
//
// Numeric definitions (the doc strings of npu_isa.yaml made exact):
//  - GEMM: acc[m][n] = bias[n] + sum_k a[m][k] * b[k][n], accumulated in int32 with two's
//    complement wrap-around; bias is int32 little-endian, 0 without has_bias. Column n is
//    requantized with the scale/shift fields, or with qp[n] = {u32 scale LE, u8 shift, 3
//    ignored bytes} when per_channel.
//  - requant(x) = clamp((x * scale + round) >> shift, -128, 127) computed exactly, with
//    round = 1 << (shift - 1) when shift > 0 else 0, and >> an arithmetic shift; then
//    max(0, .) when relu. scale is unsigned (isa/numerics.h).
//  - ELTWISE add/mul: requant(a + b) / requant(a * b) with the instruction's scale/shift, no
//    relu; relu: max(a, 0); clip: clamp(a, lo, hi).
//  - POOL: window (window_h x window_w) at (oy * stride_h - pad_top, ox * stride_w -
//    pad_left); positions outside the image are skipped. max: the largest in-image value
//    (-128 if none); avg: their sum / count (window_h * window_w with count_pad; 0 if none)
//    rounded half away from zero.
//  - IM2COL: row r = oy * ow + ox holds, for ky, kx, ci in that order, the source pixel
//    (oy * stride_h - pad_top + ky * dil_h, ox * stride_w - pad_left + kx * dil_w, ci) or 0
//    outside the image.
//  - LUT: dst[i] = table[uint8(src[i]) ^ 0x80].
#include <array>
#include <climits>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "isa/instruction.h"
#include "isa/npu_config.h"
#include "isa/numerics.h"
#include "sim/memory.h"

namespace npuforge::sim {

// What an instruction does, resolved from its mnemonic once when the Semantics is built.
enum class Op : uint8_t { Nop, Load, Store, Gemm, Im2col, Eltwise, Pool, Move, Sync, Halt, Lut };
std::string_view to_string(Op);

// What the simulator implements for the named values of ELTWISE `op` and POOL `mode`. Their
// codes are the ISA's alone (npu_isa.yaml `values:`): the Semantics binds each name the ISA
// lists to one of these when it is built, and refuses a name with no implementation, so an
// ISA file that renumbers, drops or adds a value is honoured or refused, never misread.
enum class EltwiseOp : uint8_t { Add, Mul, Relu, Clip };
enum class PoolMode : uint8_t { Max, Avg };
std::string_view to_string(EltwiseOp);  // the ISA's name: "add", ...
std::string_view to_string(PoolMode);

[[noreturn]] void unnamed_code(uint64_t code);  // throws npuforge::Error naming the code

// The meaning of each code of one enum field, bound by name from the ISA (see above).
template <typename E>
class NamedCodes {
 public:
  // Throws npuforge::Error for a code the ISA names no value for (decode refuses those, so
  // only an instruction built by hand gets here).
  E of(uint64_t code) const {
    if (code >= by_code_.size() || by_code_[code] == kUnnamed) unnamed_code(code);
    return static_cast<E>(by_code_[code]);
  }
  void bind(uint32_t code, E meaning) {
    if (code >= by_code_.size()) by_code_.resize(size_t{code} + 1, kUnnamed);
    by_code_[code] = static_cast<uint8_t>(meaning);
  }

 private:
  static constexpr uint8_t kUnnamed = 0xff;
  std::vector<uint8_t> by_code_;
};

// The ISA's numerics (isa/numerics.h), named here for the kernels and tests.
using isa::RequantParams;
using isa::requant;
using isa::round_div_away;

// isa::requant, inline and in 64-bit arithmetic when that is exact: for an int32 `x`,
// |x * scale| <= 2^31 * (2^32 - 1) < 2^63, and adding the rounding term (at most 2^62 for a
// shift up to 63) is checked; anything else goes to isa::requant. The kernels call it per
// output byte (an out-of-line 128-bit requant was a tenth of the simulator's time; shifts
// 33..40, which the ISA allows, went there until they were checked instead of excluded).
inline int8_t requant_fast(int64_t x, const isa::RequantParams& p) {
  if (x < INT32_MIN || x > INT32_MAX || p.shift > 63) return requant(x, p);
  const int64_t round = p.shift > 0 ? int64_t{1} << (p.shift - 1) : 0;
  int64_t v = 0;
  if (__builtin_add_overflow(x * int64_t{p.scale}, round, &v)) return requant(x, p);
  v >>= p.shift;  // arithmetic shift (C++20)
  v = v < -128 ? -128 : v > 127 ? 127 : v;
  if (p.relu && v < 0) v = 0;
  return static_cast<int8_t>(v);
}

// Operand buffers for Semantics::compute, indexed like spec->operands (isa::extents order).
// `in[i]` must hold extents(instr).items[i].bytes bytes for every used read operand `i`;
// `out` the write operand's bytes (pre-filled with its current contents).
struct OperandBuffers {
  std::array<std::span<const uint8_t>, isa::kMaxOperands> in{};
  std::span<uint8_t> out{};
};

class Semantics {
 public:
  // Binds every instruction of `isa` to its Op by mnemonic and every field it needs by name
  // (InstrSpec::require_field); throws npuforge::Error naming the instruction and field when
  // the ISA lacks one. `isa` must outlive this object.
  explicit Semantics(const isa::Isa& isa);

  const isa::Isa& isa() const { return *isa_; }
  // O(1): table indexed by the spec. Inline: the checkers ask it for every instruction.
  Op op(const isa::Instruction& instr) const {
    const isa::InstrSpec* s = instr.spec;
    if (s == nullptr || s < specs_ || s >= specs_ + ops_.size()) foreign_spec();
    return ops_[static_cast<size_t>(s - specs_)];
  }
  isa::Queue queue(const isa::Instruction& instr) const { return instr.spec->queue; }

  // Empty when every used operand of `instr` lies inside its memory, else a message naming
  // the operand, the range and the memory size.
  std::string check_bounds(const isa::Instruction& instr, uint64_t sram_bytes,
                           uint64_t ddr_bytes) const;

  // Runs `instr` on `memory`. Throws AccessError (before changing anything) when an operand
  // is out of range. NOP/SYNC/HALT do nothing here (their ordering is the executor's job).
  void execute(const isa::Instruction& instr, Memory& memory) const;

  // Runs `instr` on caller-provided operand buffers (see OperandBuffers). Throws
  // npuforge::Error when a buffer has the wrong size.
  void compute(const isa::Instruction& instr, const OperandBuffers& buffers) const;
  // The same for a caller that has isa::extents(instr) at hand (a TLM model fetched the
  // operands by them): the list is not worked out a second time.
  void compute(const isa::Instruction& instr, const OperandBuffers& buffers, const isa::ExtentList& extents) const;

  // Index of the write operand (into extents()), if the instruction has one.
  std::optional<unsigned> write_operand(const isa::Instruction& instr) const;

  // Field slots, bound once. Public so that timing models read shapes the same way.
  struct DmaSlots { unsigned dst, src, rows, row_bytes, stride; };
  struct GemmSlots { unsigned dst, a, b, bias, m, n, k, scale, shift, relu, has_bias, qp, per_channel; };
  struct Im2colSlots { unsigned dst, src, h, w, c, kh, kw, sh, sw, pt, pl, pb, pr, dh, dw; };
  struct EltwiseSlots {
    unsigned dst, a, b, len, op, scale, shift, lo, hi;
    NamedCodes<EltwiseOp> ops;  // op's codes
  };
  struct PoolSlots {
    unsigned dst, src, h, w, c, wh, ww, sh, sw, pt, pl, pb, pr, mode, count_pad;
    NamedCodes<PoolMode> modes;  // mode's codes
  };
  struct LutSlots { unsigned dst, src, table, len; };
  struct MoveSlots { unsigned dst, src, len; };
  const DmaSlots& load_slots() const { return load_; }
  const DmaSlots& store_slots() const { return store_; }
  const GemmSlots& gemm_slots() const { return gemm_; }
  const Im2colSlots& im2col_slots() const { return im2col_; }
  const EltwiseSlots& eltwise_slots() const { return eltwise_; }
  const PoolSlots& pool_slots() const { return pool_; }
  const MoveSlots& move_slots() const { return move_; }
  const LutSlots& lut_slots() const { return lut_; }

 private:
  void run(Op op, const isa::Instruction& instr, std::span<const std::span<const uint8_t>> in,
           std::span<uint8_t> out) const;

  [[noreturn]] static void foreign_spec();

  const isa::Isa* isa_;
  const isa::InstrSpec* specs_;  // &isa.instructions()[0]
  std::vector<Op> ops_;  // index = spec - specs_
  std::vector<std::optional<unsigned>> write_operand_;
  DmaSlots load_{}, store_{};
  GemmSlots gemm_{};
  Im2colSlots im2col_{};
  EltwiseSlots eltwise_{};
  PoolSlots pool_{};
  MoveSlots move_{};
  LutSlots lut_{};
};

// Cycles one instruction occupies its queue, from the NPU config (shared by the sequential
// timing backend and available to other models): DMA = latency + ceil(bytes / bytes per
// cycle); GEMM = latency + ceil(m / mac_rows) * ceil(n / mac_cols) * k; vector ops =
// latency + ceil(bytes written / vector bytes per cycle); control = 1.
uint64_t instruction_cycles(const Semantics& sem, const isa::Instruction& instr,
                            const isa::NpuConfig& config);
// The same for a caller that has the instruction's extents (isa::extents(instr)) at hand: a
// vector op's written bytes are not worked out a second time.
uint64_t instruction_cycles(const Semantics& sem, const isa::Instruction& instr, const isa::NpuConfig& config,
                            const isa::ExtentList& extents);

}  // namespace npuforge::sim
