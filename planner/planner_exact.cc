// exact: a complete branch-and-bound search in the style of MiniMalloc (Moffitt, ASPLOS'23).
// Ideas used (our own implementation):
//  - canonical solutions: buffers are placed in non-decreasing (offset, rank) order, each at
//    its lowest feasible offset (the top of the placed buffers it conflicts with), so every
//    packing is reached once;
//  - sections: the sets of buffers live just before each end time. A section's floor (top
//    of its placed buffers) plus its unplaced total must fit the capacity (inference);
//  - dominance: never place a buffer at or above the lowest height some unplaced buffer
//    could reach, since that buffer would fit below;
//  - independent partitions (time ranges no buffer crosses) are solved separately, and
//    dynamically: once every buffer crossing a section boundary is placed, the two sides
//    become separate subproblems (each with its own preorder), and a failing side fails
//    the node without retrying the other side's choices;
//  - hatless pruning: when a placed buffer had no unplaced buffer overlapping it and its
//    subtree failed, its siblings are not tried;
//  - round robin over three static preorders with doubling node limits, under a deadline.
// With no capacity, it searches the smallest peak between the lower bound and greedy-size.
#include <algorithm>
#include <chrono>
#include <functional>
#include <string>
#include <numeric>
#include <tuple>

#include <fmt/core.h>

#include "planner/planner.h"
#include "planner/planner_util.h"
#include "util/error.h"

namespace npuforge::planner {
namespace {

using Clock = std::chrono::steady_clock;
enum class Status { kFound, kInfeasible, kAborted, kTimeout };

struct Sweep {
  std::vector<std::vector<int>> sections;       // buffers live just before each end time
  std::vector<std::pair<int, int>> span;        // buffer -> [first, last) section
  std::vector<std::vector<int>> overlaps;       // buffer -> conflicting buffers
  std::vector<std::pair<std::vector<int>, std::pair<int, int>>> partitions;
};

Sweep sweep(const std::vector<PlanBuffer>& b, const std::vector<int>& ids) {
  Sweep s;
  s.span.resize(b.size());
  s.overlaps.resize(b.size());
  std::vector<std::tuple<TimeValue, int, int>> ev;  // (time, 0 end / 1 start, buffer)
  for (int i : ids) {
    ev.emplace_back(b[i].lifespan.lower, 1, i);
    ev.emplace_back(b[i].lifespan.upper, 0, i);
  }
  std::sort(ev.begin(), ev.end());
  std::vector<int> live;
  TimeValue last = ev.empty() ? 0 : std::get<0>(ev[0]);
  int part_start = 0;
  for (const auto& [t, kind, i] : ev) {
    if (kind == 0) {
      if (t > last || s.sections.empty() || s.span[i].first == int(s.sections.size())) {
        last = t;
        s.sections.push_back(live);
      }
      live.erase(std::find(live.begin(), live.end(), i));
      s.span[i].second = int(s.sections.size());
      if (live.empty()) {
        s.partitions.back().second = {part_start, int(s.sections.size())};
        part_start = int(s.sections.size());
      }
    } else {
      if (live.empty()) s.partitions.push_back({});
      s.partitions.back().first.push_back(i);
      for (int j : live) {
        s.overlaps[i].push_back(j);
        s.overlaps[j].push_back(i);
      }
      live.push_back(i);
      s.span[i].first = int(s.sections.size());
    }
  }
  return s;
}

class Search {
 public:
  Search(const std::vector<PlanBuffer>& b, const Sweep& sw, uint64_t capacity,
         Clock::time_point deadline)
      : b_(b), sw_(sw), cap_(capacity), deadline_(deadline) {}

  // Solves all partitions with one preorder; offsets() holds the result when kFound.
  Status solve(const std::string& heuristic, int64_t node_limit) {
    offsets_.assign(b_.size(), kNone);
    solution_.assign(b_.size(), 0);
    min_off_.assign(b_.size(), 0);
    rank_.assign(b_.size(), 0);
    floor_.assign(sw_.sections.size(), 0);
    total_.assign(sw_.sections.size(), 0);
    cuts_.assign(sw_.sections.size(), 0);
    for (size_t s = 0; s < sw_.sections.size(); ++s)
      for (int i : sw_.sections[s]) total_[s] += b_[i].size.value;
    for (const auto& [ids, range] : sw_.partitions)
      for (int i : ids)
        for (int s = sw_.span[i].first; s + 1 < sw_.span[i].second; ++s) ++cuts_[s];
    heuristic_ = heuristic;
    nodes_left_ = node_limit;
    for (const auto& [ids, range] : sw_.partitions) {
      const Status st = subsolve(ids, range);
      if (st != Status::kFound) return st;
    }
    return Status::kFound;
  }
  const std::vector<uint64_t>& offsets() const { return solution_; }

