#pragma once
// Internal to the checkers: a value per byte of a memory, kept as runs of equal bytes (the
// hazard checker's last accesses, the shadow's last writer).
//
// The runs live in fixed address pages, each a small sorted array (a run never crosses a
// page): an access touches a few cache lines of one or two pages, where a balanced tree of
// runs cost a cache miss per level on every access (the trees' descents were most of the
// checkers' time on a 100k-instruction program). A page is created when first written; an
// absent page is one run of the initial value.
#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <type_traits>
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
        page_bytes_(std::max<uint64_t>(4096, std::bit_ceil(std::max<uint64_t>(bytes / 65536, 1)))),
        page_shift_(static_cast<unsigned>(std::countr_zero(page_bytes_))) {}

  // Calls f(lo, hi, value) for the runs of [lo, hi) in address order, clipped to [lo, hi).
  template <typename F>
  void visit(uint64_t lo, uint64_t hi, F&& f) const {
    for (uint64_t p = lo >> page_shift_; lo < hi; ++p) {
      const uint64_t base = p * page_bytes_, end = std::min(hi, base + page_bytes_);
      if (p >= pages_.size() || pages_[p].empty()) {
        f(lo, end, initial_);
      } else {
        const Page& runs = pages_[p];
        const auto l = static_cast<uint32_t>(lo - base), h = static_cast<uint32_t>(end - base);
        for (size_t k = holding(runs, l); k < runs.size() && runs.lo()[k] < h; ++k) {
          f(base + std::max(runs.lo()[k], l), base + std::min(runs.end(k, page_bytes_), h), runs.value()[k]);
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
    visit_assign(lo, hi, f, v, EveryPage{});
  }
  // visit_assign, visiting only the pages p of more than one run with look(p) true (the
  // caller knows that nothing in the others concerns f).
  template <typename F, typename L>
  void visit_assign(uint64_t lo, uint64_t hi, F&& f, const V& v, L&& look) {
    if (const One one = one_run(lo, hi); one.runs) {
      const V& cur = one.runs->value()[one.k];
      f(lo, hi, cur);
      if (!(cur == v)) put_inside(*one.runs, one, v);
      return;
    }
    for_pages(lo, hi, [&](Page& runs, uint64_t p, uint64_t base, const Span& s) {
      if (look(p)) visit_clipped(runs, base, s, f);
      assign_runs(runs, s, v);
    });
  }
  // visit(lo, hi) then update(lo, hi, change) in one pass (see visit_assign).
  template <typename F, typename G>
  void visit_update(uint64_t lo, uint64_t hi, F&& f, G&& change) {
    visit_update(lo, hi, f, change, EveryPage{});
  }
  // visit_update, visiting only the pages of more than one run with look(p) true (see
  // visit_assign).
  template <typename F, typename G, typename L>
  void visit_update(uint64_t lo, uint64_t hi, F&& f, G&& change, L&& look) {
    if (const One one = one_run(lo, hi); one.runs) {
      const V& cur = one.runs->value()[one.k];
      V x = cur;
      change(x);
      f(lo, hi, cur);
      if (!(x == cur)) put_inside(*one.runs, one, x);
      return;
    }
    for_pages(lo, hi, [&](Page& runs, uint64_t p, uint64_t base, const Span& s) {
      if (look(p)) visit_clipped(runs, base, s, f);
      update_runs(runs, s, change);
    });
  }
  // Turns the fast paths off (tests compare them with the general path).
  void set_fast_paths(bool on) { fast_ = on; }
  uint64_t page_bytes() const { return page_bytes_; }
  // The free slots before page p's runs (tests check that splices move the runs on either
  // side of a change); 0 for an absent page.
  size_t slack_before(uint64_t p) const { return p < pages_.size() ? pages_[p].slack_before() : 0; }
  // Calls change(value) for each run of [lo, hi), then merges runs that became equal (many
  // reads of one region, the DDR inputs or a shared weight buffer, must not fragment it).
  template <typename F>
  void update(uint64_t lo, uint64_t hi, F&& change) {
    visit_update(lo, hi, ignore_runs, change);
  }

 private:
  static_assert(std::is_trivially_copyable_v<V>, "pages move runs with memmove");
  // The runs of one page, sorted by lo, the first at 0; empty: one run of initial_. Offsets
  // and values apart: a search reads 16 offsets per cache line (a miss per step of the
  // binary search was most of the hazard checker's time). Both in one allocation, the values
  // right after the offsets: a page of a few runs is one or two cache lines, not two
  // allocations' (the page entry is 32 bytes). Not vectors: an access changes the run
  // count by splice(), one memmove per array, where a vector's inserts, erases and resizes
  // cost more in bookkeeping than the moves saved. The runs sit in the middle of the arrays,
  // free slots on both sides: a splice moves the runs before it or the ones after it,
  // whichever are fewer (an SRAM page holds tens to hundreds of runs, and moving the whole
  // tail of 32-byte runs past a split was most of the splices' cost: bench_sim 100k, the
  // memmoves 12.4 -> 7.5 M Ir).
  class Page {
   public:
    size_t size() const { return n_; }
    bool empty() const { return n_ == 0; }
    uint32_t* lo() { return lo_; }
    const uint32_t* lo() const { return lo_; }
    V* value() { return value_; }
    const V* value() const { return value_; }
    uint32_t end(size_t k, uint64_t page_bytes) const {
      return k + 1 < n_ ? lo()[k + 1] : static_cast<uint32_t>(page_bytes);
    }
    // The number of runs from `from` on that start at or before x. Inlined: GCC outlined it
    // once splice() grew.
    [[gnu::always_inline]] size_t upper(size_t from, uint32_t x) const {
      return static_cast<size_t>(std::upper_bound(lo() + from, lo() + n_, x) - lo());
    }
    // Runs [from, to) make room for `count` runs at `from` (their contents unset): the runs
    // before `from` or the ones after `to` move once (a split at each end and an erase
    // between were up to three moves per array), the fewer of the two when there is room.
    // Inlined: one branch per side in the callers' known shapes.
    [[gnu::always_inline]] void splice(size_t from, size_t to, size_t count) {
      if (count == to - from) return;
      const auto d = static_cast<std::ptrdiff_t>(count) - static_cast<std::ptrdiff_t>(to - from);  // runs added
      const size_t after = n_ - to, m = n_ + d, free_before = static_cast<size_t>(lo_ - base());
      if (from < after && static_cast<std::ptrdiff_t>(free_before) >= d) {
        move(0, from, -d);  // the runs before move by d slots towards the page's front (or back)
        lo_ -= d, value_ -= d;
      } else if (free_before + m <= cap_) {
        move(to, after, d);
      } else {  // no room after the runs (the check for room before them is in grow: here,
        grow(m, from, to, count);  // it made GCC stop inlining the checkers' callers, +3 M Ir)
      }
      n_ = static_cast<uint32_t>(m);
    }
    // The free slots before the runs (tests check that splices use both sides).
    size_t slack_before() const { return static_cast<size_t>(lo_ - base()); }

   private:
    static_assert(alignof(V) <= __STDCPP_DEFAULT_NEW_ALIGNMENT__, "the allocation aligns the values");
    uint32_t* base() const { return reinterpret_cast<uint32_t*>(mem_.get()); }
    // Runs [k, k + count) move by `by` slots, in both arrays.
    void move(size_t k, size_t count, std::ptrdiff_t by) {
      if (count == 0) return;
      std::memmove(lo_ + k + by, lo_ + k, count * sizeof(uint32_t));
      std::memmove(static_cast<void*>(value_ + k + by), value_ + k, count * sizeof(V));
    }
    // The values' byte offset in a page of `cap` runs (aligned for V).
    static size_t values_at(size_t cap) {
      return (cap * sizeof(uint32_t) + alignof(V) - 1) / alignof(V) * alignof(V);
    }
    // The runs before `from` move into the free slots before them when there are enough,
    // else a new allocation, the m runs in its middle (free slots on both sides), at most
    // twice the runs (growing with room left before the runs: bench_sim took 10% more page
    // faults).
    void grow(size_t m, size_t from, size_t to, size_t count) {
      if (const auto d = static_cast<std::ptrdiff_t>(m) - static_cast<std::ptrdiff_t>(n_); mem_ && lo_ - base() >= d) {
        move(0, from, -d);  // room before the runs: no new allocation
        lo_ -= d, value_ -= d;
        return;
      }
      const size_t cap = std::max<size_t>(8, std::max<size_t>(m, 2 * std::min<size_t>(cap_, m)));
      auto mem = std::make_unique_for_overwrite<std::byte[]>(values_at(cap) + cap * sizeof(V));
      const size_t start = (cap - m) / 2;
      auto* lo = reinterpret_cast<uint32_t*>(mem.get()) + start;
      auto* value = reinterpret_cast<V*>(mem.get() + values_at(cap)) + start;
      if (mem_) {
        std::copy(this->lo(), this->lo() + from, lo);
        std::copy(this->lo() + to, this->lo() + n_, lo + from + count);
        std::copy(this->value(), this->value() + from, value);
        std::copy(this->value() + to, this->value() + n_, value + from + count);
      }
      mem_ = std::move(mem);
      lo_ = lo, value_ = value;
      cap_ = static_cast<uint32_t>(cap);
    }
    // [0, cap) offsets in the page (a run ends where the next starts, or the page), then
    // [0, cap) values; the runs are n_ slots of each from lo_ and value_ (kept rather than
    // computed in every loop over the runs).
    std::unique_ptr<std::byte[]> mem_;
    uint32_t* lo_ = nullptr;
    V* value_ = nullptr;
    uint32_t n_ = 0, cap_ = 0;
  };

  // The visitor of assign() and update(), which look at nothing.
  static void ignore_runs(uint64_t, uint64_t, const V&) {}
  struct EveryPage {  // a type, not a function: the look(p) calls inline to nothing
    bool operator()(uint64_t) const { return true; }
  };
  // The run holding offset x: the last one starting at or before it.
  [[gnu::always_inline]] static size_t holding(const Page& runs, uint32_t x) { return runs.upper(0, x) - 1; }
  // holding(runs, x), trying first the run after the previous access's (a 2-D DMA's rows
  // come in address order, each a run or two past the last) before a binary search.
  // Inlined: called out of line (GCC's choice once for_pages skips it for page-aligned spans)
  // it cost more in calls than those skips saved (bench_sim 100k: +10 M Ir).
  [[gnu::always_inline]] size_t holding_near(const Page& runs, uint32_t x, uint64_t page) {
    const uint32_t* lo = runs.lo();
    const size_t n = runs.size();
    size_t k = last_page_ == page ? last_run_ : n;
    for (const size_t stop = std::min(k + 4, n); k < stop; ++k) {
      if (lo[k] <= x && (k + 1 == n || lo[k + 1] > x)) return k;
    }
    return holding(runs, x);
  }
  // The end of the runs from `first` on that start before h: most accesses meet one run or
  // two, so a few steps before a binary search (fewer cache lines and branches).
  size_t ends_after(const Page& runs, size_t first, uint32_t h) {
    const uint32_t* lo = runs.lo();
    const size_t n = runs.size();
    size_t k = first + 1;
    for (const size_t stop = std::min(first + 4, n); k < stop && lo[k] < h; ++k) {
    }
    if (k == n || lo[k] >= h) return k;
    return runs.upper(k, h - 1);
  }
  // A range's part of one page: offsets [l, h), runs [first, last) the ones meeting it (the
  // first holds l, the last starts before h). `left`: the first run starts before l;
  // `right`: the last one goes on past h. Boundary runs are not split before the change:
  // the page's runs move at most once per access (splice).
  struct Span {
    uint32_t l, h;
    size_t first, last;
    bool left, right;
  };
  // Calls f(lo, hi, value) for the runs of the span, clipped to it.
  template <typename F>
  void visit_clipped(const Page& runs, uint64_t base, const Span& s, F& f) const {
    for (size_t k = s.first; k < s.last; ++k) {
      f(base + std::max(runs.lo()[k], s.l), base + std::min(runs.end(k, page_bytes_), s.h), runs.value()[k]);
    }
  }
  // Calls f(runs, p, base, span) per page p of [lo, hi) (base: its first address), the page
  // created if absent.
  template <typename F>
  void for_pages(uint64_t lo, uint64_t hi, F&& f) {
    for (uint64_t p = lo >> page_shift_; lo < hi; ++p) {
      const uint64_t base = p * page_bytes_, end = std::min(hi, base + page_bytes_);
      if (p >= pages_.size()) pages_.resize(p + 1);
      Page& runs = pages_[p];
      if (runs.empty()) {
        runs.splice(0, 0, 1);
        runs.lo()[0] = 0, runs.value()[0] = initial_;
      }
      Span s;
      s.l = static_cast<uint32_t>(lo - base), s.h = static_cast<uint32_t>(end - base);
      // A span from the page's start begins at its first run, one to its end ends at its last
      // (an access over several pages: no search in its inner pages, one in its outer ones).
      // Always, not a fast path: the same runs as the searches (lo()[0] == 0, every run starts
      // before the page's end); tested against a per-byte model (hazard_map_test.cc).
      s.first = s.l == 0 ? 0 : holding_near(runs, s.l, p);
      s.last = s.h == page_bytes_ ? runs.size() : ends_after(runs, s.first, s.h);
      s.left = runs.lo()[s.first] < s.l;
      s.right = s.h < page_bytes_ && (s.last == runs.size() || runs.lo()[s.last] > s.h);
      f(runs, p, base, s);
      // The next access often starts a run or three later (see holding_near).
      last_page_ = p, last_run_ = s.first;
      lo = end;
    }
  }
  // The span becomes one run of v, merged with a neighbour of the same value (runs stay
  // canonical: no two neighbours in a page are equal).
  static void assign_runs(Page& runs, const Span& s, const V& v) {
    const size_t from = s.first + (s.left ? 1 : 0);  // the first run replaced
    size_t to = s.last;
    const V right_value = runs.value()[s.last - 1];  // the part past h keeps it
    const bool put_new = from == 0 || !(runs.value()[from - 1] == v);
    const bool put_right = s.right && !(right_value == v);
    if (!s.right && to < runs.size() && runs.value()[to] == v) ++to;  // the next run joins
    runs.splice(from, to, (put_new ? 1 : 0) + (put_right ? 1 : 0));
    size_t k = from;
    if (put_new) runs.lo()[k] = s.l, runs.value()[k++] = v;
    if (put_right) runs.lo()[k] = s.h, runs.value()[k] = right_value;
  }
  // change(value) on the span's part of each run: the boundary runs split (one splice), then
  // runs that became equal merge.
  template <typename G>
  static void update_runs(Page& runs, const Span& s, G& change) {
    const size_t shift = s.left ? 1 : 0, grow = shift + (s.right ? 1 : 0);
    runs.splice(s.last, s.last, grow);
    uint32_t* lo = runs.lo();
    V* value = runs.value();
    if (s.right) lo[s.last + shift] = s.h, value[s.last + shift] = value[s.last - 1];
    // Right to left: run j moves to j + shift, never over a run not yet read.
    for (size_t j = s.last; j-- > s.first;) {
      V x = value[j];
      change(x);
      lo[j + shift] = j == s.first ? s.l : lo[j];
      value[j + shift] = x;
    }
    coalesce(runs, s.first + shift, s.last + shift + 1);
  }
  // Merges each of runs [from, to) into its left neighbour when their values are equal. The
  // runs after `to` move once (not one by one to the end of the page).
  static void coalesce(Page& runs, size_t from, size_t to) {
    from = std::max<size_t>(from, 1);
    to = std::min(to, runs.size());
    if (from >= to) return;
    uint32_t* lo = runs.lo();
    V* value = runs.value();
    size_t out = from;
    for (size_t k = from; k < to; ++k) {
      if (value[k] == value[out - 1]) continue;
      if (out != k) lo[out] = lo[k], value[out] = value[k];
      ++out;
    }
    runs.splice(out, to, 0);
  }

  // The fast path of an access inside one run of a present page (most are: a DMA row, an
  // operand of a buffer written whole): no span, and one splice of known shape instead of
  // the general splice-then-merge passes. The run's page (null: not inside one run), index,
  // bounds and the access's offsets in the page.
  struct One {
    Page* runs = nullptr;
    size_t k = 0;
    uint32_t l = 0, h = 0, end = 0;
  };
  // Inlined: GCC outlined it once splice() grew (a 40-byte result through memory, +3.5 M Ir).
  [[gnu::always_inline]] One one_run(uint64_t lo, uint64_t hi) {
    if (!fast_ || lo >= hi) return {};
    const uint64_t p = lo >> page_shift_, base = p * page_bytes_;
    if (hi - base > page_bytes_ || p >= pages_.size() || pages_[p].empty()) return {};
    Page& runs = pages_[p];
    const auto l = static_cast<uint32_t>(lo - base), h = static_cast<uint32_t>(hi - base);
    const size_t k = holding_near(runs, l, p);
    const uint32_t end = runs.end(k, page_bytes_);
    // The hint for_pages would leave; when the access goes on past the run, for_pages's
    // holding_near finds k at its first step instead of a second binary search.
    last_page_ = p, last_run_ = k;
    if (h > end) return {};
    return {&runs, k, l, h, end};
  }
  // [l, h) of run k (value != x) becomes x; what is left of the run on either side keeps its
  // value, and the new run merges with a neighbour of value x when it reaches it (the runs
  // assign_runs/update_runs and coalesce() would leave).
  static void put_inside(Page& runs, const One& o, const V& x) {
    const size_t k = o.k;
    const uint32_t start = runs.lo()[k];
    const bool left = start < o.l, right = o.h < o.end;
    const V cur = runs.value()[k];
    if (!left && !right) {  // the whole run
      const bool merge_right = k + 1 < runs.size() && runs.value()[k + 1] == x;
      runs.value()[k] = x;
      if (k > 0 && runs.value()[k - 1] == x) {
        runs.splice(k, k + 1 + (merge_right ? 1 : 0), 0);  // the left neighbour takes it (and the right one)
      } else if (merge_right) {
        runs.splice(k + 1, k + 2, 0);
      }
    } else if (!left) {  // [start, h) = x, [h, end) = cur
      if (k > 0 && runs.value()[k - 1] == x) {
        runs.lo()[k] = o.h;  // the left neighbour grows to h
        return;
      }
      runs.splice(k, k + 1, 2);
      runs.lo()[k] = start, runs.value()[k] = x, runs.lo()[k + 1] = o.h, runs.value()[k + 1] = cur;
    } else if (!right) {  // [start, l) = cur, [l, end) = x
      if (k + 1 < runs.size() && runs.value()[k + 1] == x) {
        runs.lo()[k + 1] = o.l;  // the right neighbour grows to l
        return;
      }
      runs.splice(k, k + 1, 2);
      runs.lo()[k] = start, runs.value()[k] = cur, runs.lo()[k + 1] = o.l, runs.value()[k + 1] = x;
    } else {  // [start, l) = cur, [l, h) = x, [h, end) = cur
      runs.splice(k, k + 1, 3);
      runs.lo()[k] = start, runs.value()[k] = cur;
      runs.lo()[k + 1] = o.l, runs.value()[k + 1] = x;
      runs.lo()[k + 2] = o.h, runs.value()[k + 2] = cur;
    }
  }

  V initial_;
  uint64_t page_bytes_;
  // log2(page_bytes_): an access's page by a shift, not a 64-bit division (tens of cycles,
  // two or three per access).
  unsigned page_shift_;
  bool fast_ = true;
  std::vector<Page> pages_;
  // Where the previous access's runs began (a hint for holding_near).
  uint64_t last_page_ = UINT64_MAX;
  size_t last_run_ = 0;
};

}  // namespace npuforge::sim
