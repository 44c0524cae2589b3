#include "planner/plan_index.h"

#include <algorithm>
#include <numeric>

namespace npuforge::planner {

namespace {
size_t power_of_two_at_least(size_t n) {
  size_t p = 1;
  while (p < n) p <<= 1;
  return p;
}
}  // namespace

LiveIndex::LiveIndex(const std::vector<PlanBuffer>& buffers) : b_(buffers) {
  by_lower_.resize(b_.size());
  std::iota(by_lower_.begin(), by_lower_.end(), 0);
  std::sort(by_lower_.begin(), by_lower_.end(), [&](int x, int y) {
    return std::tie(b_[x].lifespan.lower, x) < std::tie(b_[y].lifespan.lower, y);
  });
  lowers_.resize(b_.size());
  rank_.resize(b_.size());
  for (size_t k = 0; k < by_lower_.size(); ++k) {
    lowers_[k] = b_[by_lower_[k]].lifespan.lower;
    rank_[by_lower_[k]] = k;
  }
  leaves_ = power_of_two_at_least(std::max<size_t>(1, b_.size()));
  max_upper_.assign(2 * leaves_, kEmpty);
}

void LiveIndex::activate(int buffer) {
  const TimeValue upper = b_[buffer].lifespan.upper;
  for (size_t v = leaves_ + rank_[buffer]; v >= 1 && max_upper_[v] < upper; v >>= 1)
    max_upper_[v] = upper;
}

GapIndex::GapIndex(const std::vector<PlanBuffer>& buffers, int cached_height, int cached_levels)
    : cached_height_(cached_height), cached_levels_(cached_levels) {
  for (const auto& b : buffers)
    if (b.lifespan.lower < b.lifespan.upper) {
      coords_.push_back(b.lifespan.lower);
      coords_.push_back(b.lifespan.upper);
    }
  std::sort(coords_.begin(), coords_.end());
  coords_.erase(std::unique(coords_.begin(), coords_.end()), coords_.end());
  leaves_ = power_of_two_at_least(std::max<size_t>(1, coords_.size()));
  cover_.assign(2 * leaves_, -1);
  below_.assign(2 * leaves_, -1);
  if (cached_height_ >= 0 && (size_t(1) << cached_height_) <= leaves_)
    path_unions_.resize(leaves_ >> cached_height_);
}

// The slots [first, last) meeting `life`: slot s meets it iff coords_[s] < upper and
// lower < coords_[s + 1]. Lifetimes from the constructor's buffers map exactly.
std::pair<size_t, size_t> GapIndex::slots(Lifespan life) const {
  const size_t slot_count = coords_.empty() ? 0 : coords_.size() - 1;
  size_t first = size_t(std::upper_bound(coords_.begin(), coords_.end(), life.lower) - coords_.begin());
  first = first == 0 ? 0 : first - 1;
  const size_t last = std::min(slot_count, size_t(std::lower_bound(coords_.begin(), coords_.end(), life.upper) - coords_.begin()));
  return {first, std::max(first, last)};
}

bool GapIndex::inside(size_t node, int height, size_t first, size_t last) const {
  const size_t lo = (node << height) - leaves_, hi = ((node + 1) << height) - leaves_;
  return lo >= first && hi <= last;
}

void GapIndex::add_to(Set& set, Segment seg) {
  // The run of intervals touching or overlapping seg becomes one.
  auto begin = std::lower_bound(set.begin(), set.end(), seg.lo,
                                [](const Segment& s, uint64_t lo) { return s.hi < lo; });
  auto end = begin;
  while (end != set.end() && end->lo <= seg.hi) {
    seg.lo = std::min(seg.lo, end->lo);
    seg.hi = std::max(seg.hi, end->hi);
    ++end;
  }
  if (begin == end) {
    set.insert(begin, seg);
  } else {
    *begin = seg;
    set.erase(begin + 1, end);
  }
}

void GapIndex::add(std::vector<int32_t>& sets, size_t node, Segment seg) {
  if (sets[node] < 0) {
    sets[node] = int32_t(pool_.size());
    pool_.emplace_back();
  }
  add_to(pool_[size_t(sets[node])], seg);
}

void GapIndex::insert(Lifespan life, Segment seg) {
  const auto [first, last] = slots(life);
  if (first >= last || seg.lo >= seg.hi) return;
  // Canonical nodes: the maximal nodes inside [first, last).
  for (size_t lo = first + leaves_, hi = last + leaves_, h = 0; lo < hi; lo >>= 1, hi >>= 1, ++h) {
    if (lo & 1) add(cover_, lo, seg), add_to_path_unions(lo, int(h), seg), ++lo;
    if (hi & 1) --hi, add(cover_, hi, seg), add_to_path_unions(hi, int(h), seg);
  }
  // Their strict ancestors are the nodes overlapping [first, last) without lying inside it,
  // all on the paths from the two boundary leaves to the root.
  int height = 0;
  for (size_t v = first + leaves_, w = last - 1 + leaves_; v >= 1; v >>= 1, w >>= 1, ++height) {
    if (!inside(v, height, first, last)) add(below_, v, seg);
    if (w != v && !inside(w, height, first, last)) add(below_, w, seg);
  }
}

void GapIndex::occupied(Lifespan life, std::vector<Segment>& out, uint64_t below) const {
  out.clear();
  const auto [first, last] = slots(life);
  if (first >= last) return;
  // Every set is sorted: gather them as runs and merge the runs pairwise (N log runs, where
  // a sort of the lot would be N log N). Of each set, only the ranges starting below `below`.
  scratch_.clear();
  runs_.clear();
  auto prefix_end = [below](const Set& set) {
    if (below == UINT64_MAX || set.empty() || set.back().lo < below) return set.end();
    return std::lower_bound(set.begin(), set.end(), below, [](const Segment& s, uint64_t v) { return s.lo < v; });
  };
  auto take = [&](int32_t set) {
    if (set < 0) return;
    const Set& s = pool_[size_t(set)];
    const auto end = prefix_end(s);
    if (end == s.begin()) return;
    scratch_.insert(scratch_.end(), s.begin(), end);
    runs_.push_back(scratch_.size());
  };
  for (size_t lo = first + leaves_, hi = last + leaves_; lo < hi; lo >>= 1, hi >>= 1) {
    if (lo & 1) take(cover_[lo]), take(below_[lo]), ++lo;
    if (hi & 1) --hi, take(cover_[hi]), take(below_[hi]);
  }
  // The boundary paths' nodes not inside: a path meeting a node at cached_height_ that is
  // not inside takes that node's path union instead of the cover sets of the levels it holds
  // (the other path may still take some of them again: the union does not mind).
  // The first path union, the longest run, is not copied: it joins the merged rest at the end.
  const bool cached = !path_unions_.empty();
  const Set* aside = nullptr;
  Set::const_iterator aside_end;
  auto take_union = [&](size_t node) {
    const Set& u = path_unions_[node - (leaves_ >> cached_height_)];
    if (!aside) {
      aside = &u;
      aside_end = prefix_end(u);
    } else if (const auto end = prefix_end(u); end != u.begin()) {
      scratch_.insert(scratch_.end(), u.begin(), end);
      runs_.push_back(scratch_.size());
    }
  };
  bool v_done = false, w_done = false;
  int height = 0;
  for (size_t v = first + leaves_, w = last - 1 + leaves_; v >= 1; v >>= 1, w >>= 1, ++height) {
    const bool at_cache = cached && height == cached_height_;
    const bool in_union = height > cached_height_ && height <= cached_height_ + cached_levels_;
    if (!(v_done && in_union) && !inside(v, height, first, last)) {
      if (at_cache) take_union(v), v_done = true;
      else take(cover_[v]);
    }
    if (w != v && !(w_done && in_union) && !inside(w, height, first, last)) {
      if (at_cache) take_union(w), w_done = true;
      else take(cover_[w]);
    }
  }
  merge_runs(scratch_, merged_, runs_, out);
  if (aside && aside_end != aside->begin()) {
    join_union(out, aside->begin(), aside_end, merged_);
    std::swap(out, merged_);
  }
}

void GapIndex::join_union(const std::vector<Segment>& a, Set::const_iterator b, Set::const_iterator b_end,
                          std::vector<Segment>& out) {
  out.clear();
  for (size_t i = 0; i < a.size() || b != b_end;) {
    const Segment& s = b == b_end || (i < a.size() && a[i].lo <= b->lo) ? a[i++] : *b++;
    if (!out.empty() && s.lo <= out.back().hi) out.back().hi = std::max(out.back().hi, s.hi);
    else out.push_back(s);
  }
}

// A cover set at or above cached_height_ belongs to the path unions of the nodes below it.
void GapIndex::add_to_path_unions(size_t node, int height, Segment seg) {
  if (path_unions_.empty() || height < cached_height_ || height > cached_height_ + cached_levels_) return;
  const int down = height - cached_height_;
  const size_t level_start = leaves_ >> cached_height_;
  for (size_t d = node << down, end = (node + 1) << down; d < end; ++d) add_to(path_unions_[d - level_start], seg);
}

void GapIndex::merge_runs(std::vector<Segment>& scratch, std::vector<Segment>& tmp,
                          std::vector<size_t>& runs, std::vector<Segment>& out) {
  out.clear();
  auto by_lo = [](const Segment& a, const Segment& b) { return a.lo < b.lo; };
  std::vector<Segment>* from = &scratch;
  std::vector<Segment>* to = &tmp;
  while (runs.size() > 1) {
    to->resize(from->size());
    size_t begin = 0, kept = 0;
    for (size_t r = 0; r < runs.size(); r += 2) {
      const size_t mid = runs[r], end = r + 1 < runs.size() ? runs[r + 1] : mid;
      std::merge(from->begin() + long(begin), from->begin() + long(mid), from->begin() + long(mid),
                 from->begin() + long(end), to->begin() + long(begin), by_lo);
      runs[kept++] = end;
      begin = end;
    }
    runs.resize(kept);
    std::swap(from, to);
  }
  for (const Segment& s : *from) {
    if (!out.empty() && s.lo <= out.back().hi) out.back().hi = std::max(out.back().hi, s.hi);
    else out.push_back(s);
  }
}

}  // namespace npuforge::planner
