#pragma once
// Random small plan problems for the plan tests (deterministic: npuforge::Rng).
#include <algorithm>
#include <string>
#include <vector>

#include "planner/plan_problem.h"
#include "util/rng.h"

namespace npuforge::planner::testing {

inline PlanProblem random_problem(Rng& rng, int max_buffers, int max_time, int max_size,
                                  bool aligned) {
  PlanProblem p;
  const int n = int(rng.range(1, max_buffers));
  for (int i = 0; i < n; ++i) {
    PlanBuffer b;
    b.id = "b" + std::to_string(i);
    b.lifespan.lower = rng.range(0, max_time - 1);
    b.lifespan.upper = rng.range(b.lifespan.lower + 1, max_time);
    b.size = {uint64_t(rng.range(1, max_size))};
    if (aligned) b.alignment = {uint64_t(1) << rng.range(0, 3)};
    p.buffers.push_back(b);
  }
  return p;
}

// The O(n^2) reference: does any pair of live-together buffers share a byte?
inline bool reference_overlap(const PlanProblem& p, const std::vector<Offset>& off) {
  for (size_t i = 0; i < p.buffers.size(); ++i)
    for (size_t j = i + 1; j < p.buffers.size(); ++j) {
      const auto &a = p.buffers[i], &b = p.buffers[j];
      if (!a.lifespan.intersects(b.lifespan) || a.size.value == 0 || b.size.value == 0) continue;
      if (off[i] < off[j] + b.size.value && off[j] < off[i] + a.size.value) return true;
    }
  return false;
}

}  // namespace npuforge::planner::testing
