// lifetime-aware: virtual allocation, where every placement stays movable until the plan is final.
// Allocation requests are replayed on virtual offsets inside a pool that may grow. Since
// nothing is real until the end, the order in which requests are served is free: pure
// time order, and coarse time windows (in time order) whose requests are served largest
// first. The gaps for a request are the holes between the placed buffers whose lifetimes
// meet it (in pure time order: the ones still live). For each buffer:
//  1. gaps that fit are scored: little waste first; neighbours that die close to this
//     buffer's death; neighbours that die before the next allocation (a hole about to
//     grow is worth keeping for bigger requests). The lowest score wins.
//  2. no gap fits: free-memory movement. A run of placed buffers between two gaps is
//     shifted into one gap so that the other grows enough. A moved buffer must stay clear
//     of every placed buffer its lifetime meets, dead ones included (the history of each
//     address region), so the move is checked against all of them. Bounded attempts.
//  3. movement fails: pool expansion at the best gap (closest in size to the request,
//     neighbours dying closest in time; the top gap is exempt from the size rule; with
//     peak-aware weight sets, the gap whose widening leaves the lowest pool comes first):
//     every buffer at or above the gap's end, dead or alive, shifts up by the missing amount.
// A final pass drops every buffer as low as the ones below it allow (compaction). The
// (order, weight set) pairs are replayed, cheapest and most promising first, until all are
// done or the time budget runs out (a replay starts only if the longest one so far would end
// in time); greedy-size's placement is a candidate too, so the result is never worse than
// greedy-size. The lowest final pool wins.
// Cost: in time order the live buffers are kept sorted by offset across requests, so a
// request costs O(live) plus its moves; the final pass is greedy-size's interval query,
// bounded above by the buffer's own offset.
#include <algorithm>
#include <chrono>
#include <numeric>
#include <optional>
#include <queue>
#include <tuple>

#include <fmt/core.h>

#include "planner/plan_index.h"
#include "planner/planner.h"
#include "planner/planner_util.h"

namespace npuforge::planner {
namespace {

using Clock = std::chrono::steady_clock;

struct Gap {
  uint64_t lo, hi;        // free bytes [lo, hi); hi == pool for the top gap
  int below = -1, above = -1;  // neighbouring live buffers (-1: pool edge)
  bool top = false;
};

struct Weights {
  double waste, death, soon, top;
  bool peak_expand;  // expansion picks the gap giving the lowest pool height first
};
// The rule weights tried; the lowest final peak wins (ties: the first).
constexpr Weights kWeights[] = {
    {1, 0.5, 0.25, 1, false}, {1, 0, 0, 0, false}, {1, 2, 0.5, 1, false}, {0.2, 1, 0.25, 4, false},
    {1, 0.5, 0.25, 1, true},  {1, 0, 0, 0, true},  {1, 2, 0.5, 1, true},  {0.2, 1, 0.25, 4, true}};
// Above this many buffers only time order with the first four weight sets is replayed:
// every replay costs a pass over all buffers, and the large cases are rarely tight.
constexpr size_t kAllVariantsUpTo = 5000;

// 0 = pure time order; otherwise the number of time windows.
constexpr int kWindows[] = {0, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64};

class Virtual {
 public:
  // keep_live: in time order, keep the live buffers across requests (false: search them per
  // request, as in the other orders; the tests' reference).
  Virtual(const PlanProblem& p, const PlannerOptions& o, Weights w, bool keep_live = true)
      : b_(p.buffers), opt_(o), w_(w), keep_live_(keep_live), off_(b_.size(), 0), moving_(b_.size(), 0),
        placed_index_(b_) {
    for (const auto& x : b_) unit_ = std::lcm(unit_, std::max<uint64_t>(1, x.alignment.value));
    for (const auto& x : b_) horizon_ = std::max<TimeValue>(horizon_, x.lifespan.upper);
  }

