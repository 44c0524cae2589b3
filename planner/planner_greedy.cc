// greedy-size: the classic rule. Buffers in decreasing size (longer lifetime, then input
// order, break ties); each goes into the smallest gap that fits among the already-placed
// buffers whose lifetimes intersect it, lowest offset on ties, else on top of them.
#include <algorithm>
#include <map>
#include <numeric>

#include "planner/planner.h"
#include "planner/planner_util.h"

namespace npuforge::planner {

PlanResult plan_greedy_size(const PlanProblem& problem) {
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
  // Placed buffers by lifetime start; a conflicting one starts after l - max_length.
  std::multimap<TimeValue, size_t> placed;
  TimeValue max_length = 0;
  for (size_t i = 0; i < n; ++i) max_length = std::max(max_length, length(i));
  std::vector<Offset> offsets(n, 0);
  std::vector<std::pair<uint64_t, uint64_t>> busy;  // [offset, end) of conflicting buffers
  for (size_t i : order) {
    const PlanBuffer& b = bufs[i];
    if (b.offset) {
      offsets[i] = *b.offset;
    } else {
      busy.clear();
      const Lifespan life = b.lifespan;
      for (auto it = placed.upper_bound(life.lower - max_length);
           it != placed.end() && it->first < life.upper; ++it)
        if (bufs[it->second].lifespan.intersects(life))
          busy.emplace_back(offsets[it->second], offsets[it->second] + bufs[it->second].size.value);
      std::sort(busy.begin(), busy.end());
      const uint64_t size = b.size.value, align = b.alignment.value;
      uint64_t top = 0, best = UINT64_MAX, best_gap = UINT64_MAX;
      for (const auto& [lo, hi] : busy) {
        const uint64_t start = align_to(top, align);
        if (lo > top && start + size <= lo && lo - start < best_gap) {
          best_gap = lo - start;
          best = start;
        }
        top = std::max(top, hi);
      }
      offsets[i] = best != UINT64_MAX ? best : align_to(top, align);
    }
    if (b.lifespan.lower < b.lifespan.upper && b.size.value > 0)
      placed.emplace(b.lifespan.lower, i);
  }
  return finish(problem, std::move(offsets), problem.capacity);
}

}  // namespace npuforge::planner
