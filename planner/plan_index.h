#pragma once
// Interval structures shared by the constructive planners (not a public API). Both answer
// "which placed buffers meet this lifetime" without scanning every placed buffer, which made
// the planners quadratic on traces of tens of thousands of buffers.
//
//   LiveIndex  enumerates the active (placed) buffers whose lifetimes meet a query lifetime:
//              a max-upper segment tree over the buffers sorted by lower, O((k + 1) log n).
//   GapIndex   gives the union of the offset ranges of the placed buffers whose lifetimes meet
//              a query lifetime, merged into disjoint intervals, without listing the buffers:
//              a segment tree over time whose nodes keep merged offset-interval sets; the
//              nodes of one level also keep the union of their ancestors' sets (long-lived
//              buffers), which short queries would otherwise gather set by set.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "planner/plan_problem.h"

namespace npuforge::planner {

// Half-open byte range [lo, hi).
struct Segment {
  uint64_t lo = 0, hi = 0;
  bool operator==(const Segment&) const = default;
};

class LiveIndex {
 public:
  explicit LiveIndex(const std::vector<PlanBuffer>& buffers);
  void activate(int buffer);
  // Calls visit(j) for every active j with lower_j < life.upper && life.lower < upper_j
  // (the conflict rule of Lifespan::intersects; an empty query lifetime works too).
  template <typename Visit>
  void for_each_meeting(Lifespan life, Visit&& visit) const;

 private:
  template <typename Visit>
  void descend(size_t node, size_t first, size_t width, size_t end, TimeValue lower,
               Visit& visit) const;

  const std::vector<PlanBuffer>& b_;
  std::vector<int> by_lower_;        // buffer ids sorted by (lower, id)
  std::vector<TimeValue> lowers_;    // lower of by_lower_[k]
  std::vector<size_t> rank_;         // buffer id -> position in by_lower_
  std::vector<TimeValue> max_upper_; // segment tree: max upper of active leaves (kEmpty if none)
  size_t leaves_ = 1;
  static constexpr TimeValue kEmpty = INT64_MIN;
};

class GapIndex {
 public:
  // Time coordinates come from every non-empty lifetime of `buffers`.
  // cached_height: the tree level whose nodes keep the union of their own cover set and
  // those of their ancestors up to cached_levels levels higher (see path_unions_);
  // parameters so that tests reach them on small trees.
  explicit GapIndex(const std::vector<PlanBuffer>& buffers, int cached_height = 6, int cached_levels = 8);
  // Marks bytes [seg.lo, seg.hi) as used during `life` (non-empty lifetime, non-empty range).
  void insert(Lifespan life, Segment seg);
  // The bytes used at some time of `life` (non-empty), as sorted disjoint intervals with
  // touching ones joined. `out` is overwritten.
  // With `below`, only the stored ranges starting below it are gathered: the answer is exact
  // for every byte below `below`, and an interval reaching past it may end early (a
  // first-fit search under a known ceiling needs no more, and gathers a fraction of the sets).
  void occupied(Lifespan life, std::vector<Segment>& out, uint64_t below = UINT64_MAX) const;

 private:
  using Set = std::vector<Segment>;  // sorted, disjoint, touching intervals joined
  std::pair<size_t, size_t> slots(Lifespan life) const;
  bool inside(size_t node, int height, size_t first, size_t last) const;
  void add(std::vector<int32_t>& sets, size_t node, Segment seg);
  static void add_to(Set& set, Segment seg);
  void add_to_path_unions(size_t node, int height, Segment seg);
  // `out` = the union of two sorted lists of disjoint intervals, touching ones joined.
  static void join_union(const std::vector<Segment>& a, Set::const_iterator b, Set::const_iterator b_end,
                         std::vector<Segment>& out);
  // Merges the sorted runs of `scratch` (ending at `runs`) into `out`, joined; `tmp` is spare.
  static void merge_runs(std::vector<Segment>& scratch, std::vector<Segment>& tmp,
                         std::vector<size_t>& runs, std::vector<Segment>& out);

  std::vector<TimeValue> coords_;   // sorted distinct lifetime ends; slot s = [coords_[s], coords_[s+1])
  size_t leaves_ = 1;               // power of two >= slot count
  std::vector<int32_t> cover_;      // node -> set of buffers spanning the node's whole range
  std::vector<int32_t> below_;      // node -> union of the cover sets strictly below it
  std::vector<Set> pool_;           // the sets, allocated on first use
  mutable std::vector<Segment> scratch_, merged_;  // occupied(): the gathered sets
  mutable std::vector<size_t> runs_;                // ends of the sorted runs in scratch_
  // Node d at cached_height_ -> the union of the cover sets of d and of its ancestors up to
  // cached_levels_ levels higher: the long-lived buffers that every short query below d would
  // gather set by set (most of the gathered volume on traces). Kept up to date by insert():
  // a buffer covering a node at height h is added to 2^(h - cached_height_) unions, at most
  // 2^cached_levels_ (the higher sets are few and gathered one by one).
  int cached_height_ = 6, cached_levels_ = 8;
  std::vector<Set> path_unions_;  // left to right
};

// ---------------------------------------------------------------------------------------

template <typename Visit>
void LiveIndex::for_each_meeting(Lifespan life, Visit&& visit) const {
  // Leaves [0, end) have lower < life.upper; among them report those with upper > life.lower.
  const size_t end = size_t(std::lower_bound(lowers_.begin(), lowers_.end(), life.upper) - lowers_.begin());
  if (end == 0 || max_upper_[1] <= life.lower) return;
  descend(1, 0, leaves_, end, life.lower, visit);
}

template <typename Visit>
void LiveIndex::descend(size_t node, size_t first, size_t width, size_t end, TimeValue lower,
                        Visit& visit) const {
  // Node `node` covers leaves [first, first + width); skip it unless it holds a match.
  if (first >= end || max_upper_[node] <= lower) return;
  if (width == 1) {
    visit(by_lower_[first]);
    return;
  }
  descend(2 * node, first, width / 2, end, lower, visit);
  descend(2 * node + 1, first + width / 2, width / 2, end, lower, visit);
}

}  // namespace npuforge::planner
