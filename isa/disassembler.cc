#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "isa/assembler.h"

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

// The writers below put a line's pieces inline, without a call per piece: a line is a
// dozen short names and numbers, and a memcpy call (or fmt's digits into a buffer of their
// own, then copied) per piece cost more than the bytes themselves.

// Copies n bytes (names, mnemonics: mostly under 16) with at most two overlapping loads
// and stores of one width, reading and writing nothing outside the n bytes.
inline char* put(char* out, const char* s, size_t n) {
  if (n >= 8) {
    if (n > 16) {
      std::memcpy(out, s, n);
    } else {
      uint64_t a, b;
      std::memcpy(&a, s, 8);
      std::memcpy(&b, s + n - 8, 8);
      std::memcpy(out, &a, 8);
      std::memcpy(out + n - 8, &b, 8);
    }
  } else if (n >= 4) {
    uint32_t a, b;
    std::memcpy(&a, s, 4);
    std::memcpy(&b, s + n - 4, 4);
    std::memcpy(out, &a, 4);
    std::memcpy(out + n - 4, &b, 4);
  } else if (n > 0) {
    out[0] = s[0];
    out[n / 2] = s[n / 2];
    out[n - 1] = s[n - 1];
  }
  return out + n;
}
inline char* put(char* out, std::string_view s) { return put(out, s.data(), s.size()); }

// Decimal digits of v (fmt's "{}"), two at a time from a table, straight to `out`.
char* put_dec(char* out, uint32_t v) {
  static constexpr char kPairs[] =
      "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
      "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
      "8081828384858687888990919293949596979899";
  unsigned n = 1;
  for (uint32_t t = v; t >= 10; t /= 10) ++n;
  char* const end = out + n;
  char* p = end;
  while (v >= 100) {
    const uint32_t r = v % 100;
    v /= 100;
    p -= 2;
    std::memcpy(p, kPairs + 2 * r, 2);
  }
  if (v >= 10) {
    std::memcpy(p - 2, kPairs + 2 * v, 2);
  } else {
    p[-1] = static_cast<char>('0' + v);
  }
  return end;
}

// Values are uint32 raw bits or their sign extension: |v| < 2^32.
char* put_signed_dec(char* out, int64_t v) {
  if (v < 0) {
    *out++ = '-';
    return put_dec(out, static_cast<uint32_t>(-v));
  }
  return put_dec(out, static_cast<uint32_t>(v));
}

// "0x" and the lowercase hex digits of v (fmt's "0x{:x}").
char* put_hex(char* out, uint32_t v) {
  out[0] = '0';
  out[1] = 'x';
  const unsigned n = (32 - static_cast<unsigned>(__builtin_clz(v | 1)) + 3) / 4;
  char* const end = out + 2 + n;
  for (char* p = end; p != out + 2; v >>= 4) *--p = "0123456789abcdef"[v & 15];
  return end;
}

char* put_ddr_hex(char* out, uint32_t v) {
  std::memcpy(out, "ddr:", 4);
  return put_hex(out + 4, v);
}

char* write_value(const LineStep& s, const Instruction& in, char* out) {
  const uint32_t raw = in.raw[s.slot];
  switch (s.text) {
    case LineStep::Text::Tokens:
      return put(out, kTokenText[raw & (kTokenText.size() - 1)]);
    case LineStep::Text::Enum: {
      const FieldSpec& f = in.spec->fields[s.slot];
      for (const auto& [name, code] : f.enum_values)
        if (code == raw) return put(out, name);
      if (!f.is_address()) return put_signed_dec(out, value_of(s, raw));
      if (f.kind == FieldKind::DdrAddr) return put_ddr_hex(out, raw);
      return put_hex(out, raw);
    }
    case LineStep::Text::DdrHex:
      return put_ddr_hex(out, raw);
    case LineStep::Text::Hex:
      return put_hex(out, raw);
    case LineStep::Text::Decimal:
      return put_signed_dec(out, value_of(s, raw));
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
  out = put(out, spec.mnemonic);
  const FieldSpec* const fields = spec.fields.data();
  char separator = ' ';  // then ", ": the first field follows the mnemonic after a space
  for (const LineStep& s : spec.line) {
    if (s.has_default && value_of(s, in.raw[s.slot]) == s.default_value) continue;
    if (separator == ',') *out++ = ',';
    *out++ = ' ';
    separator = ',';
    if (s.keyword) {
      out = put(out, fields[s.slot].name);
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