 private:
  static constexpr uint64_t kNone = UINT64_MAX;
  using Range = std::pair<int, int>;

  // An independent subproblem: its own preorder (from the section totals still to place)
  // and a fresh canonical order. Ranks of an enclosing search are restored on return.
  Status subsolve(const std::vector<int>& ids, Range range) {
    std::vector<int> order = preorder(ids);
    std::vector<int> saved(order.size());
    for (size_t k = 0; k < order.size(); ++k) saved[k] = rank_[order[k]], rank_[order[k]] = int(k);
    const Status st = dfs(order, range, 0, -1);
    for (size_t k = 0; k < order.size(); ++k) rank_[order[k]] = saved[k];
    return st;
  }

  std::vector<int> preorder(std::vector<int> ids) const {
    auto key = [&](int i, char c) -> uint64_t {
      const uint64_t width = uint64_t(b_[i].lifespan.upper - b_[i].lifespan.lower);
      if (c == 'W') return width;
      if (c == 'A') return width * b_[i].size.value;
      uint64_t t = 0;  // 'T': the largest section total the buffer takes part in
      for (int s = sw_.span[i].first; s < sw_.span[i].second; ++s) t = std::max(t, total_[s]);
      return t;
    };
    std::vector<std::tuple<uint64_t, uint64_t, uint64_t, int>> keyed;
    for (int i : ids) keyed.emplace_back(key(i, heuristic_[0]), key(i, heuristic_[1]), key(i, heuristic_[2]), -i);
    std::sort(keyed.begin(), keyed.end(), std::greater<>());
    for (size_t k = 0; k < ids.size(); ++k) ids[k] = -std::get<3>(keyed[k]);
    return ids;
  }

  bool out_of_time() {
    if (--nodes_left_ < 0) return true;
    return (++ticks_ & 255) == 0 && Clock::now() > deadline_;
  }

  Status dfs(const std::vector<int>& prev, Range range, uint64_t last_off, int last_rank) {
    if (out_of_time()) return nodes_left_ < 0 ? Status::kAborted : Status::kTimeout;
    std::vector<int> order;
    order.reserve(prev.size());
    for (int i : prev)
      if (offsets_[i] == kNone) order.push_back(i);
    if (order.empty()) return Status::kFound;
    std::sort(order.begin(), order.end(), [&](int x, int y) {
      return std::tie(min_off_[x], rank_[x]) < std::tie(min_off_[y], rank_[y]);
    });
    uint64_t min_height = UINT64_MAX;
    for (int i : order) min_height = std::min(min_height, min_off_[i] + b_[i].size.value);
    for (int i : order) {
      const uint64_t off = min_off_[i];
      if (off < last_off || (off == last_off && rank_[i] < last_rank)) continue;  // canonical
      if (off >= min_height) break;  // dominated, and so is everything after it
      bool hatless = true;
      const Status st = place_and_recurse(order, range, i, off, hatless);
      if (st != Status::kInfeasible) return st;
      // Nothing unplaced above it: its position constrained no one, so every other
      // choice here leads to the same failure (MiniMalloc's "hatless" pruning).
      if (hatless) break;
    }
    return Status::kInfeasible;
  }

  Status place_and_recurse(const std::vector<int>& order, Range range, int i, uint64_t off,
                           bool& hatless) {
    const uint64_t height = off + b_[i].size.value;
    offsets_[i] = off;
    solution_[i] = off;  // the last write on the successful path is the answer
    const size_t offset_mark = offset_log_.size(), floor_mark = floor_log_.size();
    for (int j : sw_.overlaps[i]) {
      if (offsets_[j] != kNone) continue;
      hatless = false;
      if (min_off_[j] >= height) continue;
      offset_log_.emplace_back(j, min_off_[j]);
      min_off_[j] = align_to(height, b_[j].alignment.value);
    }
    const auto [s0, s1] = sw_.span[i];
    for (int s = s0; s < s1; ++s) {
      floor_log_.emplace_back(s, floor_[s]);
      floor_[s] = height;
      total_[s] -= b_[i].size.value;
    }
    raise_unplaced_floors(offset_mark);
    Status st = Status::kInfeasible;
    if (feasible(range, off)) st = decompose(order, range, i, off);
    for (size_t k = floor_log_.size(); k-- > floor_mark;) floor_[floor_log_[k].first] = floor_log_[k].second;
    floor_log_.resize(floor_mark);
    for (int s = s0; s < s1; ++s) total_[s] += b_[i].size.value;
    for (size_t k = offset_log_.size(); k-- > offset_mark;) min_off_[offset_log_[k].first] = offset_log_[k].second;
    offset_log_.resize(offset_mark);
    offsets_[i] = kNone;
    return st;
  }

