// Planner dispatch, the naive planner, and helpers shared by the planners.
#include "planner/planner.h"

#include <algorithm>

#include <fmt/core.h>

#include "planner/planner_util.h"
#include "util/error.h"

namespace npuforge::planner {

const std::vector<std::string>& planner_names() {
  static const std::vector<std::string> kNames = {
      "naive", "linked-list", "linked-list-best", "greedy-size", "lifetime-aware", "exact", "best"};
  return kNames;
}

void reject_fixed_offsets(const PlanProblem& problem, std::string_view planner) {
  for (const auto& b : problem.buffers)
    if (b.offset)
      throw Error(fmt::format("planner {}: buffer '{}' has a fixed offset; only naive and "
                              "greedy-size keep fixed offsets", planner, b.id));
}

PlanResult finish(const PlanProblem& problem, std::vector<Offset> offsets,
                  std::optional<Bytes> capacity) {
  PlanResult r;
  uint64_t peak = 0;
  for (size_t i = 0; i < offsets.size(); ++i)
    peak = std::max(peak, offsets[i] + problem.buffers[i].size.value);
  r.offsets = std::move(offsets);
  r.peak = {peak};
  r.fits = !capacity || peak <= capacity->value;
  if (!r.fits)
    r.note = fmt::format("peak {} exceeds the capacity {}", peak, capacity->value);
  return r;
}

PlanResult plan_naive(const PlanProblem& problem) {
  std::vector<Offset> offsets(problem.buffers.size());
  uint64_t top = 0;
  for (const auto& b : problem.buffers)
    if (b.offset) top = std::max(top, *b.offset + b.size.value);
  for (size_t i = 0; i < problem.buffers.size(); ++i) {
    const PlanBuffer& b = problem.buffers[i];
    if (b.offset) {
      offsets[i] = *b.offset;
      continue;
    }
    offsets[i] = align_up(Bytes{top}, b.alignment).value;
    top = offsets[i] + b.size.value;
  }
  return finish(problem, std::move(offsets), problem.capacity);
}

PlanResult run_planner(std::string_view name, const PlanProblem& problem,
                       const PlannerOptions& options) {
  for (const auto& b : problem.buffers)
    if (b.alignment.value == 0) throw Error(fmt::format("buffer '{}': alignment 0", b.id));
  if (name == "naive") return plan_naive(problem);
  if (name == "linked-list") return plan_linked_list(problem, ListFit::kFirst);
  if (name == "linked-list-best") return plan_linked_list(problem, ListFit::kBest);
  if (name == "greedy-size") return plan_greedy_size(problem);
  if (name == "lifetime-aware") return plan_lifetime_aware(problem, options);
  if (name == "exact") return plan_exact(problem, options);
  if (name == "best") return plan_best(problem, options);
  std::string names;
  for (const auto& n : planner_names()) names += (names.empty() ? "" : ", ") + n;
  throw Error(fmt::format("unknown planner '{}' (expected one of: {})", name, names));
}

}  // namespace npuforge::planner
