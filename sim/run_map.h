#pragma once
// Internal to the checkers: a value per byte of a memory, kept as runs of equal bytes (the
// hazard checker's last accesses, the shadow's last writer).
//
// The runs live in fixed address pages, each a small sorted vector (a run never crosses a
// page): an access touches a few cache lines of one or two pages, where a balanced tree of
// runs cost a cache miss per level on every access (the trees' descents were most of the
// checkers' time on a 100k-instruction program). A page is created when first written; an
// absent page is one run of the initial value.
#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace npuforge::sim {

template <typename V>
class RunMap {
 public:
  // Pages of 4 KiB, larger past 256 MiB so that the page table (grown up to the highest page
  // written) stays below 64K entries.
  RunMap(uint64_t bytes, V initial)
      : initial_(std::move(initial)),
        page_bytes_(std::max<uint64_t>(4096, std::bit_ceil(std::max<uint64_t>(bytes / 65536, 1)))) {}

  // Calls f(lo, hi, value) for the runs of [lo, hi) in address order, clipped to [lo, hi).
  template <typename F>
  void visit(uint64_t lo, uint64_t hi, F&& f) const {
    for (uint64_t p = lo / page_bytes_; lo < hi; ++p) {
      const uint64_t base = p * page_bytes_, end = std::min(hi, base + page_bytes_);
      if (p >= pages_.size() || pages_[p].empty()) {
        f(lo, end, initial_);
      } else {
        const Page& runs = pages_[p];
        const auto l = static_cast<uint32_t>(lo - base), h = static_cast<uint32_t>(end - base);
        for (size_t k = holding(runs, l); k < runs.size() && runs[k].lo < h; ++k) {
          const uint32_t run_end = k + 1 < runs.size() ? runs[k + 1].lo : static_cast<uint32_t>(page_bytes_);
          f(base + std::max(runs[k].lo, l), base + std::min(run_end, h), runs[k].value);
        }
      }
      lo = end;
    }
  }
  // [lo, hi) becomes `v`.
  void assign(uint64_t lo, uint64_t hi, const V& v) {
    for_pages(lo, hi, [&](Page& runs, uint64_t, size_t first, size_t last) {
      runs[first].value = v;
      runs.erase(runs.begin() + static_cast<std::ptrdiff_t>(first) + 1, runs.begin() + static_cast<std::ptrdiff_t>(last));
      coalesce(runs, first, first + 2);
    });
  }
  // visit(lo, hi) then assign(lo, hi, v) in one pass: a page's runs are searched once, not
  // three times (the searches' cache misses were most of the hazard checker's time). The
  // pages of [lo, hi) are disjoint, so checking page by page sees what visit() would.
  template <typename F>
  void visit_assign(uint64_t lo, uint64_t hi, F&& f, const V& v) {
    for_pages(lo, hi, [&](Page& runs, uint64_t base, size_t first, size_t last) {
      visit_runs(runs, base, first, last, f);
      runs[first].value = v;
      runs.erase(runs.begin() + static_cast<std::ptrdiff_t>(first) + 1, runs.begin() + static_cast<std::ptrdiff_t>(last));
      coalesce(runs, first, first + 2);
    });
  }
  // visit(lo, hi) then update(lo, hi, change) in one pass (see visit_assign).
  template <typename F, typename G>
  void visit_update(uint64_t lo, uint64_t hi, F&& f, G&& change) {
    for_pages(lo, hi, [&](Page& runs, uint64_t base, size_t first, size_t last) {
      visit_runs(runs, base, first, last, f);
      for (size_t k = first; k < last; ++k) change(runs[k].value);
      coalesce(runs, first, last + 1);
    });
  }
  // Calls change(value) for each run of [lo, hi), then merges runs that became equal (many
  // reads of one region, the DDR inputs or a shared weight buffer, must not fragment it).
  template <typename F>
  void update(uint64_t lo, uint64_t hi, F&& change) {
    for_pages(lo, hi, [&](Page& runs, uint64_t, size_t first, size_t last) {
      for (size_t k = first; k < last; ++k) change(runs[k].value);
      coalesce(runs, first, last + 1);
    });
  }

 private:
  struct Run {
    uint32_t lo;  // offset in the page; the run ends where the next one starts (or the page)
    V value;
  };
  using Page = std::vector<Run>;  // sorted by lo, the first at 0; empty: one run of initial_

  // The run holding offset x: the last one starting at or before it.
  static size_t holding(const Page& runs, uint32_t x) {
    return static_cast<size_t>(
               std::upper_bound(runs.begin(), runs.end(), x, [](uint32_t v, const Run& r) { return v < r.lo; }) -
               runs.begin()) -
           1;
  }
  // Calls f(lo, hi, value) for runs [first, last) of the page at `base`.
  template <typename F>
  void visit_runs(const Page& runs, uint64_t base, size_t first, size_t last, F& f) const {
    for (size_t k = first; k < last; ++k) {
      const uint64_t run_end = k + 1 < runs.size() ? runs[k + 1].lo : page_bytes_;
      f(base + runs[k].lo, base + run_end, runs[k].value);
    }
  }
  // Calls f(runs, base, first, last) per page of [lo, hi) (base: the page's first address),
  // where runs [first, last) are exactly the page's part of the range (boundary runs split,
  // the page created if absent).
  template <typename F>
  void for_pages(uint64_t lo, uint64_t hi, F&& f) {
    for (uint64_t p = lo / page_bytes_; lo < hi; ++p) {
      const uint64_t base = p * page_bytes_, end = std::min(hi, base + page_bytes_);
      if (p >= pages_.size()) pages_.resize(p + 1);
      Page& runs = pages_[p];
      if (runs.empty()) runs.push_back({0, initial_});
      const auto l = static_cast<uint32_t>(lo - base), h = static_cast<uint32_t>(end - base);
      size_t first = holding(runs, l);
      if (runs[first].lo < l) {
        runs.insert(runs.begin() + static_cast<std::ptrdiff_t>(first) + 1, Run{l, runs[first].value});
        ++first;
      }
      // The last run starts at or after `first`: search only there (fewer cache lines).
      const size_t last = static_cast<size_t>(std::upper_bound(runs.begin() + static_cast<std::ptrdiff_t>(first), runs.end(), h - 1,
                                                               [](uint32_t v, const Run& r) { return v < r.lo; }) -
                                              runs.begin());
      if (h < page_bytes_ && (last == runs.size() || runs[last].lo > h)) {
        runs.insert(runs.begin() + static_cast<std::ptrdiff_t>(last), Run{h, runs[last - 1].value});
      }
      f(runs, base, first, last);
      lo = end;
    }
  }
  // Merges each of runs [from, to) into its left neighbour when their values are equal.
  static void coalesce(Page& runs, size_t from, size_t to) {
    from = std::max<size_t>(from, 1);
    to = std::min(to, runs.size());
    if (from >= to) return;
    size_t out = from;
    for (size_t k = from; k < runs.size(); ++k) {
      if (k < to && runs[k].value == runs[out - 1].value) continue;
      if (out != k) runs[out] = runs[k];
      ++out;
    }
    runs.erase(runs.begin() + static_cast<std::ptrdiff_t>(out), runs.end());
  }

  V initial_;
  uint64_t page_bytes_;
  std::vector<Page> pages_;
};

}  // namespace npuforge::sim
