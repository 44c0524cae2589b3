#pragma once
// Escaping for the report formats the runner writes (JSON, JUnit XML) and a shell quoting
// helper for the one-line reproduction commands.
#include <array>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace npuforge::util {

// A JSON string literal, quotes included. Control characters become \u00XX, bytes that are
// not well-formed UTF-8 \ufffd (JSON text is UTF-8).
std::string json_quote(std::string_view s);
// Text safe inside an XML attribute or element: & < > " ' escaped; characters XML 1.0
// forbids (control characters other than tab/newline/CR) become '?', since not even an
// entity may encode them.
std::string xml_escape(std::string_view s);
// A word the POSIX shell reads back unchanged (single-quoted when needed).
std::string shell_quote(std::string_view s);
std::string shell_join(const std::vector<std::string>& argv);
// Whether `s` is well-formed UTF-8 (no overlong forms, surrogates or code points past
// U+10FFFF). YAML text is Unicode: yaml-cpp's emitter replaces anything else with U+FFFD,
// so a reader of a YAML format must refuse such text rather than write back other bytes.
bool valid_utf8(std::string_view s);

// The lowercase hex digits of `v` ("1f" for 31, fmt's "{:x}"), written at the end of `buf`.
// Inline and without fmt's general path: a million-instruction program prints millions.
inline std::string_view hex_digits(uint64_t v, std::array<char, 16>& buf) {
  static constexpr char kHex[] = "0123456789abcdef";
  size_t n = buf.size();
  do {
    buf[--n] = kHex[v & 15];
    v >>= 4;
  } while (v != 0);
  return {buf.data() + n, buf.size() - n};
}

// Raw-buffer number writers for the program outputs (`npuforge gen` prints tens of millions
// of numbers): the digits go straight to `out`, which must have room (kMaxDecDigits + 1 for a
// negative number, 16 for hex); each returns the end of what it wrote. Same text as fmt's
// "{}" and "{:x}".
inline constexpr size_t kMaxDecDigits = 20;  // UINT64_MAX

inline char* write_dec(char* out, uint64_t v) {
  // Two digits per step from a 200-byte table: half the divisions of a digit-at-a-time loop.
  static constexpr char kPairs[] =
      "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
      "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
      "8081828384858687888990919293949596979899";
  char tmp[kMaxDecDigits];
  char* p = tmp + kMaxDecDigits;
  while (v >= 100) {
    const unsigned r = static_cast<unsigned>(v % 100) * 2;
    v /= 100;
    *--p = kPairs[r + 1];
    *--p = kPairs[r];
  }
  if (v >= 10) {
    const unsigned r = static_cast<unsigned>(v) * 2;
    *--p = kPairs[r + 1];
    *--p = kPairs[r];
  } else {
    *--p = static_cast<char>('0' + v);
  }
  const size_t n = static_cast<size_t>(tmp + kMaxDecDigits - p);
  for (size_t i = 0; i < n; ++i) out[i] = p[i];
  return out + n;
}

inline char* write_signed_dec(char* out, int64_t v) {
  if (v >= 0) return write_dec(out, static_cast<uint64_t>(v));
  *out++ = '-';
  return write_dec(out, ~static_cast<uint64_t>(v) + 1);  // INT64_MIN included
}

inline char* write_hex(char* out, uint64_t v) {
  std::array<char, 16> buf;
  const std::string_view d = hex_digits(v, buf);
  for (size_t i = 0; i < d.size(); ++i) out[i] = d[i];
  return out + d.size();
}

// Copies `s` to `out`; returns the end.
inline char* write_text(char* out, std::string_view s) {
  std::memcpy(out, s.data(), s.size());
  return out + s.size();
}

}  // namespace npuforge::util
