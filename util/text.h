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

// fmt::format_int: its digits-in-pairs conversion, without the format-string path.
inline char* write_dec(char* out, uint64_t v) {
  const fmt::format_int d(v);
  std::memcpy(out, d.data(), d.size());
  return out + d.size();
}

inline char* write_signed_dec(char* out, int64_t v) {
  const fmt::format_int d(v);  // INT64_MIN included
  std::memcpy(out, d.data(), d.size());
  return out + d.size();
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