  // Dynamic decomposition: once no unplaced buffer crosses a section boundary (its cut
  // count drops to zero), the two sides no longer interact and are solved separately;
  // if one side fails, no choice on the other side can help.
  Status decompose(const std::vector<int>& order, Range range, int i, uint64_t off) {
    std::vector<int> cutpoints = {range.first};
    const auto [s0, s1] = sw_.span[i];
    for (int s = s0; s + 1 < s1; ++s)
      if (--cuts_[s] == 0) cutpoints.push_back(s + 1);
    Status st = Status::kFound;
    if (cutpoints.size() == 1) {
      st = dfs(order, range, off, rank_[i]);
    } else {
      cutpoints.push_back(range.second);
      for (size_t c = 1; c < cutpoints.size() && st == Status::kFound; ++c) {
        const Range sub = {cutpoints[c - 1], cutpoints[c]};
        std::vector<int> ids;
        for (int j : order)
          if (offsets_[j] == kNone && sw_.span[j].first < sub.second && sub.first < sw_.span[j].second)
            ids.push_back(j);
        if (!ids.empty()) st = subsolve(ids, sub);
      }
    }
    for (int s = s0; s + 1 < s1; ++s) ++cuts_[s];
    return st;
  }

  // A section's floor is at least the lowest offset any of its unplaced buffers can take.
  // Each section touched by a raised minimum offset is revisited once (stamped).
  void raise_unplaced_floors(size_t offset_mark) {
    if (stamp_.size() != sw_.sections.size()) stamp_.assign(sw_.sections.size(), 0);
    ++epoch_;
    for (size_t k = offset_mark; k < offset_log_.size(); ++k) {
      const int j = offset_log_[k].first;
      for (int s = sw_.span[j].first; s < sw_.span[j].second; ++s) {
        if (stamp_[s] == epoch_) continue;
        stamp_[s] = epoch_;
        uint64_t lowest = UINT64_MAX;
        for (int m : sw_.sections[s])
          if (offsets_[m] == kNone) lowest = std::min(lowest, min_off_[m]);
        if (lowest != UINT64_MAX && floor_[s] < lowest) {
          floor_log_.emplace_back(s, floor_[s]);
          floor_[s] = lowest;
        }
      }
    }
  }

  // Section inference with a monotonic floor: later placements are no lower than `off`.
  bool feasible(Range range, uint64_t off) const {
    for (int s = range.first; s < range.second; ++s)
      if (std::max(off, floor_[s]) + total_[s] > cap_) return false;
    return true;
  }

