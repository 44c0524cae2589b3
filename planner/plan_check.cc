#include "planner/plan_check.h"

#include <algorithm>
#include <iterator>
#include <set>
#include <tuple>
#include <utility>

#include <fmt/core.h>

#include "bundle/memmap.h"

namespace npuforge::planner {

const char* to_string(PlanOutcome outcome) {
  switch (outcome) {
    case PlanOutcome::kGood: return "good";
    case PlanOutcome::kOverlap: return "overlap";
    case PlanOutcome::kMisaligned: return "misaligned";
    case PlanOutcome::kOutOfCapacity: return "out of capacity";
    case PlanOutcome::kMissingOffset: return "missing offset";
    case PlanOutcome::kBadLifespan: return "bad lifespan";
  }
  return "?";
}

namespace {

struct Checker {
  const PlanProblem& problem;
  const std::vector<Offset>& offsets;
  std::optional<Bytes> capacity;
  PlanCheckOptions options;
  bool inclusive;  // print lifetimes as [first, last] (memory maps)
  PlanCheckResult result;

  std::string life(size_t i) const {
    const Lifespan& l = problem.buffers[i].lifespan;
    return inclusive ? fmt::format("live [{}, {}]", l.lower, l.upper - 1)
                     : fmt::format("live [{}, {})", l.lower, l.upper);
  }
  std::string range(size_t i) const {
    const Offset o = offsets[i];
    return fmt::format("[{:#x}, {:#x})", o, o + problem.buffers[i].size.value);
  }
  void add(PlanOutcome outcome, size_t i, std::optional<size_t> other, std::string message) {
    ++result.total_findings;
    if (result.findings.size() < options.max_findings)
      result.findings.push_back({outcome, i, other, std::move(message)});
  }

  // Per-buffer checks; returns whether the buffer takes part in the overlap sweep.
  bool check_one(size_t i) {
    const PlanBuffer& b = problem.buffers[i];
    if (b.lifespan.lower > b.lifespan.upper) {
      add(PlanOutcome::kBadLifespan, i, {},
          fmt::format("buffer '{}': lifetime lower {} > upper {}", b.id, b.lifespan.lower,
                      b.lifespan.upper));
      return false;
    }
    if (i >= offsets.size()) {
      add(PlanOutcome::kMissingOffset, i, {}, fmt::format("buffer '{}' has no offset", b.id));
      return false;
    }
    const uint64_t align = std::max<uint64_t>(1, b.alignment.value);
    if (offsets[i] % align != 0)
      add(PlanOutcome::kMisaligned, i, {},
          fmt::format("buffer '{}' at {} {}: offset is not a multiple of its alignment {}",
                      b.id, range(i), life(i), align));
    if (offsets[i] > UINT64_MAX - b.size.value) {
      add(PlanOutcome::kOutOfCapacity, i, {},
          fmt::format("buffer '{}' at offset {:#x} size {}: the range overflows 64 bits", b.id,
                      offsets[i], b.size.value));
      return false;
    }
    if (capacity && offsets[i] + b.size.value > capacity->value)
      add(PlanOutcome::kOutOfCapacity, i, {},
          fmt::format("buffer '{}' at {} {}: ends past the capacity {:#x} ({} bytes)", b.id,
                      range(i), life(i), capacity->value, capacity->value));
    result.peak = {std::max(result.peak.value, offsets[i] + b.size.value)};
    return b.size.value > 0 && b.lifespan.lower < b.lifespan.upper;
  }

  void overlap(size_t a, size_t b) {
    const uint64_t lo = std::max(offsets[a], offsets[b]);
    const uint64_t hi = std::min(offsets[a] + problem.buffers[a].size.value,
                                 offsets[b] + problem.buffers[b].size.value);
    add(PlanOutcome::kOverlap, a, b,
        fmt::format("buffers '{}' at {} {} and '{}' at {} {} share bytes [{:#x}, {:#x})",
                    problem.buffers[a].id, range(a), life(a), problem.buffers[b].id, range(b),
                    life(b), lo, hi));
  }

