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
        for (size_t k = holding(runs, l); k < runs.size() && runs.lo[k] < h; ++k) {
          f(base + std::max(runs.lo[k], l), base + std::min(runs.end(k, page_bytes_), h), runs.value[k]);
        }
      }
      lo = end;
    }
  }
  // [lo, hi) becomes `v`.
  void assign(uint64_t lo, uint64_t hi, const V& v) { visit_assign(lo, hi, ignore_runs, v); }
  // visit(lo, hi) then assign(lo, hi, v) in one pass: a page's runs are searched once, not
  // three times (the searches' cache misses were most of the hazard checker's time). The
  // pages of [lo, hi) are disjoint, so checking page by page sees what visit() would.
  template <typename F>
  void visit_assign(uint64_t lo, uint64_t hi, F&& f, const V& v) {
    for_pages(lo, hi, [&](Page& runs, uint64_t base, size_t first, size_t last) {
      visit_runs(runs, base, first, last, f);
      runs.value[first] = v;
      runs.erase(first + 1, last);
      coalesce(runs, first, first + 2);
    });
  }
  // visit(lo, hi) then update(lo, hi, change) in one pass (see visit_assign).
  template <typename F, typename G>
  void visit_update(uint64_t lo, uint64_t hi, F&& f, G&& change) {
    for_pages(lo, hi, [&](Page& runs, uint64_t base, size_t first, size_t last) {
      visit_runs(runs, base, first, last, f);
      for (size_t k = first; k < last; ++k) change(runs.value[k]);
      coalesce(runs, first, last + 1);
    });
  }
  // Calls change(value) for each run of [lo, hi), then merges runs that became equal (many
  // reads of one region, the DDR inputs or a shared weight buffer, must not fragment it).
  template <typename F>
  void update(uint64_t lo, uint64_t hi, F&& change) {
    visit_update(lo, hi, ignore_runs, change);
  }

 private:
  // The runs of one page, sorted by lo, the first at 0; empty: one run of initial_. Offsets
  // and values apart: a search reads 16 offsets per cache line (a miss per step of the
  // binary search was most of the hazard checker's time).
  struct Page {
    std::vector<uint32_t> lo;  // offset in the page; a run ends where the next starts (or the page)
    std::vector<V> value;
    size_t size() const { return lo.size(); }
    bool empty() const { return lo.empty(); }
    uint32_t end(size_t k, uint64_t page_bytes) const {
      return k + 1 < lo.size() ? lo[k + 1] : static_cast<uint32_t>(page_bytes);
    }
    void insert(size_t k, uint32_t at, V v) {
      lo.insert(lo.begin() + static_cast<std::ptrdiff_t>(k), at);
      value.insert(value.begin() + static_cast<std::ptrdiff_t>(k), std::move(v));
    }
    void erase(size_t from, size_t to) {
      lo.erase(lo.begin() + static_cast<std::ptrdiff_t>(from), lo.begin() + static_cast<std::ptrdiff_t>(to));
      value.erase(value.begin() + static_cast<std::ptrdiff_t>(from), value.begin() + static_cast<std::ptrdiff_t>(to));
    }
    // The number of runs from `from` on that start at or before x.
    size_t upper(size_t from, uint32_t x) const {
      return static_cast<size_t>(std::upper_bound(lo.begin() + static_cast<std::ptrdiff_t>(from), lo.end(), x) - lo.begin());
    }
  };

  // The visitor of assign() and update(), which look at nothing.
  static void ignore_runs(uint64_t, uint64_t, const V&) {}
  // The run holding offset x: the last one starting at or before it.
  static size_t holding(const Page& runs, uint32_t x) { return runs.upper(0, x) - 1; }
  // Calls f(lo, hi, value) for runs [first, last) of the page at `base`.
  template <typename F>
  void visit_runs(const Page& runs, uint64_t base, size_t first, size_t last, F& f) const {
    for (size_t k = first; k < last; ++k) f(base + runs.lo[k], base + runs.end(k, page_bytes_), runs.value[k]);
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
      if (runs.empty()) runs.insert(0, 0, initial_);
      const auto l = static_cast<uint32_t>(lo - base), h = static_cast<uint32_t>(end - base);
      size_t first = holding(runs, l);
      if (runs.lo[first] < l) {
        runs.insert(first + 1, l, runs.value[first]);
        ++first;
      }
      // The last run starts at or after `first`: search only there (fewer cache lines).
      const size_t last = runs.upper(first, h - 1);
      if (h < page_bytes_ && (last == runs.size() || runs.lo[last] > h)) runs.insert(last, h, runs.value[last - 1]);
      f(runs, base, first, last);
      lo = end;
    }
  }
  // Merges each of runs [from, to) into its left neighbour when their values are equal. The
  // runs after `to` move once, by one erase (not one by one to the end of the page).
  static void coalesce(Page& runs, size_t from, size_t to) {
    from = std::max<size_t>(from, 1);
    to = std::min(to, runs.size());
    if (from >= to) return;
    size_t out = from;
    for (size_t k = from; k < to; ++k) {
      if (runs.value[k] == runs.value[out - 1]) continue;
      if (out != k) runs.lo[out] = runs.lo[k], runs.value[out] = runs.value[k];
      ++out;
    }
    runs.erase(out, to);
  }

  V initial_;
  uint64_t page_bytes_;
  std::vector<Page> pages_;
};

}  // namespace npuforge::sim
