// The hazard checker's paged run map against a per-byte model: random writes and reads over
// ranges that start, end and cross page boundaries; after each, every byte's state and the
// runs visit() reports (clipped, in address order, covering the range) must match the model.
#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

#include "sim/hazard_map.h"
#include "util/rng.h"

namespace npuforge::sim {
namespace {

using Seg = HazardMap::Seg;

// visit() over [lo, hi) as one Seg per byte, checking that the runs tile the range in order.
std::vector<Seg> bytes_of(const HazardMap& map, uint64_t lo, uint64_t hi) {
  std::vector<Seg> out;
  uint64_t next = lo;
  map.visit(lo, hi, [&](uint64_t a, uint64_t b, const Seg& s) {
    EXPECT_EQ(a, next);
    EXPECT_LT(a, b);
    for (uint64_t x = a; x < b; ++x) out.push_back(s);
    next = b;
  });
  EXPECT_EQ(next, hi);
  return out;
}

TEST(HazardMap, MatchesAPerByteModel) {
  constexpr uint64_t kBytes = 3 * 4096 + 300;
  const std::vector<uint64_t> edges = {0, 1, 4095, 4096, 4097, 8191, 8192, 12288, kBytes - 1, kBytes};
  Rng rng(21);
  HazardMap map(kBytes);
  std::vector<Seg> model(kBytes);
  size_t accessed_runs = 0;
  for (int op = 0; op < 3000; ++op) {
    auto pick = [&] { return rng.chance(0.3) ? edges[rng.below(edges.size())] : rng.below(kBytes + 1); };
    uint64_t lo = pick(), hi = pick();
    if (lo > hi) std::swap(lo, hi);
    if (lo == hi) continue;
    const unsigned q = static_cast<unsigned>(rng.below(isa::kNumQueues));
    const int32_t instr = op;
    if (rng.chance(0.4)) {
      map.record_write(lo, hi, q, instr);
      Seg s;
      s.last_write[q] = instr;
      for (uint64_t x = lo; x < hi; ++x) model[x] = s;
    } else {
      map.record_read(lo, hi, q, instr);
      for (uint64_t x = lo; x < hi; ++x) model[x].last_read[q] = instr;
    }
    const uint64_t vlo = rng.below(kBytes), vhi = vlo + 1 + rng.below(kBytes - vlo);
    const std::vector<Seg> got = bytes_of(map, vlo, vhi);
    ASSERT_EQ(got.size(), vhi - vlo);
    for (uint64_t x = vlo; x < vhi; ++x) {
      ASSERT_EQ(got[x - vlo], model[x]) << "byte " << x << " after op " << op;
      accessed_runs += !(model[x] == Seg{});
    }
  }
  EXPECT_EQ(bytes_of(map, 0, kBytes), model);
  EXPECT_GT(accessed_runs, 0u);  // the model saw accesses: the comparison can fail
}

TEST(HazardMap, UntouchedBytesAreNeverAccessedAndLargeMemoriesStaySmall) {
  HazardMap map(uint64_t{1} << 40);  // a 1 TiB DDR: pages grow with the highest one written
  map.record_write((uint64_t{1} << 40) - 10, uint64_t{1} << 40, 2, 7);
  const std::vector<Seg> tail = bytes_of(map, (uint64_t{1} << 40) - 20, uint64_t{1} << 40);
  for (size_t k = 0; k < tail.size(); ++k) EXPECT_EQ(tail[k].last_write[2], k < 10 ? -1 : 7) << k;
  EXPECT_EQ(bytes_of(map, 100, 200), std::vector<Seg>(100));
}

}  // namespace
}  // namespace npuforge::sim
