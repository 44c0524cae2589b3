// best: a portfolio under one time budget.
//  1. The problem splits into independent time windows: no lifetime crosses the boundary
//     between two windows, so each is planned alone from offset 0 and the peak is the
//     highest window's peak (the optimum too is the highest window's optimum).
//  2. Every window gets greedy-size (O(n log^2 n)). A window whose peak equals its load
//     bound is optimal.
//  3. The window with the highest peak is improved with the costlier planners in order of
//     cost: linked-list first/best fit (small windows), lifetime-aware, then exact when the
//     window is small enough. greedy-size and lifetime-aware's guaranteed replays
//     (PlannerOptions::guaranteed_replays) always complete, even past the budget, so a cut
//     budget never leaves best worse than those members; the rest run while time remains.
//     exact's proofs (infeasible capacities) raise the window's lower bound; once the
//     highest window is proven optimal, so is the whole plan.
//  Every member's placement is kept only if strictly lower than the window's best so far,
//  so best is never worse than any member it ran; the note names the winner and the members
//  tried on the highest window with their peaks.
// Buffers never live (empty lifetime) or of size 0 share no byte with anyone: offset 0.
#include <algorithm>
#include <chrono>
#include <numeric>

#include <fmt/core.h>

#include "planner/planner.h"
#include "planner/planner_util.h"
#include "util/error.h"