  // Replays the allocations in `order` (time order, or time windows each sorted by size);
  // nothing if the deadline passes first.
  std::optional<std::vector<Offset>> run(const std::vector<int>& order, Clock::time_point deadline) {
    time_order_ = keep_live_ && std::is_sorted(order.begin(), order.end(), [&](int x, int y) {
      return b_[x].lifespan.lower < b_[y].lifespan.lower;
    });
    for (size_t k = 0; k < order.size(); ++k) {
      if ((k & 255) == 255 && Clock::now() > deadline) return std::nullopt;
      const TimeValue next = k + 1 < order.size() ? b_[order[k + 1]].lifespan.lower : horizon_;
      const int i = order[k];
      place(i, next);
      placed_.push_back(i);
      placed_index_.activate(i);
      if (time_order_) {  // i joins the live buffers, in offset order (theirs are distinct)
        live_.insert(std::lower_bound(live_.begin(), live_.end(), off_[i], [&](int j, uint64_t at) { return off_[j] < at; }), i);
        deaths_.emplace(b_[i].lifespan.upper, i);
      }
    }
    settle(order);
    return off_;
  }

 private:
  uint64_t end(int i) const { return off_[i] + b_[i].size.value; }

  // The placed buffers whose lifetimes meet buffer i's, into live_, in offset order.
  // In pure time order these are exactly the ones still live when i is allocated: every
  // placed buffer starts no later than i, so it meets i iff it ends after i starts. Then
  // live_ is kept across calls (run() inserts each placed buffer, the dead leave here): no
  // search and no sort per buffer, which were most of a replay's time. The moves keep the
  // live buffers' offset order (expand shifts a whole suffix of offsets; shift_run moves a
  // run within the holes around it), so live_ stays sorted.
  void conflicts(int i) {
    if (time_order_) {
      const TimeValue now = b_[i].lifespan.lower;
      if (deaths_.empty() || deaths_.top().first > now) return;
      while (!deaths_.empty() && deaths_.top().first <= now) deaths_.pop();
      std::erase_if(live_, [&](int j) { return b_[j].lifespan.upper <= now; });
      return;
    }
    live_.clear();
    placed_index_.for_each_meeting(b_[i].lifespan, [&](int j) { live_.push_back(j); });
    std::sort(live_.begin(), live_.end(), [&](int x, int y) { return std::tie(off_[x], x) < std::tie(off_[y], y); });
  }

  // The holes between the buffers of `live` (in offset order) and the top gap, into gaps_.
  const std::vector<Gap>& gaps(const std::vector<int>& live) {
    std::vector<Gap>& out = gaps_;
    out.clear();
    uint64_t top = 0;
    int below = -1;
    for (int j : live) {
      if (off_[j] > top) out.push_back({top, off_[j], below, j});
      if (end(j) >= top) top = end(j), below = j;
    }
    out.push_back({top, std::max(top, pool_), below, -1, true});
    return out;
  }

  // Lower is better. Weights: waste dominates, lifetimes break near-ties.
  double score(const Gap& g, int i, TimeValue next) const {
    const double size = double(b_[i].size.value);
    const double waste = (double(g.hi - g.lo) - size) / size;
    double death = 0, soon = 0;
    const double span = double(std::max<TimeValue>(1, horizon_ - b_[i].lifespan.lower));
    for (int nb : {g.below, g.above}) {
      if (nb < 0) continue;
      death += std::abs(double(b_[nb].lifespan.upper - b_[i].lifespan.upper)) / span;
      soon += b_[nb].lifespan.upper <= next ? 1 : 0;
    }
    return w_.waste * waste + w_.death * death + w_.soon * soon + (g.top ? w_.top : 0.0);
  }

  void place(int i, TimeValue next) {
    const uint64_t size = b_[i].size.value, align = b_[i].alignment.value;
    conflicts(i);
    const std::vector<Gap>& gs = gaps(live_);
    const Gap* best = nullptr;
    double best_score = 0;
    for (const Gap& g : gs) {
      if (align_to(g.lo, align) + size > g.hi) continue;
      const double s = score(g, i, next);
      if (!best || s < best_score) best = &g, best_score = s;
    }
    if (best) {
      off_[i] = align_to(best->lo, align);
      return;
    }
    if (move_free_memory(i, gs)) return;
    expand(i, gs);
  }

