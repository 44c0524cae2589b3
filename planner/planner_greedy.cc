// greedy-size: the classic rule. Buffers in decreasing size (longer lifetime, then input
// order, break ties); each goes into the smallest gap that fits among the already-placed
// buffers whose lifetimes intersect it, lowest offset on ties, else on top of them.
// The gaps are those of the union of the placed buffers' byte ranges over the buffer's
// lifetime, which GapIndex gives without listing the buffers (O(n log^2 n) on traces whose
// placed ranges merge well, instead of a scan of every earlier buffer).
#include <algorithm>
#include <numeric>
#include <optional>

#include "planner/plan_index.h"
#include "planner/planner.h"
#include "planner/planner_util.h"

namespace npuforge::planner {

std::vector<size_t> greedy_size_order(const PlanProblem& problem) {
  const auto& bufs = problem.buffers;
  std::vector<size_t> order(bufs.size());
  std::iota(order.begin(), order.end(), size_t{0});
  auto length = [&](size_t i) { return bufs[i].lifespan.upper - bufs[i].lifespan.lower; };
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (bufs[a].offset.has_value() != bufs[b].offset.has_value()) return bufs[a].offset.has_value();
    if (bufs[a].size != bufs[b].size) return bufs[a].size > bufs[b].size;
    return length(a) > length(b);
  });
  return order;
}

PlanResult plan_greedy_size(const PlanProblem& problem) {
  const auto& bufs = problem.buffers;
  const std::vector<size_t> order = greedy_size_order(problem);
  GapIndex gaps(bufs);
  // A buffer with an empty lifetime [t, t) still meets the placed buffers live across t
  // (Lifespan::intersects); those are listed one by one (rare, and no union fits them).
  std::optional<LiveIndex> live;
  for (const auto& b : bufs)
    if (!live && !b.offset && b.lifespan.lower >= b.lifespan.upper) live.emplace(bufs);
  std::vector<Offset> offsets(bufs.size(), 0);
  std::vector<Segment> used;
  for (size_t i : order) {
    const PlanBuffer& b = bufs[i];
    const bool nonempty = b.lifespan.lower < b.lifespan.upper;
    if (b.offset) {
      offsets[i] = *b.offset;
    } else {
      if (nonempty) {
        gaps.occupied(b.lifespan, used);
      } else {
        used.clear();
        live->for_each_meeting(b.lifespan, [&](int j) { used.push_back({offsets[j], offsets[j] + bufs[j].size.value}); });
        std::sort(used.begin(), used.end(), [](const Segment& x, const Segment& y) { return x.lo < y.lo; });
      }
      const uint64_t size = b.size.value, align = b.alignment.value;
      uint64_t top = 0, best = UINT64_MAX, best_gap = UINT64_MAX;
      for (const Segment& s : used) {
        const uint64_t start = align_to(top, align);
        if (s.lo > top && start + size <= s.lo && s.lo - start < best_gap) {
          best_gap = s.lo - start;
          best = start;
        }
        top = std::max(top, s.hi);
      }
      offsets[i] = best != UINT64_MAX ? best : align_to(top, align);
    }
    if (nonempty && b.size.value > 0) {
      gaps.insert(b.lifespan, {offsets[i], offsets[i] + b.size.value});
      if (live) live->activate(int(i));
    }
  }
  return finish(problem, std::move(offsets), problem.capacity);
}

}  // namespace npuforge::planner
