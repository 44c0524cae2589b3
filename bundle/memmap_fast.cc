#include "bundle/memmap_fast.h"

#include <cstdint>
#include <string>

namespace npuforge::bundle {
namespace {

constexpr int64_t kMaxIndex = INT64_MAX / 2;  // as the yaml-cpp reader

bool is_lower(char c) { return c >= 'a' && c <= 'z'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }

// A cursor over the text; every method consumes only on success.
class Cursor {
 public:
  explicit Cursor(std::string_view text) : t_(text) {}
  bool done() const { return p_ == t_.size(); }
  bool lit(std::string_view s) {
    if (t_.substr(p_, s.size()) != s) return false;
    p_ += s.size();
    return true;
  }
  // A decimal integer as the writer prints it (no sign, no leading zeros), within [min, max].
  bool dec(int64_t& v, int64_t min, int64_t max) {
    size_t q = p_;
    uint64_t x = 0;
    while (q < t_.size() && is_digit(t_[q]) && q - p_ < 18) x = x * 10 + uint64_t(t_[q++] - '0');
    if (q == p_ || (q < t_.size() && is_digit(t_[q])) || (t_[p_] == '0' && q - p_ > 1)) return false;
    if (int64_t(x) < min || int64_t(x) > max) return false;
    v = int64_t(x);
    p_ = q;
    return true;
  }
  // "0x" and lowercase hex digits, within [0, max].
  bool hex(int64_t& v, int64_t max) {
    if (!lit("0x")) return false;
    size_t q = p_;
    uint64_t x = 0;
    for (; q < t_.size() && q - p_ < 15; ++q) {
      const char c = t_[q];
      if (is_digit(c)) x = x * 16 + uint64_t(c - '0');
      else if (c >= 'a' && c <= 'f') x = x * 16 + uint64_t(c - 'a' + 10);
      else break;
    }
    if (q == p_ || int64_t(x) > max) {
      p_ -= 2;
      return false;
    }
    v = int64_t(x);
    p_ = q;
    return true;
  }
  bool symbol(std::string& s) {
    size_t q = p_;
    while (q < t_.size() && t_[q] != ',' && t_[q] != '\n') ++q;
    if (!is_plain_symbol(t_.substr(p_, q - p_))) return false;
    s.assign(t_.substr(p_, q - p_));
    p_ = q;
    return true;
  }
  size_t pos() const { return p_; }
  void skip_to(size_t p) { p_ = p; }

 private:
  std::string_view t_;
  size_t p_ = 0;
};

// "  - {symbol: ld3, offset: 0x40, size: 256, first: 3, last: 17, producer: 3, consumers: [5, 17]}\n"
bool parse_buffer(Cursor& c, MemBuffer& b) {
  int64_t offset = 0, size = 0;
  if (!(c.lit("  - {symbol: ") && c.symbol(b.symbol) && c.lit(", offset: ") && c.hex(offset, UINT32_MAX) &&
        c.lit(", size: ") && c.dec(size, 1, UINT32_MAX) && c.lit(", first: ") && c.dec(b.first, 0, kMaxIndex) &&
        c.lit(", last: ") && c.dec(b.last, 0, kMaxIndex) && b.last >= b.first))
    return false;
  b.offset = SramAddr{uint32_t(offset)};
  b.size = Bytes{uint64_t(size)};
  if (c.lit(", producer: ") && !c.dec(b.producer, 0, kMaxIndex)) return false;
  if (c.lit(", consumers: [")) {
    do {
      int64_t v = 0;
      if (!c.dec(v, 0, kMaxIndex)) return false;
      b.consumers.push_back(v);
    } while (c.lit(", "));
    if (!c.lit("]")) return false;
  }
  return c.lit("}\n");
}

}  // namespace

bool is_plain_symbol(std::string_view s) {
  size_t i = 0;
  while (i < s.size() && is_lower(s[i])) ++i;
  if (i == 0 || i == s.size() || !is_digit(s[i])) return false;
  while (i < s.size() && is_digit(s[i])) ++i;
  if (i == s.size()) return true;
  if (s[i++] != '@' || i == s.size()) return false;
  while (i < s.size() && is_digit(s[i])) ++i;
  return i == s.size();
}

std::optional<MemMap> parse_generated_memmap(std::string_view text) {
  if (text.find('\r') != std::string_view::npos) return std::nullopt;
  MemMap m;
  Cursor c(text);
  // The header: leading "# " lines (the writer puts "# " before each line of MemMap::header).
  while (c.lit("#")) {
    const size_t end = text.find('\n', c.pos());
    if (end == std::string_view::npos) return std::nullopt;
    std::string_view line = text.substr(c.pos(), end - c.pos());
    if (!line.empty() && line.front() == ' ') line.remove_prefix(1);
    if (!m.header.empty()) m.header += '\n';
    m.header += line;
    c.skip_to(end + 1);
  }
  int64_t sram = 0, align = 0;
  if (!(c.lit("sram_bytes: ") && c.dec(sram, 1, int64_t{1} << 32) && c.lit("\nalignment: ") &&
        c.dec(align, 1, int64_t{1} << 31) && c.lit("\ninstructions: ") && c.dec(m.instructions, 0, kMaxIndex) &&
        c.lit("\n")))
    return std::nullopt;
  m.sram_bytes = Bytes{uint64_t(sram)};
  m.alignment = Bytes{uint64_t(align)};
  if (c.lit("buffers: []\n")) return c.done() ? std::optional<MemMap>(std::move(m)) : std::nullopt;
  if (!c.lit("buffers:\n")) return std::nullopt;
  while (!c.done()) {
    MemBuffer b;
    if (!parse_buffer(c, b)) return std::nullopt;
    m.buffers.push_back(std::move(b));
  }
  return m;
}

}  // namespace npuforge::bundle