  // May buffer j sit at `to` without meeting any placed buffer its lifetime meets (except
  // those flagged in moving_, which move with it)?
  bool clear_at(int j, uint64_t to) const {
    bool clear = true;
    placed_index_.for_each_meeting(b_[j].lifespan, [&](int m) {
      if (!clear || m == j || moving_[m]) return;
      if (off_[m] < to + b_[j].size.value && to < end(m)) clear = false;
    });
    return clear;
  }

  // Shift the live run between gap k and gap k+1 up (into k+1) or down (into k) so that
  // one gap grows to fit buffer i.
  bool move_free_memory(int i, const std::vector<Gap>& gs) {
    const uint64_t size = b_[i].size.value, align = b_[i].alignment.value;
    int attempts = 0;
    for (size_t k = 0; k + 1 < gs.size() && attempts < opt_.max_move_attempts; ++k) {
      const Gap &lo = gs[k], &hi = gs[k + 1];
      if (lo.hi - lo.lo + (hi.top ? 0 : hi.hi - hi.lo) < size) continue;
      ++attempts;
      std::vector<int> run;  // live buffers between the two gaps
      for (int j : live_)
        if (off_[j] >= lo.hi && end(j) <= hi.lo)
          run.push_back(j);
      if (hi.top) continue;
      // Up: the lower gap becomes [lo.lo, lo.hi + d); down: the upper becomes [hi.lo - d, hi.hi).
      const uint64_t up = align_to(align_to(lo.lo, align) + size - lo.hi, unit_);
      if (up <= hi.hi - hi.lo && shift_run(run, up, true)) {
        off_[i] = align_to(lo.lo, align);
        return true;
      }
      const uint64_t start = hi.hi >= size ? (hi.hi - size) / align * align : 0;
      const uint64_t down = start < hi.lo ? align_to(hi.lo - start, unit_) : 0;
      if (start >= lo.lo && down && down <= lo.hi - lo.lo && shift_run(run, down, false)) {
        off_[i] = start;
        return true;
      }
    }
    return false;
  }

  bool shift_run(const std::vector<int>& run, uint64_t d, bool up) {
    for (int j : run) moving_[j] = 1;
    bool clear = true;
    for (size_t k = 0; k < run.size() && clear; ++k)
      clear = clear_at(run[k], up ? off_[run[k]] + d : off_[run[k]] - d);
    for (int j : run) moving_[j] = 0;
    if (!clear) return false;
    for (int j : run) off_[j] = up ? off_[j] + d : off_[j] - d;
    return true;
  }

  void expand(int i, const std::vector<Gap>& gs) {
    const uint64_t size = b_[i].size.value, align = b_[i].alignment.value;
    // Peak-aware expansion: the height the pool reaches if gap g is widened (everything at
    // or above g.hi moves up by the missing amount), from the suffix maxima of the ends.
    std::vector<std::pair<uint64_t, uint64_t>> spans;  // (offset, end) of placed buffers
    std::vector<uint64_t> prefix, suffix;               // max end below / from index k
    if (w_.peak_expand) {
      for (int j : placed_) spans.emplace_back(off_[j], end(j));
      std::sort(spans.begin(), spans.end());
      prefix.assign(spans.size() + 1, 0);
      suffix.assign(spans.size() + 1, 0);
      for (size_t k = 0; k < spans.size(); ++k) prefix[k + 1] = std::max(prefix[k], spans[k].second);
      for (size_t k = spans.size(); k-- > 0;) suffix[k] = std::max(suffix[k + 1], spans[k].second);
    }
    auto height_after = [&](const Gap& g) -> double {
      if (!w_.peak_expand) return 0;
      const uint64_t at = align_to(g.lo, align);
      const uint64_t missing = g.top ? 0 : align_to(at + size - g.hi, unit_);
      const size_t k = size_t(std::lower_bound(spans.begin(), spans.end(), std::make_pair(g.hi, uint64_t(0))) - spans.begin());
      const uint64_t above = k == spans.size() ? 0 : suffix[k] + missing;
      return double(std::max({prefix[k], above, at + size}));
    };
    const Gap* best = nullptr;
    double best_score = 0, best_height = 0;
    for (const Gap& g : gs) {
      const double height = height_after(g);
      if (best && height > best_height) continue;
      const double closeness = g.top ? 0 : std::abs(double(g.hi - g.lo) - double(size)) / double(size);
      double death = 0;
      for (int nb : {g.below, g.above})
        if (nb >= 0) death += std::abs(double(b_[nb].lifespan.upper - b_[i].lifespan.upper)) /
                              double(std::max<TimeValue>(1, horizon_));
      const double s = closeness + death + (g.top ? 0.5 : 0.0);
      if (!best || height < best_height || s < best_score) best = &g, best_score = s, best_height = height;
    }
    const uint64_t at = align_to(best->lo, align);
    const uint64_t missing = align_to(at + size - best->hi, unit_);
    if (!best->top)
      for (int j : placed_)
        if (off_[j] >= best->hi) off_[j] += missing;
    pool_ = std::max(pool_ + (best->top ? 0 : missing), at + size);
    off_[i] = at;
  }

