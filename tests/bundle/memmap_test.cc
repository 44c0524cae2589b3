// Memory-map YAML: round trip, and errors naming file, line, buffer index and field.
#include "bundle/memmap.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>

#include "util/error.h"
#include "util/rng.h"

namespace npuforge::bundle {
namespace {

std::string error_of(std::string_view text) {
  try {
    MemMap::load_string(text, "map.yaml");
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

bool same(const MemMap& a, const MemMap& b) {
  if (a.header != b.header || a.sram_bytes != b.sram_bytes || a.alignment != b.alignment ||
      a.instructions != b.instructions || a.buffers.size() != b.buffers.size()) {
    return false;
  }
  for (size_t i = 0; i < a.buffers.size(); ++i) {
    const MemBuffer &x = a.buffers[i], &y = b.buffers[i];
    if (x.symbol != y.symbol || x.offset != y.offset || x.size != y.size || x.first != y.first ||
        x.last != y.last || x.producer != y.producer || x.consumers != y.consumers) {
      return false;
    }
  }
  return true;
}

TEST(MemMap, LoadsTheDocumentedExample) {
  const MemMap m = MemMap::load_string(
      "# npuforge memory map; seed: 42\n"
      "sram_bytes: 524288\nalignment: 64\ninstructions: 1000\nbuffers:\n"
      "  - {symbol: act0, offset: 0x400, size: 256, first: 3, last: 17, producer: 3, "
      "consumers: [5, 17]}\n"
      "  - {symbol: w0, offset: 1024, size: 64, first: 4, last: 4}\n",
      "ex.yaml");
  EXPECT_EQ(m.header, "npuforge memory map; seed: 42");
  EXPECT_EQ(m.sram_bytes, Bytes{524288});
  EXPECT_EQ(m.alignment, Bytes{64});
  EXPECT_EQ(m.instructions, 1000);
  ASSERT_EQ(m.buffers.size(), 2u);
  EXPECT_EQ(m.buffers[0].offset, SramAddr{0x400});
  EXPECT_EQ(m.buffers[0].consumers, (std::vector<int64_t>{5, 17}));
  EXPECT_EQ(m.buffers[0].producer, 3);
  EXPECT_EQ(m.buffers[1].producer, kNoProducer);
  EXPECT_TRUE(m.buffers[0].live_at(17));
  EXPECT_FALSE(m.buffers[0].live_at(18));
}

TEST(MemMap, RoundTripsRandomMapsThroughAFile) {
  Rng rng(7);
  const auto dir = std::filesystem::temp_directory_path();
  for (int round = 0; round < 20; ++round) {
    MemMap m;
    m.header = round % 2 ? "seed: 7\nprofile: configs/gen/default.yaml (fnv1a64 00ff)" : "";
    m.sram_bytes = Bytes{uint64_t(1) << rng.range(10, 20)};
    m.alignment = Bytes{uint64_t(1) << rng.range(0, 7)};
    m.instructions = rng.range(0, 5000);
    const int n = int(rng.range(0, 30));
    for (int i = 0; i < n; ++i) {
      MemBuffer b;
      b.symbol = (i % 5 == 0 ? "act" : "t") + std::to_string(i) + (i % 7 == 0 ? "@1" : "");
      b.offset = SramAddr{uint32_t(rng.below(1u << 20))};
      b.size = Bytes{1 + rng.below(4096)};
      b.first = rng.range(0, 100);
      b.last = b.first + rng.range(0, 100);
      if (rng.chance(0.7)) b.producer = b.first;
      for (int c = int(rng.range(0, 3)); c > 0; --c) b.consumers.push_back(rng.range(b.first, b.last));
      m.buffers.push_back(b);
    }
    // The pid keeps parallel runs from several build trees apart.
    const auto path = dir / ("npuforge_memmap_test_" + std::to_string(::getpid()) + "_" +
                             std::to_string(round) + ".yaml");
    m.save_file(path);
    const MemMap back = MemMap::load_file(path);
    std::filesystem::remove(path);
    ASSERT_TRUE(same(m, back)) << m.to_yaml() << "\n---\n" << back.to_yaml();
    EXPECT_EQ(back.to_yaml(), m.to_yaml());
  }
}

TEST(MemMap, QuotesSymbolsThatNeedIt) {
  MemMap m;
  m.sram_bytes = Bytes{1024};
  m.buffers.push_back(MemBuffer{"a: b, [c]", SramAddr{0}, Bytes{64}, 0, 1, kNoProducer, {}});
  const MemMap back = MemMap::load_string(m.to_yaml(), "q.yaml");
  ASSERT_EQ(back.buffers.size(), 1u);
  EXPECT_EQ(back.buffers[0].symbol, "a: b, [c]");
}

// The writer spells every number as fmt does, the widest ones included (a map built in memory
// is not bounded by the reader's ranges): the room it takes for a line is enough.
TEST(MemMap, WritesTheWidestNumbersAsFmtDoes) {
  MemMap m;
  m.header = "h";
  m.sram_bytes = Bytes{UINT64_MAX};
  m.alignment = Bytes{UINT64_MAX - 1};
  m.instructions = INT64_MIN;
  const int64_t lo = INT64_MIN, hi = INT64_MAX;
  m.buffers.push_back(MemBuffer{"wide9", SramAddr{UINT32_MAX}, Bytes{UINT64_MAX}, lo, hi, lo + 1, {lo, hi, 0, -1}});
  m.buffers.push_back(MemBuffer{"x", SramAddr{0}, Bytes{0}, 0, 0, kNoProducer, {}});
  EXPECT_EQ(m.to_yaml(),
            fmt::format("# h\nsram_bytes: {}\nalignment: {}\ninstructions: {}\nbuffers:\n"
                        "  - {{symbol: wide9, offset: 0x{:x}, size: {}, first: {}, last: {}, producer: {}, "
                        "consumers: [{}, {}, 0, -1]}}\n"
                        "  - {{symbol: x, offset: 0x0, size: 0, first: 0, last: 0}}\n",
                        UINT64_MAX, UINT64_MAX - 1, INT64_MIN, UINT32_MAX, UINT64_MAX, lo, hi, lo + 1, lo, hi));
}

TEST(MemMap, ErrorsNameFileBufferAndField) {
  const std::string head = "sram_bytes: 1024\nbuffers:\n  - {symbol: a, offset: 0, size: 64, first: 0, last: 1}\n";
  std::string e = error_of(head + "  - {symbol: b, offset: zz, size: 64, first: 0, last: 1}\n");
  EXPECT_NE(e.find("map.yaml:4"), std::string::npos) << e;
  EXPECT_NE(e.find("buffers[1].offset"), std::string::npos) << e;
  EXPECT_NE(e.find("'zz'"), std::string::npos) << e;

  e = error_of(head + "  - {symbol: b, offset: 0, first: 0, last: 1}\n");
  EXPECT_NE(e.find("buffers[1] has no 'size'"), std::string::npos) << e;

  e = error_of(head + "  - {symbol: b, offset: 0, size: 64, first: 5, last: 1}\n");
  EXPECT_NE(e.find("buffers[1].last"), std::string::npos) << e;

  e = error_of(head + "  - {symbol: b, offset: 0, size: 64, first: 0, last: 1, colour: red}\n");
  EXPECT_NE(e.find("unknown key 'colour'"), std::string::npos) << e;
  EXPECT_NE(e.find("buffers[1]"), std::string::npos) << e;

  e = error_of(head + "  - {symbol: b, offset: 0, size: 64, first: 0, last: 1, consumers: [1, x]}\n");
  EXPECT_NE(e.find("buffers[1].consumers[1]"), std::string::npos) << e;

  e = error_of("alignment: 64\nbuffers: []\n");
  EXPECT_NE(e.find("no 'sram_bytes'"), std::string::npos) << e;

  e = error_of("sram_bytes: 1024\nbuffers: {a: 1}\n");
  EXPECT_NE(e.find("'buffers' must be a list"), std::string::npos) << e;

  e = error_of("sram_bytes: [1024\n");
  EXPECT_NE(e.find("map.yaml:"), std::string::npos) << e;

  try {
    MemMap::load_file("/nonexistent/dir/x.memmap.yaml");
    ADD_FAILURE();
  } catch (const Error& ex) {
    EXPECT_NE(std::string(ex.what()).find("/nonexistent/dir/x.memmap.yaml"), std::string::npos);
  }
}

}  // namespace
}  // namespace npuforge::bundle
