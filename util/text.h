#pragma once
// Escaping for the report formats the runner writes (JSON, JUnit XML) and a shell quoting
// helper for the one-line reproduction commands.
#include <array>
#include <cstdint>
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

}  // namespace npuforge::util