  const std::vector<PlanBuffer>& b_;
  const Sweep& sw_;
  const uint64_t cap_;
  const Clock::time_point deadline_;
  std::string heuristic_;
  std::vector<uint64_t> offsets_, solution_, min_off_, floor_, total_;
  std::vector<int> rank_, cuts_;
  std::vector<std::pair<int, uint64_t>> offset_log_, floor_log_;
  std::vector<uint64_t> stamp_;
  uint64_t epoch_ = 0;
  int64_t nodes_left_ = 0;
  uint64_t ticks_ = 0;
};

// Round robin over the preorders with doubling node limits, until found, proven
// infeasible (any complete run), or the deadline.
Status solve_within(const std::vector<PlanBuffer>& b, const Sweep& sw, uint64_t capacity,
                    Clock::time_point deadline, std::vector<uint64_t>& out) {
  Search search(b, sw, capacity, deadline);
  for (int64_t limit = int64_t(b.size()) * 2;; limit *= 2) {
    for (const std::string h : {"WAT", "TAW", "TWA"}) {
      const Status st = search.solve(h, limit);
      if (st == Status::kFound) out = search.offsets();
      if (st != Status::kAborted) return st;
    }
  }
}

// Cheap placements the search can start from: greedy by size and the allocator replays
// (which the allocator refuses for alignments that are not powers of two, or beyond its
// 32-bit range: then they are no candidates).
std::vector<PlanResult> heuristic_plans(const PlanProblem& problem) {
  std::vector<PlanResult> out;
  out.push_back(plan_greedy_size(problem));
  out.back().note = "greedy-size";
  for (ListFit fit : {ListFit::kFirst, ListFit::kBest}) {
    try {
      out.push_back(plan_linked_list(problem, fit));
    } catch (const Error&) {
      continue;
    }
    out.back().note = fit == ListFit::kFirst ? "linked-list" : "linked-list-best";
  }
  return out;
}

}  // namespace

PlanResult plan_exact(const PlanProblem& problem, const PlannerOptions& options) {
  reject_fixed_offsets(problem, "exact");
  const auto start = Clock::now();
  const auto deadline = start + std::chrono::duration_cast<Clock::duration>(
                                    std::chrono::duration<double>(options.time_limit_s));
  const std::optional<Bytes> capacity = options.capacity ? options.capacity : problem.capacity;
  std::vector<int> ids;  // buffers that take part: live for some time and non-empty
  for (size_t i = 0; i < problem.buffers.size(); ++i)
    if (problem.buffers[i].size.value > 0 && problem.buffers[i].lifespan.lower < problem.buffers[i].lifespan.upper)
      ids.push_back(int(i));
  const Sweep sw = sweep(problem.buffers, ids);
  std::vector<uint64_t> found(problem.buffers.size(), 0);
  const uint64_t lb = lower_bound(problem).value;
  if (capacity) {
    // Warm start: a heuristic placement that already fits answers the question at once (the
    // generator's tight memory maps are like that); the search runs only when none does.
    for (const PlanResult& h : heuristic_plans(problem))
      if (h.found && h.peak.value <= capacity->value) {
        PlanResult r = h;
        r.fits = true;
        r.proven_optimal = r.peak.value == lb;
        r.lower_bound = Bytes{lb};
        r.note = "a heuristic placement (" + r.note + ") already fits the capacity; no search needed";
        return r;
      }
    std::vector<uint64_t> out;
    const Status st = solve_within(problem.buffers, sw, capacity->value, deadline, out);
    if (st != Status::kFound) {
      PlanResult r;
      r.found = r.fits = false;
      r.timed_out = st == Status::kTimeout;
      r.note = r.timed_out ? fmt::format("no placement within capacity {} found in {} s",
                                         capacity->value, options.time_limit_s)
                           : fmt::format("proved: no placement fits capacity {}", capacity->value);
      r.lower_bound = Bytes{r.timed_out ? lb : std::max(lb, capacity->value + 1)};
      return r;
    }
    for (int i : ids) found[i] = out[i];
    PlanResult r = finish(problem, std::move(found), capacity);
    r.proven_optimal = r.peak.value == lb;
    r.lower_bound = Bytes{lb};
    return r;
  }
  // No capacity: shrink from the best heuristic peak; every "infeasible" below is a proof.
  PlanResult best = plan_greedy_size(problem);
  for (const PlanResult& h : heuristic_plans(problem))
    if (h.found && h.peak < best.peak) best = h;
  uint64_t lo = lb, hi = best.peak.value;
  // A peak reached elsewhere (best's incumbent) narrows the search to what would beat it.
  if (options.peak_to_beat && options.peak_to_beat->value < hi) hi = std::max(lb, options.peak_to_beat->value);
  uint64_t proven_lo = lb;  // every capacity below it was proved infeasible
  bool proven = true, timed_out = false;
  while (lo < hi && Clock::now() < deadline) {
    const uint64_t mid = lo == lb ? lo : lo + (hi - lo) / 2;  // try the lower bound first
    // Each attempt gets part of what is left, so one hard capacity cannot eat the budget.
    const auto now = Clock::now();
    const auto attempt_deadline = now + (deadline - now) / (lo == lb ? 4 : 2);
    std::vector<uint64_t> out;
    const Status st = solve_within(problem.buffers, sw, mid, attempt_deadline, out);
    if (st == Status::kFound) {
      for (int i : ids) found[i] = out[i];
      best = finish(problem, found, std::nullopt);
      hi = best.peak.value;
    } else {
      if (st == Status::kTimeout) proven = false, timed_out = true;
      else proven_lo = std::max(proven_lo, mid + 1);  // infeasible at mid: at every capacity <= mid
      lo = mid + 1;
    }
  }
  if (lo < hi) proven = false, timed_out = true;
  // proven: no peak below hi exists. best is at hi unless the peak to beat set hi and
  // nothing below it was found: then hi is the proven optimum, reached by the caller only.
  best.proven_optimal = proven && best.peak.value == hi;
  best.timed_out = timed_out;
  best.lower_bound = Bytes{proven ? hi : proven_lo};
  if (proven && best.peak.value > hi) {
    best.note = fmt::format("proved: no peak below the peak to beat {} (this placement: {})", hi, best.peak.value);
    return best;
  }
  best.note = proven ? fmt::format("optimal peak {}", best.peak.value)
                     : fmt::format("best peak {} (not proven optimal within {} s; lower bound {}{})",
                                   best.peak.value, options.time_limit_s, proven_lo,
                                   proven_lo > lb ? fmt::format(", raised from the load bound {} by "
                                                                "proofs of infeasibility", lb) : "");
  return best;
}

}  // namespace npuforge::planner
