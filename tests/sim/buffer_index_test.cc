// The shadow's BufferIndex against a brute force over the buffers: live_at (ids, and the
// holders with their first instruction and end) for queries in increasing instruction order,
// in three interleaved streams a few thousand instructions apart (as the queues of a run
// come), and in random order (each query far from the unit's last one: the hint's gallop
// both ways), and with the sole-holder cache. The overlap candidates: the index's lists
// against the general sweep's and a brute force.
#include <algorithm>
#include <climits>
#include <cstdint>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "bundle/memmap.h"
#include "sim/shadow.h"
#include "util/rng.h"

namespace npuforge::sim {
namespace {

constexpr uint64_t kSram = 64 * 1024;
constexpr int64_t kInstrs = 20000;

// Buffers of random sizes and lifetimes at random (overlapping) places: several live
// holders of a byte happen, as in broken maps.
bundle::MemMap random_map(uint64_t seed, int count = 4000) {
  Rng rng(seed);
  bundle::MemMap map;
  map.sram_bytes = {kSram};
  map.alignment = {64};
  map.instructions = kInstrs;
  for (int b = 0; b < count; ++b) {
    bundle::MemBuffer buf;
    buf.symbol = "b";
    buf.symbol += std::to_string(b);  // appended: "b" + to_string(b) inlined draws a GCC 12 -Wrestrict false positive
    const uint64_t size = 64 * (1 + rng.next() % 24) - (rng.next() % 4 == 0 ? rng.next() % 64 : 0);
    buf.offset = {static_cast<uint32_t>(rng.next() % (kSram - size))};
    buf.size = {size};
    buf.first = static_cast<int64_t>(rng.next() % kInstrs);
    buf.last = buf.first + static_cast<int64_t>(rng.next() % 2500);
    map.buffers.push_back(buf);
  }
  return map;
}

// What live_at must answer: the live holders, latest `first` (then highest id) first.
std::vector<int32_t> brute_live_at(const bundle::MemMap& map, uint64_t addr, int64_t instr) {
  std::vector<int32_t> ids;
  for (size_t b = 0; b < map.buffers.size(); ++b) {
    const auto& buf = map.buffers[b];
    if (buf.size.value > 0 && buf.live_at(instr) && buf.offset.value <= addr &&
        addr < buf.offset.value + buf.size.value) {
      ids.push_back(static_cast<int32_t>(b));
    }
  }
  std::sort(ids.begin(), ids.end(), [&](int32_t x, int32_t y) {
    const auto fx = map.buffers[static_cast<size_t>(x)].first, fy = map.buffers[static_cast<size_t>(y)].first;
    return fx != fy ? fx > fy : x > y;
  });
  return ids;
}

// Checks live_at (both forms) and sole_at against the brute force; returns whether sole_at
// answered (before live_at, which may fill the cache).
bool expect_query(const bundle::MemMap& map, const BufferIndex& index, uint64_t addr, int64_t instr) {
  const std::vector<int32_t> want = brute_live_at(map, addr, instr);
  BufferIndex::Holder sole{};
  const bool cached = index.sole_at(addr, instr, sole);
  if (cached) {  // the cache answers only for the only holder
    EXPECT_EQ(want, std::vector<int32_t>{sole.id}) << "sole_at: addr " << addr << " instr " << instr;
    if (want.size() == 1) {
      const auto& buf = map.buffers[static_cast<size_t>(want[0])];
      EXPECT_EQ(sole.first, buf.first);
      EXPECT_EQ(sole.end, buf.offset.value + buf.size.value);
    }
  }
  std::vector<int32_t> ids;
  index.live_at(addr, instr, ids);
  EXPECT_EQ(ids, want) << "addr " << addr << " instr " << instr;
  std::vector<BufferIndex::Holder> holders;
  index.live_at(addr, instr, holders);
  EXPECT_EQ(holders.size(), want.size());
  for (size_t k = 0; k < std::min(want.size(), holders.size()); ++k) {
    const auto& buf = map.buffers[static_cast<size_t>(want[k])];
    EXPECT_EQ(holders[k].id, want[k]);
    EXPECT_EQ(holders[k].first, buf.first);
    EXPECT_EQ(holders[k].end, buf.offset.value + buf.size.value);
  }
  return cached;
}

TEST(BufferIndex, InterleavedStreamsMatchBruteForce) {
  const bundle::MemMap map = random_map(1);
  const BufferIndex index(map, kSram);
  Rng rng(2);
  // Three streams, 0, 1500 and 3000 instructions behind the lead, taking turns.
  for (int64_t t = 0; t < kInstrs + 3000; t += 7) {
    for (int64_t lag : {0, 1500, 3000}) {
      const int64_t instr = t - lag;
      if (instr < 0 || instr >= kInstrs) continue;
      expect_query(map, index, rng.next() % kSram, instr);
    }
  }
}

// Per buffer: meets no other buffer (a byte of both while both live), by brute force.
std::vector<uint8_t> brute_exclusive(const bundle::MemMap& map) {
  const auto& bufs = map.buffers;
  std::vector<uint8_t> out(bufs.size(), 1);
  for (size_t a = 0; a < bufs.size(); ++a) {
    for (size_t b = a + 1; b < bufs.size(); ++b) {
      const auto &x = bufs[a], &y = bufs[b];
      const bool bytes = x.offset.value < y.offset.value + y.size.value && y.offset.value < x.offset.value + x.size.value;
      const bool live = std::max(x.first, y.first) <= std::min(x.last, y.last);
      if (bytes && live && x.size.value > 0 && y.size.value > 0) out[a] = out[b] = 0;
    }
  }
  return out;
}

// The sole-holder cache (mark_exclusive) against the brute force: sparse maps (most buffers
// exclusive, some not) in three interleaved streams and in random order.
TEST(BufferIndex, SoleHolderCacheMatchesBruteForce) {
  for (int count : {300, 700, 1500}) {
    const bundle::MemMap map = random_map(10 + static_cast<uint64_t>(count), count);
    BufferIndex index(map, kSram);
    const std::vector<uint8_t> exclusive = brute_exclusive(map);
    const auto marked = std::count(exclusive.begin(), exclusive.end(), 1);
    EXPECT_GT(marked, 0);
    EXPECT_LT(marked, count);
    index.mark_exclusive(exclusive);
    Rng rng(7);
    int cached = 0;  // queries sole_at answered: the cache is tested, not just left empty
    for (int64_t t = 0; t < kInstrs + 3000; t += 3) {
      for (int64_t lag : {0, 1500, 3000}) {
        const int64_t instr = t - lag;
        if (instr >= 0 && instr < kInstrs) cached += expect_query(map, index, rng.next() % kSram, instr);
      }
      // Buffers announced (expect) at random, exclusive or not: their first bytes asked.
      const auto id = static_cast<int32_t>(rng.next() % static_cast<uint64_t>(count));
      index.expect(id);
      const auto& buf = map.buffers[static_cast<size_t>(id)];
      cached += expect_query(map, index, buf.offset.value, std::min<int64_t>(t, kInstrs - 1));
      cached += expect_query(map, index, buf.offset.value, buf.first);
    }
    for (int q = 0; q < 3000; ++q) {
      cached += expect_query(map, index, rng.next() % kSram, static_cast<int64_t>(rng.next() % kInstrs));
    }
    EXPECT_GT(cached, 100) << count;
  }
}

TEST(BufferIndex, RandomOrderMatchesBruteForce) {
  const bundle::MemMap map = random_map(3);
  const BufferIndex index(map, kSram);
  Rng rng(4);
  for (int q = 0; q < 4000; ++q) {
    expect_query(map, index, rng.next() % kSram, static_cast<int64_t>(rng.next() % kInstrs));
  }
}

std::vector<std::pair<int64_t, int32_t>> by_first_of(const bundle::MemMap& map) {
  std::vector<std::pair<int64_t, int32_t>> out;
  for (size_t b = 0; b < map.buffers.size(); ++b) out.emplace_back(map.buffers[b].first, static_cast<int32_t>(b));
  std::sort(out.begin(), out.end());
  return out;
}

// Per buffer: the other buffers live at its first instruction whose bytes meet its own.
std::vector<std::vector<int32_t>> brute_candidates(const bundle::MemMap& map) {
  const auto& bufs = map.buffers;
  std::vector<std::vector<int32_t>> out(bufs.size());
  for (size_t b = 0; b < bufs.size(); ++b) {
    const auto& x = bufs[b];
    if (x.size.value == 0) continue;
    for (size_t c = 0; c < bufs.size(); ++c) {
      const auto& y = bufs[c];
      const bool bytes = x.offset.value < y.offset.value + y.size.value && y.offset.value < x.offset.value + x.size.value;
      if (c != b && y.size.value > 0 && bytes && y.live_at(x.first)) out[b].push_back(static_cast<int32_t>(c));
    }
  }
  return out;
}

void expect_candidates(const bundle::MemMap& map, bool general) {
  const auto by_first = by_first_of(map);
  const BufferIndex index(map, kSram, by_first);
  const OverlapCandidates got = find_overlap_candidates(map, index, by_first, general);
  const auto want = brute_candidates(map);
  ASSERT_EQ(got.begin.size(), map.buffers.size() + 1);
  size_t nonempty = 0;
  for (size_t b = 0; b < map.buffers.size(); ++b) {
    const auto of = got.of(b);
    EXPECT_EQ(std::vector<int32_t>(of.begin(), of.end()), want[b]) << "buffer " << b << " general " << general;
    nonempty += !want[b].empty();
  }
  EXPECT_GT(nonempty, 0u);
  EXPECT_LT(nonempty, map.buffers.size());
}

// The index's lists (the fast path) and the sweep's, both against the brute force, on maps
// with overlaps, empty buffers, buffers dead before they are born, and several born at once.
TEST(OverlapCandidates, IndexAndSweepMatchBruteForce) {
  for (int count : {300, 1500}) {
    bundle::MemMap map = random_map(20 + static_cast<uint64_t>(count), count);
    map.buffers[1].size = {0};
    map.buffers[2].last = map.buffers[2].first - 1;
    map.buffers[4].first = map.buffers[3].first;
    expect_candidates(map, false);
    expect_candidates(map, true);
  }
}

// Instruction indices beyond 32 bits (broken maps): the index cannot tell, the sweep does.
TEST(OverlapCandidates, WideValuesTakeTheSweep) {
  bundle::MemMap map = random_map(31, 300);
  map.buffers[5].last = int64_t{INT32_MAX} + 10;
  map.buffers[6].first = int64_t{INT32_MAX} + 5;
  map.buffers[6].last = int64_t{INT32_MAX} + 7;
  map.buffers[6].offset = map.buffers[5].offset;
  expect_candidates(map, false);
}

}  // namespace
}  // namespace npuforge::sim