  // Before the offsets become final: in offset order, drop every buffer to the lowest
  // offset clear of the buffers already settled that its lifetime meets. Each buffer's
  // old offset stays clear (settled ones only moved down), so no offset ever rises.
  void settle(std::vector<int> ids) {
    std::stable_sort(ids.begin(), ids.end(), [&](int x, int y) { return off_[x] < off_[y]; });
    GapIndex settled(b_);  // every id has a non-empty lifetime and size
    std::vector<Segment> busy;
    for (int i : ids) {
      const uint64_t size = b_[i].size.value, align = b_[i].alignment.value;
      // Nothing at or above off_[i] + size can change the answer (off_[i] is clear).
      settled.occupied(b_[i].lifespan, busy, off_[i] + size);
      uint64_t at = 0;
      for (const Segment& s : busy) {
        if (align_to(at, align) + size <= s.lo) break;
        at = std::max(at, s.hi);
      }
      off_[i] = std::min(off_[i], align_to(at, align));
      settled.insert(b_[i].lifespan, {off_[i], end(i)});
    }
  }

  const std::vector<PlanBuffer>& b_;
  const PlannerOptions& opt_;
  const Weights w_;
  const bool keep_live_;
  std::vector<Offset> off_;
  std::vector<char> moving_;        // shift_run: the buffers moving together
  std::vector<int> placed_, live_;  // live_: the placed buffers meeting the current one
  std::vector<Gap> gaps_;           // gaps(): reused
  bool time_order_ = false;         // run(): every buffer starts no earlier than the previous
  // Time order: the live buffers' ends, soonest first (conflicts() drops the dead from live_).
  std::priority_queue<std::pair<TimeValue, int>, std::vector<std::pair<TimeValue, int>>, std::greater<>> deaths_;
  LiveIndex placed_index_;
  uint64_t pool_ = 0, unit_ = 1;
  TimeValue horizon_ = 0;
};

// The allocation orders replayed. Offsets are virtual, so the order in which requests are
// served is free: pure time order, and time windows (the lifetime order of the windows
// kept) inside which the larger requests are served first.
std::vector<std::vector<int>> replay_orders(const std::vector<PlanBuffer>& b) {
  std::vector<int> ids;
  TimeValue t0 = 0, t1 = 0;
  for (size_t i = 0; i < b.size(); ++i)
    if (b[i].size.value > 0 && b[i].lifespan.lower < b[i].lifespan.upper) {
      if (ids.empty() || b[i].lifespan.lower < t0) t0 = b[i].lifespan.lower;
      t1 = std::max(t1, b[i].lifespan.lower);
      ids.push_back(int(i));
    }
  std::vector<std::vector<int>> orders;
  for (int windows : kWindows) {
    if (windows && ids.size() > kAllVariantsUpTo) break;
    const double width = double(t1 - t0 + 1) / windows;
    auto window = [&](int i) { return windows == 0 ? 0 : int64_t(double(b[i].lifespan.lower - t0) / width); };
    std::vector<int> order = ids;
    std::stable_sort(order.begin(), order.end(), [&](int x, int y) {
      if (windows == 0) return b[x].lifespan.lower < b[y].lifespan.lower;
      return std::make_tuple(window(x), b[y].size.value, b[x].lifespan.lower) <
             std::make_tuple(window(y), b[x].size.value, b[y].lifespan.lower);
    });
    orders.push_back(std::move(order));
  }
  return orders;
}

}  // namespace

std::vector<Offset> lifetime_aware_time_order_replay(const PlanProblem& problem, size_t weight_set, bool keep_live) {
  const PlannerOptions options;
  return *Virtual(problem, options, kWeights[weight_set % std::size(kWeights)], keep_live)
              .run(replay_orders(problem.buffers).front(), Clock::time_point::max());
}

PlanResult lifetime_aware_replays(const PlanProblem& problem, const PlannerOptions& options) {
  reject_fixed_offsets(problem, "lifetime-aware");
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                           std::chrono::duration<double>(options.time_limit_s));
  PlanResult best;
  best.found = false;
  int replays = 0, skipped = 0;
  Clock::duration longest{0};  // of the replays run so far
  const std::vector<std::vector<int>> orders = replay_orders(problem.buffers);
  for (size_t o = 0; o < orders.size(); ++o)
    for (size_t w = 0; w < std::size(kWeights); ++w) {
      if (w >= 4 && problem.buffers.size() > kAllVariantsUpTo) break;
      std::optional<std::vector<Offset>> offsets;
      // The guaranteed replays come first in this order; they ignore the deadline. Another
      // replay starts only if the longest so far would still end in time: one cut halfway is
      // wasted (at a million buffers a replay takes seconds).
      const bool guaranteed = replays + skipped < options.guaranteed_replays;
      const auto start = Clock::now();
      if (guaranteed || (start <= deadline && deadline - start >= longest)) {
        offsets = Virtual(problem, options, kWeights[w]).run(orders[o], guaranteed ? Clock::time_point::max() : deadline);
        longest = std::max(longest, Clock::now() - start);
      }
      if (!offsets) {
        ++skipped;
        continue;
      }
      ++replays;
      PlanResult r = finish(problem, std::move(*offsets), problem.capacity);
      if (!best.found || r.peak < best.peak) {
        best = std::move(r);
        best.note = fmt::format("replay order: {}, weight set {}",
                                kWindows[o] ? fmt::format("{} time windows by size", kWindows[o])
                                            : std::string("time order"), w);
      }
    }
  if (skipped)
    best.note += fmt::format("{}{} of {} replays cut by the {:.3g} s budget", best.note.empty() ? "" : "; ", skipped,
                             skipped + replays, options.time_limit_s);
  best.winner = "lifetime-aware";
  return best;
}

PlanResult plan_lifetime_aware(const PlanProblem& problem, const PlannerOptions& options) {
  // greedy-size is a candidate too: it wins only when strictly lower than every replay. It
  // runs first and its time counts against the budget, which then bounds the whole planner
  // (best gives its lifetime-aware member the same budget after the same greedy-size).
  reject_fixed_offsets(problem, "lifetime-aware");
  const auto start = Clock::now();
  PlanResult greedy = plan_greedy_size(problem);
  PlannerOptions rest = options;
  rest.time_limit_s = std::max(0.0, options.time_limit_s - std::chrono::duration<double>(Clock::now() - start).count());
  PlanResult best = lifetime_aware_replays(problem, rest);
  if (!best.found || greedy.peak < best.peak) {
    const std::string replays = best.note;
    greedy.note = best.found ? "greedy-size's placement (lower than every replay)" : "greedy-size's placement";
    if (!replays.empty() && !best.found) greedy.note += "; " + replays;
    else if (replays.find("cut by") != std::string::npos)
      greedy.note += replays.substr(replays.find(';'));
    best = std::move(greedy);
    best.winner = "greedy-size";
  }
  return best;
}

}  // namespace npuforge::planner
