// The fast memory-map reader (bundle/memmap_fast.h) against yaml-cpp: the same MemMap for
// every map the generator's writer produces, and every other text handed to yaml-cpp, whose
// errors still name the file, line, buffer and field.
#include "bundle/memmap_fast.h"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <string>

#include "util/error.h"
#include "util/rng.h"

namespace npuforge::bundle {
namespace {

bool same(const MemMap& a, const MemMap& b) {
  if (a.header != b.header || a.sram_bytes != b.sram_bytes || a.alignment != b.alignment ||
      a.instructions != b.instructions || a.buffers.size() != b.buffers.size() || !b.ddr_buffers.empty())
    return false;
  for (size_t i = 0; i < a.buffers.size(); ++i) {
    const MemBuffer &x = a.buffers[i], &y = b.buffers[i];
    if (x.symbol != y.symbol || x.offset != y.offset || x.size != y.size || x.first != y.first ||
        x.last != y.last || x.producer != y.producer || x.consumers != y.consumers)
      return false;
  }
  return true;
}

// A map like the generator's, with the corner cases of each field drawn now and then.
MemMap random_map(Rng& rng) {
  static const char* kPrefix[] = {"ld", "st", "g", "ic", "e", "p", "mv", "lut", "nop", "sync"};
  MemMap m;
  m.header = rng.below(4) ? "npuforge memory map; seed: 7; profile: default.yaml (fnv1a64 0123abcd)" : "";
  if (!m.header.empty() && rng.below(5) == 0) m.header += "\nsecond line";  // (an empty first line is lost by both readers)
  m.sram_bytes = Bytes{rng.below(3) ? 524288 : (uint64_t{1} << 32)};
  m.alignment = Bytes{uint64_t{1} << rng.below(10)};
  m.instructions = static_cast<int64_t>(rng.below(100000));
  const size_t n = rng.below(4) ? rng.below(50) : 0;
  for (size_t i = 0; i < n; ++i) {
    MemBuffer b;
    b.symbol = std::string(kPrefix[rng.below(10)]) + std::to_string(rng.below(100000));
    if (rng.below(3) == 0) b.symbol += "@" + std::to_string(rng.below(20));
    b.offset = SramAddr{rng.below(3) ? uint32_t(rng.below(1 << 20)) : UINT32_MAX};
    b.size = Bytes{rng.below(3) ? 1 + rng.below(4096) : UINT32_MAX};
    b.first = static_cast<int64_t>(rng.below(1000));
    b.last = b.first + static_cast<int64_t>(rng.below(1000));
    if (rng.below(4)) b.producer = b.first;
    for (int64_t c = b.first + 1; c <= b.last && b.consumers.size() < 5; c += 1 + int64_t(rng.below(300)))
      b.consumers.push_back(c);
    m.buffers.push_back(b);
  }
  return m;
}

TEST(MemMapFast, AgreesWithYamlCppOnWrittenMaps) {
  Rng rng(15);
  for (int i = 0; i < 300; ++i) {
    const MemMap m = random_map(rng);
    const std::string text = m.to_yaml();
    const auto fast = parse_generated_memmap(text);
    ASSERT_TRUE(fast.has_value()) << text;
    const MemMap slow = MemMap::load_yaml_string(text, "map.yaml");
    EXPECT_TRUE(same(*fast, slow)) << text;
    EXPECT_TRUE(same(*fast, m)) << text;
  }
}

TEST(MemMapFast, PlainSymbolsAreWhatTheEmitterWritesUnquoted) {
  for (const char* s : {"ld0", "st12", "g3@1", "sync99@12", "lut7", "nop0@0"}) {
    YAML::Emitter e;
    e << s;
    EXPECT_EQ(std::string(e.c_str()), s);
    EXPECT_TRUE(is_plain_symbol(s)) << s;
  }
  for (const char* s : {"", "ld", "3ld", "ld3@", "@ld3", "Ld3", "ld3 x", "ld-3", "true", "null", "ld3@1@2", "a:1"})
    EXPECT_FALSE(is_plain_symbol(s)) << s;
  // A symbol that needs quotes still round-trips (through the emitter and yaml-cpp).
  MemMap m;
  m.sram_bytes = Bytes{1024};
  m.buffers.push_back({"needs: quotes", SramAddr{0}, Bytes{64}, 0, 1, 0, {1}});
  const std::string text = m.to_yaml();
  EXPECT_FALSE(parse_generated_memmap(text).has_value());
  EXPECT_EQ(MemMap::load_string(text, "map.yaml").buffers.at(0).symbol, "needs: quotes");
}

std::string error_of(std::string_view text) {
  try {
    MemMap::load_string(text, "map.yaml");
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(MemMapFast, OtherTextGoesToYamlCppAndItsErrors) {
  const std::string head = "# h\nsram_bytes: 1024\nalignment: 64\ninstructions: 10\nbuffers:\n";
  const std::string good = "  - {symbol: ld1, offset: 0x40, size: 64, first: 0, last: 3, producer: 0, consumers: [3]}\n";
  ASSERT_TRUE(parse_generated_memmap(head + good).has_value());
  // Valid YAML outside the subset: same map through yaml-cpp.
  for (const std::string& text :
       {head + "  - {symbol: ld1, offset: 64, size: 64, first: 0, last: 3, producer: 0, consumers: [3]}\n",
        head + "  - {symbol: \"ld1\", offset: 0x40, size: 64, first: 0, last: 3, producer: 0, consumers: [3]}\n",
        head + "  - {offset: 0x40, symbol: ld1, size: 64, first: 0, last: 3, producer: 0, consumers: [3]}\n",
        head + "  - {symbol: ld1, offset: 0x40, size: 64, first: 0, last: 3, producer: 0, consumers: [3]}  # c\n",
        "# h\r\nsram_bytes: 1024\r\nalignment: 64\r\ninstructions: 10\r\nbuffers:\r\n" +
            std::string("  - {symbol: ld1, offset: 0x40, size: 64, first: 0, last: 3, producer: 0, consumers: [3]}\r\n"),
        head + good + "ddr_buffers: []\n"}) {
    EXPECT_FALSE(parse_generated_memmap(text).has_value()) << text;
    const MemMap m = MemMap::load_string(text, "map.yaml");
    ASSERT_EQ(m.buffers.size(), 1u) << text;
    EXPECT_EQ(m.buffers[0].offset.value, 64u);
    EXPECT_EQ(m.buffers[0].consumers, std::vector<int64_t>{3});
  }
  // Bad values: the fast reader declines, yaml-cpp names file, line, buffer and field.
  const std::string bad_size = head + good + "  - {symbol: st2, offset: 0x80, size: 0, first: 1, last: 2}\n";
  EXPECT_FALSE(parse_generated_memmap(bad_size).has_value());
  EXPECT_NE(error_of(bad_size).find("map.yaml:7"), std::string::npos) << error_of(bad_size);
  EXPECT_NE(error_of(bad_size).find("buffers[1].size"), std::string::npos) << error_of(bad_size);
  const std::string bad_life = head + "  - {symbol: st2, offset: 0x80, size: 64, first: 5, last: 2}\n";
  EXPECT_FALSE(parse_generated_memmap(bad_life).has_value());
  EXPECT_NE(error_of(bad_life).find("buffers[0].last"), std::string::npos) << error_of(bad_life);
  const std::string octal = head + "  - {symbol: st2, offset: 0x80, size: 010, first: 1, last: 2}\n";
  EXPECT_FALSE(parse_generated_memmap(octal).has_value());
  EXPECT_EQ(MemMap::load_string(octal, "map.yaml").buffers.at(0).size.value, 8u);  // as yaml-cpp + stoll read it
  const std::string truncated = head + "  - {symbol: st2, offset: 0x80, size: 64, first: 1, last: 2";
  EXPECT_FALSE(parse_generated_memmap(truncated).has_value());
  EXPECT_NE(error_of(truncated).find("map.yaml"), std::string::npos) << error_of(truncated);
  const std::string too_big = "sram_bytes: 99999999999\nalignment: 64\ninstructions: 10\nbuffers: []\n";
  EXPECT_FALSE(parse_generated_memmap(too_big).has_value());
  EXPECT_NE(error_of(too_big).find("sram_bytes"), std::string::npos) << error_of(too_big);
}

}  // namespace
}  // namespace npuforge::bundle
