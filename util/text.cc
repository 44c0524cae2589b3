#include "util/text.h"

#include <fmt/core.h>

namespace npuforge::util {

namespace {

// Bytes of the well-formed UTF-8 sequence at the start of `s` (non-empty), 0 if there is none.
// The lead byte gives the length and the allowed range of the second byte (Unicode 15,
// table 3-7), which excludes overlong forms, surrogates and values past U+10FFFF.
size_t utf8_sequence_length(std::string_view s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const unsigned char c = p[0];
  if (c < 0x80) return 1;
  size_t len;
  unsigned char lo = 0x80, hi = 0xbf;
  if (c >= 0xc2 && c <= 0xdf) len = 2;
  else if (c == 0xe0) len = 3, lo = 0xa0;
  else if (c >= 0xe1 && c <= 0xec) len = 3;
  else if (c == 0xed) len = 3, hi = 0x9f;
  else if (c >= 0xee && c <= 0xef) len = 3;
  else if (c == 0xf0) len = 4, lo = 0x90;
  else if (c >= 0xf1 && c <= 0xf3) len = 4;
  else if (c == 0xf4) len = 4, hi = 0x8f;
  else return 0;
  if (s.size() < len || p[1] < lo || p[1] > hi) return 0;
  for (size_t k = 2; k < len; ++k)
    if (p[k] < 0x80 || p[k] > 0xbf) return 0;
  return len;
}

}  // namespace

// JSON text must be UTF-8: a byte that starts no well-formed sequence becomes U+FFFD, as
// decoders do, instead of making the whole report unreadable.
std::string json_quote(std::string_view s) {
  std::string out = "\"";
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (c < 0x20) {
          out += fmt::format("\\u{:04x}", c);
        } else if (const size_t len = utf8_sequence_length(s.substr(i)); len == 0) {
          out += "\\ufffd";
        } else {
          out.append(s.substr(i, len));
          i += len;
          continue;
        }
    }
    ++i;
  }
  return out + "\"";
}

std::string xml_escape(std::string_view s) {
  std::string out;
  for (unsigned char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default:
        if (c < 0x20 && c != '\t' && c != '\n' && c != '\r') {
          out += '?';
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out;
}

std::string shell_quote(std::string_view s) {
  if (s.empty()) return "''";
  bool plain = true;
  for (char c : s) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '-' || c == '_' || c == '.' || c == '/' || c == '=' || c == ':' ||
                    c == ',' || c == '+' || c == '@' || c == '%';
    plain = plain && ok;
  }
  if (plain) return std::string(s);
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

std::string shell_join(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& a : argv) {
    if (!out.empty()) out += ' ';
    out += shell_quote(a);
  }
  return out;
}

bool valid_utf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    const size_t len = utf8_sequence_length(s.substr(i));
    if (len == 0) return false;
    i += len;
  }
  return true;
}

}  // namespace npuforge::util