  // Sweep over time; the live set is ordered by offset. While it holds no overlap, the
  // predecessor and the successors starting inside a new range are the only candidates.
  void sweep(const std::vector<size_t>& swept) {
    std::vector<std::tuple<TimeValue, int, size_t>> events;  // (time, 0 end / 1 start, i)
    events.reserve(swept.size() * 2);
    for (size_t i : swept) {
      events.emplace_back(problem.buffers[i].lifespan.lower, 1, i);
      events.emplace_back(problem.buffers[i].lifespan.upper, 0, i);
    }
    std::sort(events.begin(), events.end());
    std::set<std::pair<Offset, size_t>> live;
    for (const auto& [t, kind, i] : events) {
      if (kind == 0) {
        live.erase({offsets[i], i});
        continue;
      }
      const Offset lo = offsets[i], hi = lo + problem.buffers[i].size.value;
      auto it = live.lower_bound({lo, 0});
      if (it != live.begin()) {
        auto prev = std::prev(it);
        if (prev->first + problem.buffers[prev->second].size.value > lo) overlap(prev->second, i);
      }
      for (; it != live.end() && it->first < hi; ++it) overlap(it->second, i);
      live.insert({lo, i});
    }
  }

  PlanCheckResult run() {
    result.buffer_count = problem.buffers.size();
    result.lower_bound = planner::lower_bound(problem);
    std::vector<size_t> swept;
    for (size_t i = 0; i < problem.buffers.size(); ++i)
      if (check_one(i)) swept.push_back(i);
    sweep(swept);
    return std::move(result);
  }
};

}  // namespace

std::string PlanCheckResult::report() const {
  std::string out;
  for (const auto& f : findings) out += fmt::format("{}: {}\n", to_string(f.outcome), f.message);
  if (total_findings > findings.size())
    out += fmt::format("... and {} more findings\n", total_findings - findings.size());
  const double ratio = lower_bound.value ? double(peak.value) / double(lower_bound.value) : 1.0;
  out += fmt::format("{}: {} buffers, peak {} bytes, lower bound {} bytes ({:.4f}x), {} findings\n",
                     ok() ? "plan OK" : "plan BAD", buffer_count, peak.value, lower_bound.value,
                     ratio, total_findings);
  return out;
}

PlanCheckResult check_plan(const PlanProblem& problem, const std::vector<Offset>& offsets,
                           std::optional<Bytes> capacity, PlanCheckOptions options) {
  return Checker{problem, offsets, capacity, options, false, {}}.run();
}

PlanCheckResult check_plan(const PlanProblem& problem, PlanCheckOptions options) {
  // Offsets up to the first missing one; later buffers are reported as missing too.
  std::vector<Offset> offsets;
  PlanProblem reordered;
  bool all = std::all_of(problem.buffers.begin(), problem.buffers.end(),
                         [](const PlanBuffer& b) { return b.offset.has_value(); });
  if (all) {
    for (const auto& b : problem.buffers) offsets.push_back(*b.offset);
    return check_plan(problem, offsets, problem.capacity, options);
  }
  // Put the buffers without an offset last so that the index rule reports each of them.
  std::vector<size_t> order;
  for (size_t i = 0; i < problem.buffers.size(); ++i)
    if (problem.buffers[i].offset) order.push_back(i);
  const size_t placed = order.size();
  for (size_t i = 0; i < problem.buffers.size(); ++i)
    if (!problem.buffers[i].offset) order.push_back(i);
  reordered.capacity = problem.capacity;
  for (size_t k = 0; k < order.size(); ++k) {
    reordered.buffers.push_back(problem.buffers[order[k]]);
    if (k < placed) offsets.push_back(*problem.buffers[order[k]].offset);
  }
  PlanCheckResult r = check_plan(reordered, offsets, problem.capacity, options);
  for (auto& f : r.findings) {
    f.buffer = order[f.buffer];
    if (f.other) f.other = order[*f.other];
  }
  return r;
}

PlanCheckResult check_memmap(const MemMap& map, PlanCheckOptions options) {
  const PlanProblem problem = problem_from_memmap(map);
  std::vector<Offset> offsets;
  for (const auto& b : problem.buffers) offsets.push_back(*b.offset);
  return Checker{problem, offsets, problem.capacity, options, true, {}}.run();
}

}  // namespace npuforge::planner
