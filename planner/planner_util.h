#pragma once
// Internal helpers shared by the planner implementations (not a public API).
#include <optional>
#include <string_view>
#include <vector>

#include "planner/planner.h"

namespace npuforge::planner {

// Throws npuforge::Error if any buffer has a fixed offset.
void reject_fixed_offsets(const PlanProblem& problem, std::string_view planner);

// A PlanResult with the peak computed and `fits` checked against `capacity`.
PlanResult finish(const PlanProblem& problem, std::vector<Offset> offsets,
                  std::optional<Bytes> capacity);

// lifetime-aware's own replays without greedy-size as a candidate (for callers that have
// greedy's placement already): found is false when the budget cut every replay.
PlanResult lifetime_aware_replays(const PlanProblem& problem, const PlannerOptions& options);

// One lifetime-aware replay in time order with weight set `weight_set`, settled, without a
// budget. keep_live keeps the live buffers across requests as the planner does; false
// searches them per request (the reference the tests compare with).
std::vector<Offset> lifetime_aware_time_order_replay(const PlanProblem& problem, size_t weight_set, bool keep_live);

inline uint64_t align_to(uint64_t value, uint64_t alignment) {
  return alignment <= 1 ? value : (value + alignment - 1) / alignment * alignment;
}

}  // namespace npuforge::planner
