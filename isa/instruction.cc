#include "isa/instruction.h"

#include <algorithm>
#include <bit>
#include <cstring>

#include <fmt/core.h>

#include "util/error.h"

namespace npuforge::isa {
namespace {

int64_t sign_extend(uint32_t bits, unsigned width) {
  if (width >= 32) return static_cast<int32_t>(bits);
  const uint32_t sign = 1u << (width - 1);
  return static_cast<int64_t>(bits ^ sign) - static_cast<int64_t>(sign);
}

uint32_t mask_of(unsigned width) { return width >= 32 ? 0xffffffffu : (1u << width) - 1; }

std::string format_value(const FieldSpec& f, int64_t v) {
  return f.kind == FieldKind::SramAddr || f.kind == FieldKind::DdrAddr ? fmt::format("{:#x}", v)
                                                                       : std::to_string(v);
}

uint32_t get_bits(std::span<const uint8_t> in, unsigned lsb, unsigned width) {
  uint64_t v = 0;
  const size_t first = lsb / 8;
  for (size_t i = 0; i < 5 && first + i < in.size(); ++i) v |= static_cast<uint64_t>(in[first + i]) << (8 * i);
  return static_cast<uint32_t>(v >> (lsb % 8)) & mask_of(width);
}

}  // namespace

int64_t Instruction::value(unsigned slot) const {
  const FieldSpec& f = spec->fields[slot];
  return f.is_signed ? sign_extend(raw[slot], f.width) : raw[slot];
}

// Called once per simulated instruction (sim/sc_model) and per generated one: the operand
// range and the count live in registers, written once, not reloaded from the spec and the
// list after each out-of-line evaluation (the compiler cannot tell that it leaves them be).
ExtentList extents(const Instruction& instr) {
  ExtentList list;
  const OperandSpec* const ops = instr.spec->operands.data();
  const auto n = static_cast<unsigned>(instr.spec->operands.size());
  const uint32_t* const raw = instr.raw.data();
  for (unsigned i = 0; i < n; ++i) {
    const OperandSpec& op = ops[i];
    const int64_t bytes = op.bytes.eval(raw);
    list.items[i] = Extent{i, op.field, op.access, op.space, raw[op.field], bytes > 0 ? static_cast<uint64_t>(bytes) : 0};
  }
  list.count = n;
  return list;
}

static std::vector<Extent> used_extents(const Instruction& instr, Access access) {
  std::vector<Extent> out;
  for (const Extent& e : extents(instr))
    if (e.access == access && e.bytes > 0) out.push_back(e);
  return out;
}

std::vector<Extent> reads(const Instruction& instr) { return used_extents(instr, Access::Read); }
std::vector<Extent> writes(const Instruction& instr) { return used_extents(instr, Access::Write); }

static std::string validate_tokens(const Instruction& instr) {
  const InstrSpec& s = *instr.spec;
  for (unsigned slot : {kWaitSlot, kSignalSlot}) {
    const uint32_t mask = instr.raw[slot];
    if (s.queue == Queue::Control && mask != 0)
      return fmt::format("{}: field '{}' must be none: control instructions take no tokens", s.mnemonic,
                         s.fields[slot].name);
    const unsigned own = static_cast<unsigned>(s.queue);
    if (s.queue != Queue::Control && (mask >> own) & 1u)
      return fmt::format("{}: field '{}' names its own queue '{}'; tokens go between different queues",
                         s.mnemonic, s.fields[slot].name, to_string(s.queue));
  }
  return {};
}

std::string validate(const Instruction& instr) {
  const InstrSpec& s = *instr.spec;
  for (unsigned i = 0; i < s.fields.size(); ++i) {
    const FieldSpec& f = s.fields[i];
    if ((instr.raw[i] & ~mask_of(f.width)) != 0)
      return fmt::format("{}: field '{}' value {:#x} does not fit in {} bits", s.mnemonic, f.name, instr.raw[i], f.width);
    const int64_t v = instr.value(i);
    if (v < f.min || v > f.max)
      return fmt::format("{}: field '{}' = {} is out of range [{}, {}]", s.mnemonic, f.name, format_value(f, v),
                         format_value(f, f.min), format_value(f, f.max));
    if (!f.enum_values.empty()) {
      bool known = false;
      for (const auto& [name, code] : f.enum_values) known = known || code == instr.raw[i];
      if (!known) return fmt::format("{}: field '{}' = {} is not one of its named values", s.mnemonic, f.name, v);
    }
  }
  if (instr.raw[kOpcodeSlot] != s.opcode)
    return fmt::format("{}: opcode field {:#x} does not match the instruction's opcode {:#x}", s.mnemonic,
                       instr.raw[kOpcodeSlot], s.opcode);
  if (auto t = validate_tokens(instr); !t.empty()) return t;
  for (const Expr& c : s.constraints)
    if (c.eval(instr.raw.data()) == 0) return fmt::format("{}: constraint '{}' does not hold", s.mnemonic, c.text());
  return {};
}

void plan_encoding(InstrSpec& spec) {
  spec.layout.clear();
  for (unsigned i = 0; i < spec.fields.size(); ++i) {
    const FieldSpec& f = spec.fields[i];
    spec.layout.push_back({static_cast<uint16_t>(i), static_cast<uint16_t>(f.lsb / 64), f.lsb % 64, mask_of(f.width)});
  }
}

void encode(const Instruction& instr, std::span<uint8_t> out) {
  // The word as little-endian 64-bit limbs (the loader caps the width at 1024 bits), one
  // spare for a field that straddles the last: a field is two ORs, not a loop over bytes.
  std::array<uint64_t, kMaxWordBytes / 8 + 1> limb{};
  for (const BitSlot& f : instr.spec->layout) {
    const uint64_t v = instr.raw[f.slot] & f.mask;
    limb[f.limb] |= v << f.shift;
    if (f.shift > 32) limb[f.limb + 1] |= v >> (64 - f.shift);  // straddles two limbs
  }
  // Bits past `out` are dropped, bytes past the word are zero.
  const size_t n = std::min(out.size(), kMaxWordBytes);
  if constexpr (std::endian::native == std::endian::little) {
    std::memcpy(out.data(), limb.data(), n);
  } else {
    for (size_t b = 0; b < n; ++b) out[b] = static_cast<uint8_t>(limb[b / 8] >> (8 * (b % 8)));
  }
  std::fill(out.begin() + static_cast<std::ptrdiff_t>(n), out.end(), uint8_t{0});
}

Instruction decode(const Isa& isa, std::span<const uint8_t> word, std::string_view where) {
  if (word.size() != isa.width_bytes())
    throw Error(fmt::format("{}instruction word of {} bytes, expected {}", where.empty() ? "" : fmt::format("{}: ", where),
                            word.size(), isa.width_bytes()));
  const FieldSpec& opf = isa.opcode_field();
  const uint32_t opcode = get_bits(word, opf.lsb, opf.width);
  const InstrSpec* spec = isa.by_opcode(opcode);
  if (!spec) throw Error(fmt::format("{}unknown opcode {:#04x}", where.empty() ? "" : fmt::format("{}: ", where), opcode));
  Instruction in;
  in.spec = spec;
  for (unsigned i = 0; i < spec->fields.size(); ++i) in.raw[i] = get_bits(word, spec->fields[i].lsb, spec->fields[i].width);
  // Bits outside every field would be dropped by a re-encode: refuse them instead.
  std::array<uint8_t, kMaxWordBytes> buffer;
  const std::span<uint8_t> again(buffer.data(), word.size());
  encode(in, again);
  for (size_t b = 0; b < word.size(); ++b)
    if (again[b] != word[b])
      throw Error(fmt::format("{}{}: reserved bits set in byte {} ({:#04x}, expected {:#04x})",
                              where.empty() ? "" : fmt::format("{}: ", where), spec->mnemonic, b, word[b], again[b]));
  return in;
}

std::vector<uint8_t> encode_program(const Isa& isa, std::span<const Instruction> program) {
  const size_t w = isa.width_bytes();
  std::vector<uint8_t> out(program.size() * w);
  for (size_t i = 0; i < program.size(); ++i) encode(program[i], std::span<uint8_t>(out.data() + i * w, w));
  return out;
}

std::vector<Instruction> decode_program(const Isa& isa, std::span<const uint8_t> bytes, std::string_view where) {
  const size_t w = isa.width_bytes();
  if (bytes.size() % w != 0)
    throw Error(fmt::format("{}: truncated binary: {} bytes is not a multiple of the {}-byte instruction width "
                            "({} whole instructions and {} bytes left over)",
                            where, bytes.size(), w, bytes.size() / w, bytes.size() % w));
  std::vector<Instruction> out;
  out.reserve(bytes.size() / w);
  for (size_t i = 0; i < bytes.size() / w; ++i) {
    const std::string at = fmt::format("{}: instruction {} (byte offset {})", where, i, i * w);
    out.push_back(decode(isa, bytes.subspan(i * w, w), at));
    // A binary gets no more than its source would: every word the assembler would refuse
    // (a field out of range, an unnamed enum value, a token to its own queue, a broken
    // constraint) is refused here too, so `sim`/`disasm` never run what `asm` cannot make.
    if (std::string err = validate(out.back()); !err.empty()) throw Error(fmt::format("{}: {}", at, err));
  }
  return out;
}

std::string to_readmemh(const Isa& isa, std::span<const Instruction> program, std::string_view header_comment) {
  std::string out;
  if (!header_comment.empty()) out += fmt::format("// {}\n", header_comment);
  out += fmt::format("// {} instructions, {} bits each, most significant digit first\n", program.size(),
                     isa.width_bits());
  std::vector<uint8_t> word(isa.width_bytes());
  static constexpr char kHex[] = "0123456789abcdef";
  for (const auto& in : program) {
    encode(in, word);
    for (size_t b = word.size(); b-- > 0;) {
      out += kHex[word[b] >> 4];
      out += kHex[word[b] & 15];
    }
    out += '\n';
  }
  return out;
}

}  // namespace npuforge::isa
