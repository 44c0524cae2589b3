#include "planner/plan_problem.h"

#include <algorithm>
#include <utility>

#include <fmt/core.h>

#include "bundle/memmap.h"
#include "util/error.h"

namespace npuforge::planner {

Bytes lower_bound(const PlanProblem& problem) {
  // Events (time, +size / -size); at equal times ends come first (half-open lifetimes).
  std::vector<std::pair<TimeValue, int64_t>> events;
  events.reserve(problem.buffers.size() * 2);
  for (const auto& b : problem.buffers) {
    if (b.lifespan.lower >= b.lifespan.upper) continue;  // never live
    events.emplace_back(b.lifespan.lower, static_cast<int64_t>(b.size.value));
    events.emplace_back(b.lifespan.upper, -static_cast<int64_t>(b.size.value));
  }
  std::sort(events.begin(), events.end());
  int64_t live = 0, best = 0;
  for (const auto& [t, delta] : events) {
    live += delta;
    best = std::max(best, live);
  }
  return {static_cast<uint64_t>(best)};
}

Bytes plan_peak(const PlanProblem& problem) {
  uint64_t peak = 0;
  for (const auto& b : problem.buffers)
    if (b.offset) peak = std::max(peak, *b.offset + b.size.value);
  return {peak};
}

std::vector<Offset> plan_offsets(const PlanProblem& problem) {
  std::vector<Offset> offsets;
  offsets.reserve(problem.buffers.size());
  for (const auto& b : problem.buffers) {
    if (!b.offset) throw Error(fmt::format("plan: buffer '{}' has no offset", b.id));
    offsets.push_back(*b.offset);
  }
  return offsets;
}

PlanProblem with_offsets(const PlanProblem& problem, const std::vector<Offset>& offsets) {
  if (offsets.size() != problem.buffers.size())
    throw Error(fmt::format("plan: {} offsets for {} buffers", offsets.size(),
                            problem.buffers.size()));
  PlanProblem out = problem;
  for (size_t i = 0; i < offsets.size(); ++i) out.buffers[i].offset = offsets[i];
  return out;
}

PlanProblem problem_from_memmap(const MemMap& map) {
  PlanProblem p;
  p.capacity = map.sram_bytes;
  p.buffers.reserve(map.buffers.size());
  for (const auto& m : map.buffers) {
    PlanBuffer b;
    b.id = m.symbol;
    b.lifespan = {m.first, m.last + 1};  // inclusive -> half-open
    b.size = m.size;
    b.alignment = map.alignment.value == 0 ? Bytes{1} : map.alignment;
    b.offset = m.offset.value;
    p.buffers.push_back(std::move(b));
  }
  return p;
}

std::vector<std::vector<uint64_t>> instantiate(const PlanProblem& plan, uint64_t base,
                                               int instances, Bytes stride_alignment) {
  if (instances < 1) throw Error(fmt::format("plan: instances must be >= 1, got {}", instances));
  if (stride_alignment.value == 0) stride_alignment = {1};
  const std::vector<Offset> offsets = plan_offsets(plan);
  const uint64_t stride = align_up(plan_peak(plan), stride_alignment).value;
  std::vector<std::vector<uint64_t>> out(static_cast<size_t>(instances));
  for (int k = 0; k < instances; ++k) {
    auto& addrs = out[static_cast<size_t>(k)];
    addrs.reserve(offsets.size());
    for (Offset o : offsets) addrs.push_back(base + static_cast<uint64_t>(k) * stride + o);
  }
  return out;
}

}  // namespace npuforge::planner
