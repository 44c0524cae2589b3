// place_symbols: the allocator places an assembly program's symbols in program order.
#include <gtest/gtest.h>

#include <fmt/core.h>

#include "allocator/place_symbols.h"
#include "util/error.h"
#include "util/rng.h"

namespace npuforge::allocator {
namespace {

isa::NpuConfig small_npu() {
  isa::NpuConfig npu;
  npu.sram_bytes = Bytes{4096};
  npu.alignment = Bytes{64};
  return npu;
}

TEST(PlaceSymbols, DependentOperandsShareAnAddressAndDeadBytesAreReused) {
  auto prog = isa::assemble(isa::builtin_isa(),
                            "load %a, ddr:0x0, rows=1, row_bytes=64\n"
                            "move %b, %a, len=64\n"
                            "move %c, %b, len=64\n",
                            "t.s");
  const bundle::MemMap map = place_symbols(prog, small_npu());
  ASSERT_EQ(map.buffers.size(), 3u);
  const auto& move = isa::builtin_isa().require("move");
  const unsigned dst = move.require_field("dst"), src = move.require_field("src");
  EXPECT_EQ(prog.instrs[1].get(src), map.buffers[0].offset.value);  // %a: LOAD's dst is MOVE's src
  EXPECT_EQ(prog.instrs[2].get(src), prog.instrs[1].get(dst));      // %b
  EXPECT_EQ(map.buffers[2].offset.value, map.buffers[0].offset.value);  // %a died at 1: %c takes its node
  EXPECT_EQ(map.buffers[1].first, 1);
  EXPECT_EQ(map.buffers[1].last, 2);
  EXPECT_TRUE(prog.symbol_refs.empty());
}

TEST(PlaceSymbols, Errors) {
  auto read_first = isa::assemble(isa::builtin_isa(), "move %b, %a, len=64\n", "t.s");
  EXPECT_THROW(place_symbols(read_first, small_npu()), Error);
  auto too_big = isa::assemble(isa::builtin_isa(), "load %a, ddr:0x0, rows=1, row_bytes=8192\n", "t.s");
  try {
    place_symbols(too_big, small_npu());
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no room for symbol '%a'"), std::string::npos) << e.what();
  }
}

// Random chains of moves: no two buffers whose lifetimes intersect share a byte.
TEST(PlaceSymbols, RandomProgramsNeverOverlapLiveBuffers) {
  Rng rng(5);
  for (int trial = 0; trial < 300; ++trial) {
    std::string text;
    int next = 0;
    std::vector<int> live;
    for (int i = 0; i < 40; ++i) {
      if (live.empty() || rng.chance(0.3)) {
        text += fmt::format("load %s{}, ddr:0x0, rows=1, row_bytes={}\n", next, rng.range(1, 300));
        live.push_back(next++);
      } else {
        const size_t k = rng.below(live.size());
        text += fmt::format("move %s{}, %s{}, len={}\n", next, live[k], 1);
        if (rng.chance(0.5)) live.erase(live.begin() + static_cast<long>(k));
        live.push_back(next++);
      }
    }
    auto prog = isa::assemble(isa::builtin_isa(), text, "r.s");
    const bundle::MemMap map = place_symbols(prog, small_npu(), {Policy::BestFit, ""});
    for (size_t a = 0; a < map.buffers.size(); ++a)
      for (size_t b = a + 1; b < map.buffers.size(); ++b) {
        const auto &x = map.buffers[a], &y = map.buffers[b];
        const bool live_together = x.first <= y.last && y.first <= x.last;
        const bool share = x.offset.value < y.offset.value + y.size.value && y.offset.value < x.offset.value + x.size.value;
        ASSERT_FALSE(live_together && share) << x.symbol << " and " << y.symbol << "\n" << text;
      }
  }
}

}  // namespace
}  // namespace npuforge::allocator
