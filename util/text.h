#pragma once
// Escaping for the report formats the runner writes (JSON, JUnit XML) and a shell quoting
// helper for the one-line reproduction commands.
#include <array>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

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

// Copies `s` to `out`; returns the end. Short texts (the names and mnemonics of a program
// line, mostly under 16 bytes) take at most two overlapping loads and stores of one width
// instead of a memcpy call; nothing outside the n bytes is read or written.
inline char* write_text(char* out, const char* s, size_t n) {
  if (n > 16) {
    std::memcpy(out, s, n);
  } else if (n >= 8) {
    uint64_t a, b;
    std::memcpy(&a, s, 8);
    std::memcpy(&b, s + n - 8, 8);
    std::memcpy(out, &a, 8);
    std::memcpy(out + n - 8, &b, 8);
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
inline char* write_text(char* out, std::string_view s) { return write_text(out, s.data(), s.size()); }

// Decimal digits of v, two at a time from a table, straight to `out` (fmt's digits go to a
// buffer of their own first, then need a copy).
inline char* write_dec(char* out, uint64_t v) {
  static constexpr char kPairs[] =
      "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
      "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
      "8081828384858687888990919293949596979899";
  // Digit count from the bit length (log10(2) ~ 1233 / 4096), corrected by one comparison.
  static constexpr uint64_t kPow10[] = {
      1u, 10u, 100u, 1000u, 10000u, 100000u, 1000000u, 10000000u, 100000000u, 1000000000u, 10000000000u,
      100000000000u, 1000000000000u, 10000000000000u, 100000000000000u, 1000000000000000u,
      10000000000000000u, 100000000000000000u, 1000000000000000000u, 10000000000000000000u};
  const auto bits = 64 - static_cast<unsigned>(__builtin_clzll(v | 1));
  const unsigned t = (bits * 1233) >> 12;  // floor(log10(2^bits)), <= 19
  const unsigned n = t + (t == 0 || v >= kPow10[t] ? 1u : 0u);  // t == 0: v < 8, one digit
  char* const end = out + n;
  char* p = end;
  while (v >= 100) {
    const auto r = static_cast<unsigned>(v % 100);
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

inline char* write_signed_dec(char* out, int64_t v) {
  if (v >= 0) return write_dec(out, static_cast<uint64_t>(v));
  *out++ = '-';
  return write_dec(out, uint64_t{0} - static_cast<uint64_t>(v));  // INT64_MIN included
}

inline char* write_hex(char* out, uint64_t v) {
  const unsigned n = (64 - static_cast<unsigned>(__builtin_clzll(v | 1)) + 3) / 4;
  char* const end = out + n;
  for (char* p = end; p != out; v >>= 4) *--p = "0123456789abcdef"[v & 15];
  return end;
}

}  // namespace npuforge::util
