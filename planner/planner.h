#pragma once
// Offline planners: give every buffer of a PlanProblem an offset so that buffers whose
// lifetimes intersect never share a byte. All are deterministic (same input, same plan).
//
//   naive           no reuse: every buffer gets its own bytes (fixed offsets kept)
//   linked-list     replay lifetimes in time order through the SRAM Allocator, first-fit
//   linked-list-best  the same, best-fit
//   greedy-size     decreasing size; each buffer into the best-fitting gap among the
//                   already-placed buffers whose lifetimes intersect it (else on top)
//   lifetime-aware  virtual offsets replayed in time order, scored gap choice, bounded
//                   free-memory movement, pool expansion at the best gap (planner_lifetime.cc)
//   exact           branch and bound (canonical placement order, section inference,
//                   dominance pruning) under a time budget
//   best            a portfolio under a time budget: the problem split into independent time
//                   windows, each planned by the heuristics in order of cost and, where it is
//                   small enough, by exact; reports which planner won and proves optimality
//                   where it can (deterministic whenever the budget is not reached)
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "planner/plan_problem.h"

namespace npuforge::planner {

struct PlannerOptions {
  // Only `exact` searches within a capacity; it defaults to problem.capacity.
  std::optional<Bytes> capacity;
  // Wall-clock budget of exact, lifetime-aware (its replays) and best. A planner that runs out
  // returns the best placement it has (exact may have none within a capacity).
  double time_limit_s = 60.0;
  // lifetime-aware: attempts at free-memory movement per buffer that fits no gap.
  int max_move_attempts = 8;
  // lifetime-aware (alone or inside best): its first this-many replays (time order, the
  // default weight sets: its cheapest good candidates) run to completion whatever the budget,
  // so a cut budget never leaves greedy-size's placement alone; each further one starts only
  // if the longest replay so far would still end within the budget. A time-order replay
  // costs about as much as greedy-size (at 1M buffers 15-22 s of CPU against greedy's
  // 22-25 s, bench_planners under load), so best at 1M is about two greedy-size runs.
  int guaranteed_replays = 1;
  // exact without a capacity: a peak already reached elsewhere (best passes its incumbent);
  // the search looks only below it, and proving nothing lower exists proves it optimal
  // (the result's lower_bound then equals it, though its own placement may be higher).
  std::optional<Bytes> peak_to_beat;
};

struct PlanResult {
  std::vector<Offset> offsets;  // one per buffer; empty when `exact` found no placement
  Bytes peak;                   // max offset + size
  bool found = true;            // a placement was produced
  bool fits = true;             // found, and peak <= capacity (if any)
  bool proven_optimal = false;  // exact: no smaller peak exists (or peak == lower bound)
  bool timed_out = false;       // exact: the budget ran out before the search finished
  std::string note;             // what happened, for the command line
  std::string winner;           // best, lifetime-aware: the planner whose placement was kept
  // A lower bound on every placement's peak that the planner proved: at least the load bound
  // (lower_bound(problem)) for exact and best, higher when a search proved more; 0 if unset.
  Bytes lower_bound{0};
};

// The planner names accepted by run_planner, in presentation order.
const std::vector<std::string>& planner_names();

// Runs the named planner; throws npuforge::Error for an unknown name or for fixed offsets
// given to a planner that cannot keep them (naive and greedy-size keep them; best then
// falls back to greedy-size).
PlanResult run_planner(std::string_view name, const PlanProblem& problem,
                       const PlannerOptions& options = {});

PlanResult plan_naive(const PlanProblem& problem);
PlanResult plan_greedy_size(const PlanProblem& problem);
PlanResult plan_lifetime_aware(const PlanProblem& problem, const PlannerOptions& options = {});
PlanResult plan_exact(const PlanProblem& problem, const PlannerOptions& options = {});
PlanResult plan_best(const PlanProblem& problem, const PlannerOptions& options = {});
enum class ListFit { kFirst, kBest };
PlanResult plan_linked_list(const PlanProblem& problem, ListFit fit);

}  // namespace npuforge::planner
