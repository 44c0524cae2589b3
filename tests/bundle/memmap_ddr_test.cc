// Memory maps with DDR buffers (compiled programs): round trip, a map without them loads and
// saves as before, and malformed entries are errors naming the file, the entry and the field.
#include <gtest/gtest.h>

#include <string>

#include "bundle/memmap.h"
#include "util/error.h"

namespace npuforge::bundle {
namespace {

std::string error_of(std::string_view text) {
  try {
    MemMap::load_string(text, "seg0.memmap.yaml");
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

constexpr std::string_view kHead = "sram_bytes: 65536\nalignment: 64\ninstructions: 20\nbuffers: []\n";

TEST(MemMapDdr, RoundTripsEveryField) {
  MemMap m;
  m.header = "npuforge compile; model: m.onnx";
  m.sram_bytes = Bytes{65536};
  m.alignment = Bytes{64};
  m.instructions = 20;
  m.buffers.push_back({"conv1.out@t3", SramAddr{0x400}, Bytes{256}, 3, 17, 3, {5, 17}});
  MemDdrBuffer a;
  a.name = "/backbone/conv1/Conv_output_0";  // exporters' names need quoting in YAML
  a.region = "arena";
  a.offset = DdrAddr{0x123400};
  a.size = Bytes{4096};
  a.first = 0;
  a.last = 19;
  a.writers = {3, 9};
  a.readers = {15, 17};
  MemDdrBuffer b;
  b.name = "x: input";
  b.region = "input";
  b.offset = DdrAddr{0x40};
  b.size = Bytes{64};
  b.first = 2;
  b.last = 2;
  b.readers = {2};
  m.ddr_buffers = {a, b};
  const std::string text = m.to_yaml();
  const MemMap back = MemMap::load_string(text, "x.yaml");
  ASSERT_EQ(back.ddr_buffers.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    const MemDdrBuffer &x = m.ddr_buffers[i], &y = back.ddr_buffers[i];
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(x.region, y.region);
    EXPECT_EQ(x.offset, y.offset);
    EXPECT_EQ(x.size, y.size);
    EXPECT_EQ(x.first, y.first);
    EXPECT_EQ(x.last, y.last);
    EXPECT_EQ(x.writers, y.writers);
    EXPECT_EQ(x.readers, y.readers);
  }
  ASSERT_EQ(back.buffers.size(), 1u);
  EXPECT_EQ(back.buffers[0].symbol, "conv1.out@t3");
  EXPECT_EQ(back.to_yaml(), text);
  EXPECT_TRUE(back.ddr_buffers[0].live_at(19));
  EXPECT_FALSE(back.ddr_buffers[1].live_at(3));
}

TEST(MemMapDdr, AMapWithoutDdrBuffersSavesAsBefore) {
  const std::string text =
      "# npuforge gen; seed: 1\nsram_bytes: 1024\nalignment: 64\ninstructions: 3\nbuffers:\n"
      "  - {symbol: ld0, offset: 0x0, size: 64, first: 0, last: 1, producer: 0, consumers: [1]}\n";
  const MemMap m = MemMap::load_string(text, "g.yaml");
  EXPECT_TRUE(m.ddr_buffers.empty());
  EXPECT_EQ(m.to_yaml(), text);
  MemMap empty;
  empty.sram_bytes = Bytes{1024};
  EXPECT_EQ(empty.to_yaml(), "sram_bytes: 1024\nalignment: 1\ninstructions: 0\nbuffers: []\n");
}

TEST(MemMapDdr, MalformedEntriesNameTheField) {
  const std::string head(kHead);
  EXPECT_NE(error_of(head + "ddr_buffers: 3\n").find("'ddr_buffers' must be a list"), std::string::npos);
  EXPECT_NE(error_of(head + "ddr_buffers:\n  - {offset: 0, size: 4, first: 0, last: 1}\n").find("ddr_buffers[0] has no 'name'"),
            std::string::npos);
  const std::string e1 = error_of(head + "ddr_buffers:\n  - {name: t, offset: 0, size: 0, first: 0, last: 1}\n");
  EXPECT_NE(e1.find("seg0.memmap.yaml"), std::string::npos) << e1;
  EXPECT_NE(e1.find("ddr_buffers[0].size"), std::string::npos) << e1;
  EXPECT_NE(error_of(head + "ddr_buffers:\n  - {name: t, offset: 0, size: 4, first: 5, last: 1}\n")
                .find("'ddr_buffers[0].last' = 1 is before"),
            std::string::npos);
  EXPECT_NE(error_of(head + "ddr_buffers:\n  - {name: t, offset: 0, size: 4, first: 0, last: 3, writers: [2, 1]}\n")
                .find("'ddr_buffers[0].writers[1]' = 1 is below"),
            std::string::npos);
  EXPECT_NE(error_of(head + "ddr_buffers:\n  - {name: t, offset: 0, size: 4, first: 0, last: 3, readers: [7]}\n")
                .find("outside its lifetime [0, 3]"),
            std::string::npos);
  EXPECT_NE(error_of(head + "ddr_buffers:\n  - {name: t, offset: 0, size: 4, first: 0, last: 3, owner: x}\n")
                .find("owner"),
            std::string::npos);
  EXPECT_NE(error_of(head + "ddr_buffers:\n  - {name: t, offset: 0, size: 4, first: 0, last: 3, readers: 4}\n")
                .find("'ddr_buffers[0].readers' must be a list"),
            std::string::npos);
}

}  // namespace
}  // namespace npuforge::bundle
