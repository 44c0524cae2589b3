#pragma once
// One decoded instruction and what it touches: encode/decode to the fixed-width word,
// field access, range/constraint validation and the byte extents of its operands.
#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "isa/isa.h"
#include "util/types.h"

namespace npuforge::isa {

struct Instruction {
  const InstrSpec* spec = nullptr;
  // Raw field bits, indexed like spec->fields (signed fields hold two's complement bits).
  std::array<uint32_t, kMaxFields> raw{};

  // Opcode set, defaults applied (a copy of spec.initial_raw: the generator makes one per
  // instruction).
  static Instruction make(const InstrSpec& spec) {
    Instruction in;
    in.spec = &spec;
    in.raw = spec.initial_raw;
    return in;
  }

  uint32_t get(unsigned slot) const { return raw[slot]; }
  int64_t value(unsigned slot) const;  // sign-extended where the field is signed
  void set(unsigned slot, uint32_t bits) { raw[slot] = bits; }
  void set_value(unsigned slot, int64_t v) {  // stores the low `width` bits
    const unsigned width = spec->fields[slot].width;
    raw[slot] = static_cast<uint32_t>(v) & (width >= 32 ? ~0u : (1u << width) - 1);
  }
  uint32_t wait_mask() const { return raw[kWaitSlot]; }
  uint32_t signal_mask() const { return raw[kSignalSlot]; }

  bool operator==(const Instruction& o) const { return spec == o.spec && raw == o.raw; }
};

// One operand's bytes: [addr, addr + bytes) in `space`. bytes == 0: operand unused.
struct Extent {
  unsigned operand = 0;  // index into spec->operands
  unsigned field = 0;    // slot of its address field
  Access access = Access::Read;
  Space space = Space::Sram;
  uint64_t addr = 0;
  uint64_t bytes = 0;
};

struct ExtentList {
  std::array<Extent, kMaxOperands> items{};
  unsigned count = 0;
  const Extent* begin() const { return items.data(); }
  const Extent* end() const { return items.data() + count; }
};

// Every operand's extent, used ones and unused (bytes == 0) alike, in spec order.
ExtentList extents(const Instruction& instr);
std::vector<Extent> reads(const Instruction& instr);   // used SRAM and DDR reads
std::vector<Extent> writes(const Instruction& instr);  // used SRAM and DDR writes

// Checks each field's range, enum values, token masks (no wait/signal on the own queue,
// none on control instructions) and the instruction's constraints. Returns an empty string
// when valid, else a message naming the field and the allowed range.
std::string validate(const Instruction& instr);

// The widest word the ISA loader accepts (1024 bits).
inline constexpr size_t kMaxWordBytes = 128;

// Fixed-width little-endian encoding: byte 0 holds bits 7..0. out.size() == width_bytes (bits
// past `out` are dropped); the one encoder: encode_program, to_readmemh, decode's reserved-bit
// check and gen's writers all call it. Reads spec->layout (plan_encoding).
void encode(const Instruction& instr, std::span<uint8_t> out);
// Throws npuforge::Error for an unknown opcode; `where` names the source in the message.
Instruction decode(const Isa& isa, std::span<const uint8_t> word, std::string_view where = "");

std::vector<uint8_t> encode_program(const Isa& isa, std::span<const Instruction> program);
// Throws npuforge::Error when the size is not a multiple of the width, or a word has an
// unknown opcode, reserved bits set or fails validate() (what the assembler rejects); the
// message names the word's index and byte offset, and the field.
std::vector<Instruction> decode_program(const Isa& isa, std::span<const uint8_t> bytes,
                                        std::string_view where);

// $readmemh text: one instruction per line, most significant hex digit first.
std::string to_readmemh(const Isa& isa, std::span<const Instruction> program,
                        std::string_view header_comment = "");

}  // namespace npuforge::isa