namespace npuforge::planner {
namespace {

using Clock = std::chrono::steady_clock;

// Above this many buffers a window is not given to exact (its search would only eat time).
constexpr size_t kExactUpTo = 1000;
// Above this many buffers the linked-list replays are skipped (first fit over a free list).
constexpr size_t kListUpTo = 20000;

struct Window {
  std::vector<size_t> ids;  // buffers of the original problem
  PlanProblem problem;      // their copy, in the same order
  PlanResult result;
  Bytes lower_bound;
  int stage = 0;            // 0: greedy done, 1: cheap heuristics done, 2: all tried
  bool proven = false;
  std::string tried;        // the members run and their peaks, for the note
};

std::vector<Window> split_windows(const PlanProblem& problem) {
  std::vector<size_t> ids;
  for (size_t i = 0; i < problem.buffers.size(); ++i)
    if (problem.buffers[i].size.value > 0 && problem.buffers[i].lifespan.lower < problem.buffers[i].lifespan.upper)
      ids.push_back(i);
  std::stable_sort(ids.begin(), ids.end(), [&](size_t a, size_t b) {
    return problem.buffers[a].lifespan.lower < problem.buffers[b].lifespan.lower;
  });
  std::vector<Window> windows;
  TimeValue reach = 0;
  for (size_t i : ids) {
    const Lifespan& life = problem.buffers[i].lifespan;
    if (windows.empty() || life.lower >= reach) windows.emplace_back();
    reach = windows.back().ids.empty() ? life.upper : std::max(reach, life.upper);
    windows.back().ids.push_back(i);
  }
  for (Window& w : windows) {
    std::sort(w.ids.begin(), w.ids.end());  // input order inside a window: same tie-breaks
    w.problem.buffers.reserve(w.ids.size());
    for (size_t i : w.ids) w.problem.buffers.push_back(problem.buffers[i]);
  }
  return windows;
}

double seconds_left(Clock::time_point deadline) {
  return std::chrono::duration<double>(deadline - Clock::now()).count();
}

void consider(Window& w, PlanResult r, const std::string& planner) {
  if (!r.found) return;
  w.tried += fmt::format(", {} {}", planner, r.peak.value);
  if (planner == "lifetime-aware" && r.note.find("cut by") != std::string::npos)
    w.tried += " (" + r.note.substr(r.note.find("; ") + 2) + ")";
  if (r.peak >= w.result.peak) return;
  r.winner = planner;
  w.result = std::move(r);
  w.proven = w.result.peak <= w.lower_bound;
}

// One more step of improvement for window w; false when nothing is left to try. `share` of
// the time left goes to the window's last planner (exact, or lifetime-aware when the window
// is too large for exact): all of it when no other window may need time afterwards.
bool improve(Window& w, Clock::time_point deadline, double share, const PlannerOptions& options) {
  const size_t n = w.problem.buffers.size();
  if (w.stage == 0) {
    w.stage = 1;
    if (n <= kListUpTo)
      for (ListFit fit : {ListFit::kFirst, ListFit::kBest}) {
        try {
          consider(w, plan_linked_list(w.problem, fit), fit == ListFit::kFirst ? "linked-list" : "linked-list-best");
        } catch (const Error&) {  // beyond the allocator's 32-bit range: not a candidate
        }
      }
    if (!w.proven) {
      PlannerOptions o = options;  // all the time left when exact will not follow
      o.time_limit_s = std::max(0.0, seconds_left(deadline) * (n > kExactUpTo ? share : 0.5));
      consider(w, lifetime_aware_replays(w.problem, o), "lifetime-aware");  // greedy's is w.result
    }
    return true;
  }
  if (w.stage == 1) {
    w.stage = 2;
    if (n > kExactUpTo) return false;
    PlannerOptions o = options;
    o.capacity.reset();  // exact searches the window's smallest peak, below the incumbent's
    o.peak_to_beat = w.result.peak;
    o.time_limit_s = std::max(0.0, seconds_left(deadline) * share);
    PlanResult r = plan_exact(w.problem, o);
    w.lower_bound = std::max(w.lower_bound, r.lower_bound);
    consider(w, std::move(r), "exact");
    w.proven = w.result.peak <= w.lower_bound;
    return true;
  }
  return false;
}

}  // namespace

PlanResult plan_best(const PlanProblem& problem, const PlannerOptions& options) {
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                           std::chrono::duration<double>(options.time_limit_s));
  const Bytes load = lower_bound(problem);
  for (const auto& b : problem.buffers)
    if (b.offset) {
      PlanResult r = plan_greedy_size(problem);
      r.winner = "greedy-size";
      r.lower_bound = load;
      r.proven_optimal = r.peak <= load;
      r.note = "fixed offsets: only greedy-size keeps them";
      return r;
    }
  std::vector<Window> windows = split_windows(problem);
  for (Window& w : windows) {
    w.result = plan_greedy_size(w.problem);
    w.result.winner = "greedy-size";
    w.tried = fmt::format("greedy-size {}", w.result.peak.value);
    w.lower_bound = lower_bound(w.problem);
    w.proven = w.result.peak <= w.lower_bound;
  }
  // Improve the highest window until it is optimal, nothing is left to try, or time is up;
  // the cheap stage (linked-list, lifetime-aware's guaranteed replays) runs even past it.
  while (!windows.empty()) {
    Window& top = *std::max_element(windows.begin(), windows.end(), [](const Window& a, const Window& b) {
      return a.result.peak < b.result.peak;
    });
    if (top.proven || (top.stage > 0 && Clock::now() >= deadline)) break;
    if (!improve(top, deadline, windows.size() == 1 ? 1.0 : 0.5, options)) break;
  }
  std::vector<Offset> offsets(problem.buffers.size(), 0);
  size_t top = 0;
  Bytes proven_bound = load;
  for (size_t k = 0; k < windows.size(); ++k) {
    for (size_t j = 0; j < windows[k].ids.size(); ++j) offsets[windows[k].ids[j]] = windows[k].result.offsets[j];
    if (windows[k].result.peak > windows[top].result.peak) top = k;
    proven_bound = std::max(proven_bound, windows[k].lower_bound);
  }
  PlanResult r = finish(problem, std::move(offsets), options.capacity ? options.capacity : problem.capacity);
  r.lower_bound = proven_bound;
  r.proven_optimal = r.peak <= proven_bound;
  if (windows.empty()) {
    r.winner = "naive";
    r.note = "nothing is ever live";
    return r;
  }
  const Window& w = windows[top];
  r.winner = w.result.winner;
  r.note += fmt::format("{}{} won ({} independent time window{}; the highest has {} buffers){}; lower bound {}{}; "
                        "peaks of the members tried on the highest window: {}",
                        r.note.empty() ? "" : "; ", r.winner, windows.size(), windows.size() == 1 ? "" : "s",
                        w.ids.size(), r.proven_optimal ? ", optimal" : "", proven_bound.value,
                        proven_bound > load ? " (raised above the load bound by exact's proofs)" : "", w.tried);
  return r;
}

}  // namespace npuforge::planner
