// The interval indexes against brute force, and greedy-size on them against the previous
// implementation (a scan of every earlier buffer), which must give the same placements.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <numeric>

#include "planner/plan_index.h"
#include "planner/plan_io.h"
#include "planner/plan_synth.h"
#include "planner/planner.h"
#include "planner/planner_util.h"
#include "plan_test_util.h"

namespace npuforge::planner {
namespace {

using testing::random_problem;

// greedy-size as it was before the interval index: every earlier buffer is looked at.
std::vector<Offset> reference_greedy_size(const PlanProblem& problem) {
  const auto& bufs = problem.buffers;
  const size_t n = bufs.size();
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), size_t{0});
  auto length = [&](size_t i) { return bufs[i].lifespan.upper - bufs[i].lifespan.lower; };
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (bufs[a].offset.has_value() != bufs[b].offset.has_value()) return bufs[a].offset.has_value();
    if (bufs[a].size != bufs[b].size) return bufs[a].size > bufs[b].size;
    return length(a) > length(b);
  });
  std::vector<size_t> placed;
  std::vector<Offset> offsets(n, 0);
  std::vector<std::pair<uint64_t, uint64_t>> busy;
  for (size_t i : order) {
    const PlanBuffer& b = bufs[i];
    if (b.offset) {
      offsets[i] = *b.offset;
    } else {
      busy.clear();
      for (size_t j : placed)
        if (bufs[j].lifespan.intersects(b.lifespan)) busy.emplace_back(offsets[j], offsets[j] + bufs[j].size.value);
      std::sort(busy.begin(), busy.end());
      const uint64_t size = b.size.value, align = b.alignment.value;
      uint64_t top = 0, best = UINT64_MAX, best_gap = UINT64_MAX;
      for (const auto& [lo, hi] : busy) {
        const uint64_t start = align_to(top, align);
        if (lo > top && start + size <= lo && lo - start < best_gap) best_gap = lo - start, best = start;
        top = std::max(top, hi);
      }
      offsets[i] = best != UINT64_MAX ? best : align_to(top, align);
    }
    if (b.lifespan.lower < b.lifespan.upper && b.size.value > 0) placed.push_back(i);
  }
  return offsets;
}

TEST(LiveIndex, ListsExactlyTheActiveBuffersThatMeetALifetime) {
  Rng rng(3);
  for (int k = 0; k < 200; ++k) {
    const PlanProblem p = random_problem(rng, 40, 30, 8, false);
    LiveIndex index(p.buffers);
    std::vector<bool> active(p.buffers.size(), false);
    for (size_t i = 0; i < p.buffers.size(); ++i) {
      if (rng.chance(0.6)) index.activate(int(i)), active[i] = true;
      const int64_t lo = rng.range(-2, 31);
      const Lifespan q{lo, lo + rng.range(0, 6)};  // empty queries included
      std::vector<int> got, want;
      index.for_each_meeting(q, [&](int j) { got.push_back(j); });
      for (size_t j = 0; j < p.buffers.size(); ++j)
        if (active[j] && p.buffers[j].lifespan.intersects(q)) want.push_back(int(j));
      std::sort(got.begin(), got.end());
      ASSERT_EQ(got, want) << "problem " << k;
    }
  }
}

