#include <algorithm>
#include <array>
#include <cstdint>
#include <string_view>

#include "isa/assembler.h"
#include "util/text.h"

namespace npuforge::isa {
namespace {

// Each token mask as text: the queue names in the ISA's token bit order joined by '+',
// "none" for no bit.
constexpr std::array<std::string_view, size_t{1} << kNumQueues> kTokenText = {
    "none", "load", "compute", "load+compute", "store", "load+store", "compute+store", "load+compute+store"};

// Instruction::value, inline: it is read for every field of every line.
int64_t value_of(const LineStep& s, uint32_t raw) {
  if (!s.is_signed) return raw;
  if (s.width >= 32) return static_cast<int32_t>(raw);
  const uint32_t sign = 1u << (s.width - 1);
  return static_cast<int64_t>(raw ^ sign) - static_cast<int64_t>(sign);
}

// "0x" and the lowercase hex digits of v (fmt's "0x{:x}"); DDR addresses with "ddr:" first.
char* put_hex(char* out, uint32_t v) { return util::write_hex(util::write_text(out, "0x", 2), v); }
char* put_ddr_hex(char* out, uint32_t v) { return put_hex(util::write_text(out, "ddr:", 4), v); }

char* write_value(const LineStep& s, const Instruction& in, char* out) {
  const uint32_t raw = in.raw[s.slot];
  switch (s.text) {
    case LineStep::Text::Tokens:
      return util::write_text(out, kTokenText[raw & (kTokenText.size() - 1)]);
    case LineStep::Text::Enum: {
      const FieldSpec& f = in.spec->fields[s.slot];
      for (const auto& [name, code] : f.enum_values)
        if (code == raw) return util::write_text(out, name);
      if (!f.is_address()) return util::write_signed_dec(out, value_of(s, raw));
      if (f.kind == FieldKind::DdrAddr) return put_ddr_hex(out, raw);
      return put_hex(out, raw);
    }
    case LineStep::Text::DdrHex:
      return put_ddr_hex(out, raw);
    case LineStep::Text::Hex:
      return put_hex(out, raw);
    case LineStep::Text::Decimal:
      return util::write_signed_dec(out, value_of(s, raw));
  }
  return out;
}

LineStep step_of(const FieldSpec& f, unsigned slot, bool keyword) {
  LineStep s;
  s.slot = static_cast<uint8_t>(slot);
  s.text = f.kind == FieldKind::Tokens      ? LineStep::Text::Tokens
           : !f.enum_values.empty()         ? LineStep::Text::Enum
           : f.kind == FieldKind::DdrAddr   ? LineStep::Text::DdrHex
           : f.kind == FieldKind::SramAddr  ? LineStep::Text::Hex
                                            : LineStep::Text::Decimal;
  s.keyword = keyword;
  s.flag = f.kind == FieldKind::Flag;
  s.has_default = keyword && f.default_value.has_value();
  s.default_value = f.default_value.value_or(0);
  s.is_signed = f.is_signed;
  s.width = static_cast<uint8_t>(f.width);
  return s;
}

}  // namespace

void plan_disassembly(InstrSpec& spec) {
  spec.line.clear();
  // Numbers print a uint32 raw value (in hex with "ddr:0x") or its sign extension: 11 bytes
  // at most; 24 leaves room.
  constexpr size_t kLongestNumber = 24;
  size_t longest_tokens = 0;
  for (std::string_view t : kTokenText) longest_tokens = std::max(longest_tokens, t.size());
  size_t bytes = spec.mnemonic.size();
  auto add = [&](unsigned slot, bool keyword) {
    const FieldSpec& f = spec.fields[slot];
    spec.line.push_back(step_of(f, slot, keyword));
    size_t value = std::max(kLongestNumber, longest_tokens);
    for (const auto& e : f.enum_values) value = std::max(value, e.first.size());
    bytes += 2 + f.name.size() + 1 + value;  // ", name=value"
  };
  // Positional fields first; then keyword fields in table order, the token fields (slots 1
  // and 2) last: they read as "then synchronise", after what the instruction does.
  for (unsigned i = 0; i < spec.fields.size(); ++i)
    if (spec.fields[i].is_positional()) add(i, false);
  const auto n = static_cast<unsigned>(spec.fields.size());
  for (unsigned k = 3; k < n + 2; ++k) {
    const unsigned i = k < n ? k : k - n + 1;
    if (!spec.fields[i].is_positional()) add(i, true);
  }
  spec.max_line_bytes = bytes;
}

char* write_disassembly(char* out, const Instruction& in) {
  const InstrSpec& spec = *in.spec;
  out = util::write_text(out, spec.mnemonic);
  const FieldSpec* const fields = spec.fields.data();
  char separator = ' ';  // then ", ": the first field follows the mnemonic after a space
  for (const LineStep& s : spec.line) {
    if (s.has_default && value_of(s, in.raw[s.slot]) == s.default_value) continue;
    if (separator == ',') *out++ = ',';
    *out++ = ' ';
    separator = ',';
    if (s.keyword) {
      out = util::write_text(out, fields[s.slot].name);
      if (s.flag && in.raw[s.slot] == 1) continue;
      *out++ = '=';
    }
    out = write_value(s, in, out);
  }
  return out;
}

void append_disassembly(std::string& out, const Instruction& in) {
  const size_t at = out.size();
  out.resize(at + in.spec->max_line_bytes);
  out.resize(static_cast<size_t>(write_disassembly(out.data() + at, in) - out.data()));
}

std::string disassemble(const Instruction& in) {
  std::string out;
  append_disassembly(out, in);
  return out;
}

std::string disassemble_program(std::span<const Instruction> program) {
  std::string out;
  for (const auto& in : program) {
    append_disassembly(out, in);
    out += '\n';
  }
  return out;
}

}  // namespace npuforge::isa