// Brute force: the bytes of the inserted ranges whose lifetimes meet each query, joined.
// The path unions sit at a random tree level and hold a random number of levels above it. Short ranges over a wide span give many disjoint intervals
// per set; long ones nest many intervals of other sets inside one.
void check_occupied_against_brute_force(uint64_t seed, int problems, int max_size, int64_t max_lo) {
  Rng rng(seed);
  for (int k = 0; k < problems; ++k) {
    const PlanProblem p = random_problem(rng, 40, 30, max_size, false);
    const int cached_height = int(rng.range(0, 6));  // 6: above most of these trees (none cached)
    const int cached_levels = int(rng.range(0, 6));
    GapIndex index(p.buffers, cached_height, cached_levels);
    std::vector<std::pair<Lifespan, Segment>> inserted;
    for (const auto& b : p.buffers) {
      const uint64_t lo = uint64_t(rng.range(0, max_lo));
      const Segment s{lo, lo + b.size.value};
      index.insert(b.lifespan, s);
      inserted.emplace_back(b.lifespan, s);
      const auto& q = p.buffers[size_t(rng.below(p.buffers.size()))].lifespan;
      std::vector<Segment> got;
      index.occupied(q, got);
      std::vector<bool> used(256, false);
      for (const auto& [life, seg] : inserted)
        if (life.intersects(q))
          for (uint64_t x = seg.lo; x < seg.hi; ++x) used[x] = true;
      std::vector<Segment> want;
      for (uint64_t x = 0; x < used.size(); ++x)
        if (used[x]) {
          if (!want.empty() && want.back().hi == x) ++want.back().hi;
          else want.push_back({x, x + 1});
        }
      ASSERT_EQ(got, want) << "seed " << seed << " problem " << k << " cached height " << cached_height
                           << " levels " << cached_levels;
      // Under a ceiling: exact below it, and nothing reported that is not used.
      const uint64_t below = uint64_t(rng.range(0, int64_t(used.size())));
      index.occupied(q, got, below);
      std::vector<bool> reported(used.size(), false);
      for (const Segment& s : got)
        for (uint64_t x = s.lo; x < s.hi; ++x) reported[x] = true;
      for (uint64_t x = 0; x < used.size(); ++x)
        ASSERT_TRUE(x < below ? reported[x] == used[x] : !reported[x] || used[x])
            << "seed " << seed << " problem " << k << " below " << below << " byte " << x;
      ASSERT_EQ(std::adjacent_find(got.begin(), got.end(), [](const Segment& a, const Segment& b) { return a.hi >= b.lo; }),
                got.end());  // sorted, disjoint, touching ones joined
    }
  }
}

TEST(GapIndex, OccupiedIsTheMergedUnionOverTheLifetime) {
  check_occupied_against_brute_force(4, 200, 16, 64);
  check_occupied_against_brute_force(5, 1000, 4, 180);   // small, mostly disjoint ranges
  check_occupied_against_brute_force(6, 1000, 100, 90);  // wide ranges covering many others
}

TEST(GreedySize, SamePlacementsAsTheScanOfEveryEarlierBuffer) {
  Rng rng(21);
  for (int k = 0; k < 2000; ++k) {
    PlanProblem p = random_problem(rng, 30, 20, 64, k % 2 == 0);
    // Degenerate cases too: empty lifetimes, zero sizes, fixed offsets.
    for (auto& b : p.buffers) {
      if (rng.chance(0.05)) b.lifespan.upper = b.lifespan.lower;
      if (rng.chance(0.05)) b.size = Bytes{0};
      if (rng.chance(0.05)) b.offset = Offset(rng.range(0, 100)) * b.alignment.value;
    }
    ASSERT_EQ(plan_greedy_size(p).offsets, reference_greedy_size(p)) << "problem " << k;
  }
  for (uint64_t seed : {1, 2}) {
    const PlanProblem a = random_intervals_problem(3000, seed), b = trace_like_problem(3000, seed);
    EXPECT_EQ(plan_greedy_size(a).offsets, reference_greedy_size(a));
    EXPECT_EQ(plan_greedy_size(b).offsets, reference_greedy_size(b));
  }
  for (const char* name : {"A", "D", "J"}) {
    const PlanProblem p = load_plan_file(std::filesystem::path(NPUFORGE_SOURCE_DIR) /
                                         "tests/data/minimalloc/challenging" / (std::string(name) + ".1048576.csv"));
    EXPECT_EQ(plan_greedy_size(p).offsets, reference_greedy_size(p)) << name;
  }
  const PlanProblem cnn = load_plan_file(std::filesystem::path(NPUFORGE_SOURCE_DIR) / "tests/data/traces/somas_resnet50.csv");
  EXPECT_EQ(plan_greedy_size(cnn).offsets, reference_greedy_size(cnn));
}

TEST(Synthetic, SameSeedSameProblem) {
  EXPECT_EQ(trace_like_problem(2000, 5), trace_like_problem(2000, 5));
  EXPECT_NE(trace_like_problem(2000, 5), trace_like_problem(2000, 6));
  EXPECT_EQ(random_intervals_problem(100, 5), random_intervals_problem(100, 5));
  // Trace-like: a bounded number of buffers live at once, whatever n (about 450).
  const PlanProblem p = trace_like_problem(20000, 1);
  std::map<TimeValue, int> delta;
  for (const auto& b : p.buffers) ++delta[b.lifespan.lower], --delta[b.lifespan.upper];
  int live = 0, most = 0;
  for (const auto& [t, d] : delta) most = std::max(most, live += d);
  EXPECT_GT(most, 200);
  EXPECT_LT(most, 1000);
}

}  // namespace
}  // namespace npuforge::planner
