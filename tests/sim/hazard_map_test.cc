// The hazard checker's paged run map against a per-byte model: random writes and reads over
// ranges that start, end and cross page boundaries; after each, every byte's state and the
// runs visit() reports (clipped, in address order, covering the range) must match the model.
#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <tuple>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "sim/hazard_map.h"
#include "util/rng.h"

namespace npuforge::sim {
namespace {

using Seg = HazardMap::Seg;

// visit() over [lo, hi) as one Seg per byte, checking that the runs tile the range in order.
// Runs are canonical: two neighbours in one page never hold the same value (a run never
// crosses a 4 KiB page here), so the runs visited are the same however they were built.
class RunCollector {
 public:
  explicit RunCollector(uint64_t lo) : next_(lo) {}
  void operator()(uint64_t a, uint64_t b, const Seg& s) {
    EXPECT_EQ(a, next_);
    EXPECT_LT(a, b);
    if (!out_.empty() && a % 4096 != 0) {
      EXPECT_FALSE(out_.back() == s) << "equal neighbour runs at " << a;
    }
    for (uint64_t x = a; x < b; ++x) out_.push_back(s);
    next_ = b;
  }
  uint64_t next() const { return next_; }
  std::vector<Seg> take() { return std::move(out_); }

 private:
  uint64_t next_;
  std::vector<Seg> out_;
};

std::vector<Seg> bytes_of(const HazardMap& map, uint64_t lo, uint64_t hi) {
  RunCollector runs(lo);
  map.visit(lo, hi, std::ref(runs));
  EXPECT_EQ(runs.next(), hi);
  return runs.take();
}

TEST(HazardMap, MatchesAPerByteModel) {
  constexpr uint64_t kBytes = 3 * 4096 + 300;
  const std::vector<uint64_t> edges = {0, 1, 4095, 4096, 4097, 8191, 8192, 12288, kBytes - 1, kBytes};
  Rng rng(21);
  HazardMap map(kBytes);
  std::vector<Seg> model(kBytes);
  size_t accessed_runs = 0, page_spans = 0;
  for (int op = 0; op < 3000; ++op) {
    auto pick = [&] { return rng.chance(0.3) ? edges[rng.below(edges.size())] : rng.below(kBytes + 1); };
    uint64_t lo = pick(), hi = pick();
    if (lo > hi) std::swap(lo, hi);
    if (lo == hi) continue;
    // A span from a page's start or to its end (the run map takes its first or last run
    // without a search): an access from a page boundary, to one, or over one.
    page_spans += lo % 4096 == 0 || hi % 4096 == 0 || lo / 4096 != (hi - 1) / 4096;
    const unsigned q = static_cast<unsigned>(rng.below(isa::kNumQueues));
    const int32_t instr = op;
    // Half the accesses through visit_record_*: what they visit is the state before.
    const bool visiting = rng.chance(0.5);
    RunCollector before(lo);
    const int32_t writer = static_cast<int32_t>(rng.below(4)) - 1;  // the shadow's: -1 or a buffer
    if (rng.chance(0.15)) {  // the shadow alone: the writer changes, the accesses stay
      map.record_writer(lo, hi, writer);
      for (uint64_t x = lo; x < hi; ++x) model[x].writer = writer;
    } else if (rng.chance(0.45)) {
      // A write keeps the bytes' writer, or sets it (the shadow recorded the write too).
      const bool by = rng.chance(0.5);
      if (by) {
        map.visit_record_write_by(lo, hi, q, instr, writer, std::ref(before));
      } else if (visiting) {
        map.visit_record_write(lo, hi, q, instr, std::ref(before));
      } else {
        map.record_write(lo, hi, q, instr);
      }
      if (visiting || by) {
        EXPECT_EQ(before.take(), std::vector<Seg>(model.begin() + lo, model.begin() + hi));
      }
      for (uint64_t x = lo; x < hi; ++x) {
        Seg s;
        s.last_write[q] = instr;
        s.writer = by ? writer : model[x].writer;
        model[x] = s;
      }
    } else {
      if (visiting) {
        map.visit_record_read(lo, hi, q, instr, std::ref(before));
        EXPECT_EQ(before.take(), std::vector<Seg>(model.begin() + lo, model.begin() + hi));
      } else {
        map.record_read(lo, hi, q, instr);
      }
      for (uint64_t x = lo; x < hi; ++x) model[x].last_read[q] = instr;
    }
    const uint64_t vlo = rng.below(kBytes), vhi = vlo + 1 + rng.below(kBytes - vlo);
    const std::vector<Seg> got = bytes_of(map, vlo, vhi);
    ASSERT_EQ(got.size(), vhi - vlo);
    for (uint64_t x = vlo; x < vhi; ++x) {
      ASSERT_EQ(got[x - vlo], model[x]) << "byte " << x << " after op " << op;
      accessed_runs += !(model[x] == Seg{});
    }
  }
  EXPECT_EQ(bytes_of(map, 0, kBytes), model);
  EXPECT_GT(accessed_runs, 0u);  // the model saw accesses: the comparison can fail
  EXPECT_GT(page_spans, 1000u);   // ... and many spans that start or end at a page boundary
}

TEST(HazardMap, UntouchedBytesAreNeverAccessedAndLargeMemoriesStaySmall) {
  HazardMap map(uint64_t{1} << 40);  // a 1 TiB DDR: pages grow with the highest one written
  map.record_write((uint64_t{1} << 40) - 10, uint64_t{1} << 40, 2, 7);
  const std::vector<Seg> tail = bytes_of(map, (uint64_t{1} << 40) - 20, uint64_t{1} << 40);
  for (size_t k = 0; k < tail.size(); ++k) EXPECT_EQ(tail[k].last_write[2], k < 10 ? -1 : 7) << k;
  EXPECT_EQ(bytes_of(map, 100, 200), std::vector<Seg>(100));
}

// The *_untracked operations of a map whose other half is unused assign one run: the same
// state as the general ones would leave.
TEST(HazardMap, UntrackedOperationsMatchTheGeneralOnes) {
  HazardMap untracked(8192), general(8192);
  DdrHazardMap ddr(8192);  // no writer at all: the same accesses
  Rng rng(5);
  for (int op = 0; op < 500; ++op) {
    uint64_t lo = rng.below(8193), hi = rng.below(8193);
    if (lo > hi) std::swap(lo, hi);
    if (lo == hi) continue;
    const unsigned q = static_cast<unsigned>(rng.below(isa::kNumQueues));
    if (rng.chance(0.5)) {
      untracked.visit_record_write_untracked(lo, hi, q, op, [](uint64_t, uint64_t, const Seg&) {});
      general.record_write(lo, hi, q, op);
      ddr.record_write(lo, hi, q, op);
    } else {
      untracked.record_read(lo, hi, q, op);
      general.record_read(lo, hi, q, op);
      ddr.record_read(lo, hi, q, op);
    }
  }
  EXPECT_EQ(bytes_of(untracked, 0, 8192), bytes_of(general, 0, 8192));
  std::vector<AccessSeg> ddr_bytes;
  ddr.visit(0, 8192, [&](uint64_t a, uint64_t b, const AccessSeg& s) { ddr_bytes.insert(ddr_bytes.end(), b - a, s); });
  const std::vector<Seg> sram_bytes = bytes_of(general, 0, 8192);
  ASSERT_EQ(ddr_bytes.size(), sram_bytes.size());
  for (size_t x = 0; x < ddr_bytes.size(); ++x) ASSERT_TRUE(ddr_bytes[x] == sram_bytes[x]) << x;
  HazardMap writers(8192), by_update(8192);
  for (int op = 0; op < 500; ++op) {
    uint64_t lo = rng.below(8193), hi = rng.below(8193);
    if (lo > hi) std::swap(lo, hi);
    if (lo == hi) continue;
    writers.record_writer_untracked(lo, hi, op % 7 - 1);
    by_update.record_writer(lo, hi, op % 7 - 1);
  }
  EXPECT_EQ(bytes_of(writers, 0, 8192), bytes_of(by_update, 0, 8192));
}

// The run map's fast paths (an access inside one run) against the general path, on random
// accesses most of which reuse a range accessed before (whole runs, the fast path's case) or
// part of one: the runs visited, in order, and every byte after each access must match.
template <typename Map>
void compare_fast_and_general(uint64_t bytes, uint64_t seed) {
  using S = typename Map::Seg;
  Map fast(bytes), general(bytes);
  general.set_fast_paths(false);
  Rng rng(seed);
  std::vector<std::pair<uint64_t, uint64_t>> used;
  struct Visit {
    uint64_t a, b;
    S s;
    bool operator==(const Visit& o) const { return a == o.a && b == o.b && s == o.s; }
  };
  size_t whole = 0;
  for (int op = 0; op < 20000; ++op) {
    // Often on a 64-byte grid: neighbouring ranges, whose runs may merge.
    const uint64_t grain = rng.chance(0.5) ? 64 : 1;
    uint64_t lo = rng.below(bytes / grain) * grain;
    uint64_t hi = std::min(bytes, lo + grain * (1 + rng.below(600 / grain + 1)));
    if (!used.empty() && rng.chance(0.7)) {
      std::tie(lo, hi) = used[rng.below(used.size())];
      if (rng.chance(0.3) && hi - lo > 2) lo += rng.below((hi - lo) / 2), hi -= rng.below((hi - lo) / 2);
    } else {
      used.emplace_back(lo, hi);
    }
    const unsigned q = rng.chance(0.5) ? 0 : static_cast<unsigned>(rng.below(isa::kNumQueues));
    // Often a few instructions again: equal values, runs that merge with their neighbours.
    const int32_t instr = rng.chance(0.5) ? static_cast<int32_t>(rng.below(3)) : op;
    std::vector<Visit> vf, vg;
    auto into = [](std::vector<Visit>& v) { return [&v](uint64_t a, uint64_t b, const S& s) { v.push_back({a, b, s}); }; };
    const int kind = static_cast<int>(rng.below(3));
    if (kind == 0) {
      fast.visit_record_read(lo, hi, q, instr, into(vf));
      general.visit_record_read(lo, hi, q, instr, into(vg));
    } else if (kind == 1) {
      fast.visit_record_write(lo, hi, q, instr, into(vf));
      general.visit_record_write(lo, hi, q, instr, into(vg));
    } else {
      const int32_t writer = static_cast<int32_t>(rng.below(3)) - 1;
      fast.visit_record_write_by(lo, hi, q, instr, writer, into(vf));
      general.visit_record_write_by(lo, hi, q, instr, writer, into(vg));
    }
    ASSERT_TRUE(vf == vg) << "op " << op;
    whole += vf.size() == 1 && vf[0].a == lo && vf[0].b == hi;
    std::vector<Visit> af, ag;
    const uint64_t vlo = lo >= 700 ? lo - 700 : 0, vhi = std::min(bytes, hi + 700);
    fast.visit(vlo, vhi, into(af));
    general.visit(vlo, vhi, into(ag));
    ASSERT_TRUE(af == ag) << "op " << op;  // the same runs: neighbours merged alike
  }
  EXPECT_GT(whole, 2500u);  // most accesses met one run: the fast path ran
}

// A visitor like the hazard checker's: it wants the runs holding an access of another queue
// later than `before` (one the access is not known to follow) and, with look(), lets the map
// skip the pages whose summary says they hold none.
template <typename S>
struct Unsettled {
  std::array<int32_t, isa::kNumQueues> before;
  unsigned q;
  bool write;
  std::vector<std::tuple<uint64_t, uint64_t, S>>* out;
  size_t* skipped;
  void operator()(uint64_t a, uint64_t b, const S& s) {
    for (unsigned r = 0; r < isa::kNumQueues; ++r) {
      if (r != q && (s.last_write[r] > before[r] || (write && s.last_read[r] > before[r]))) {
        out->emplace_back(a, b, s);
        return;
      }
    }
  }
  bool look(const std::array<int32_t, isa::kNumQueues>& latest) {
    for (unsigned r = 0; r < isa::kNumQueues; ++r) {
      if (r != q && latest[r] > before[r]) return true;
    }
    ++*skipped;
    return false;
  }
};

// The pages a look() skips against the general path, which visits every run: the same runs
// concern the visitor, and the maps end up the same.
template <typename Map>
void compare_skips_and_general(uint64_t bytes, uint64_t seed, bool summarized) {
  using S = typename Map::Seg;
  Map skipping(bytes), general(bytes);
  general.set_fast_paths(false);
  Rng rng(seed);
  size_t skipped = 0, unsettled = 0, ignored = 0;
  for (int op = 0; op < 20000; ++op) {
    const uint64_t grain = rng.chance(0.5) ? 64 : 1;
    const uint64_t lo = rng.below(bytes / grain) * grain;
    const uint64_t hi = std::min(bytes, lo + grain * (1 + rng.below((rng.chance(0.2) ? 9000 : 600) / grain + 1)));
    const unsigned q = static_cast<unsigned>(rng.below(isa::kNumQueues));
    // Per queue, the latest instruction known to come before: recent ones mostly are.
    std::array<int32_t, isa::kNumQueues> before{};
    for (auto& b : before) b = op - 1 - static_cast<int32_t>(rng.below(rng.chance(0.5) ? 3 : 300));
    const bool write = rng.chance(0.5);
    std::vector<std::tuple<uint64_t, uint64_t, S>> got, want;
    Unsettled<S> a{before, q, write, &got, &skipped}, b{before, q, write, &want, &ignored};
    if (!write) {
      skipping.visit_record_read(lo, hi, q, op, a);
      general.visit_record_read(lo, hi, q, op, b);
    } else if (rng.chance(0.5)) {
      skipping.visit_record_write(lo, hi, q, op, a);
      general.visit_record_write(lo, hi, q, op, b);
    } else {
      skipping.visit_record_write_untracked(lo, hi, q, op, a);
      general.visit_record_write_untracked(lo, hi, q, op, b);
    }
    ASSERT_TRUE(got == want) << "op " << op;
    unsettled += !want.empty();
  }
  std::vector<S> sb, gb;
  skipping.visit(0, bytes, [&](uint64_t x, uint64_t y, const S& s) { sb.insert(sb.end(), y - x, s); });
  general.visit(0, bytes, [&](uint64_t x, uint64_t y, const S& s) { gb.insert(gb.end(), y - x, s); });
  EXPECT_TRUE(sb == gb);
  EXPECT_EQ(ignored, 0u);  // the general path asks no look()
  EXPECT_GT(unsettled, 1000u);  // both outcomes occur: the comparison can fail
  if (summarized) {
    EXPECT_GT(skipped, 1000u);
  }
}

TEST(HazardMap, PageSkipsMatchTheGeneralPath) {
  compare_skips_and_general<DdrHazardMap>(12 * 4096 + 300, 8, true);
  compare_skips_and_general<HazardMap>(12 * 4096 + 300, 9, false);  // not summarized: visits all
}

// A page's runs sit between free slots on both sides, and a splice moves the runs before
// the change or the ones after it, whichever are fewer. Many small accesses near either end
// of a page (hundreds of runs) against a per-byte model, with and without the fast paths:
// both sides must have moved (the free slots before the runs shrank and grew).
TEST(RunMap, SplicesMovingEitherSideMatchAPerByteModel) {
  constexpr uint64_t kBytes = 2 * 4096;
  for (const bool fast : {true, false}) {
    Rng rng(fast ? 31 : 32);
    RunMap<int32_t> map(kBytes, 0);
    map.set_fast_paths(fast);
    std::vector<int32_t> model(kBytes, 0);
    size_t head_grew = 0, head_shrank = 0;
    for (int op = 0; op < 6000; ++op) {
      const uint64_t page = rng.below(2), near = rng.below(3);  // its start, middle or end
      const uint64_t at = page * 4096 + (near == 0 ? rng.below(600) : near == 1 ? 1700 + rng.below(700) : 3490 + rng.below(600));
      const uint64_t lo = at, hi = std::min(kBytes, at + 1 + rng.below(rng.chance(0.1) ? 300 : 6));
      const size_t slack = map.slack_before(page);
      if (rng.chance(0.7)) {
        const auto v = static_cast<int32_t>(rng.below(4));
        map.assign(lo, hi, v);
        std::fill(model.begin() + lo, model.begin() + hi, v);
      } else {
        map.update(lo, hi, [](int32_t& x) { x = (x + 1) % 4; });
        for (uint64_t x = lo; x < hi; ++x) model[x] = (model[x] + 1) % 4;
      }
      head_grew += map.slack_before(page) < slack;
      head_shrank += map.slack_before(page) > slack && slack > 0;
      const uint64_t vlo = page * 4096 + rng.below(4096), vhi = vlo + 1 + rng.below(page * 4096 + 4096 - vlo);
      uint64_t next = vlo;
      map.visit(vlo, vhi, [&](uint64_t a, uint64_t b, int32_t v) {
        ASSERT_EQ(a, next);
        for (uint64_t x = a; x < b; ++x) ASSERT_EQ(v, model[x]) << "byte " << x << " after op " << op;
        next = b;
      });
      ASSERT_EQ(next, vhi);
    }
    EXPECT_GT(head_grew, 1000u);    // runs before a change moved into the free slots before them
    EXPECT_GT(head_shrank, 150u);  // ... and back, closing a hole
  }
}

TEST(HazardMap, FastPathsMatchTheGeneralPath) {
  compare_fast_and_general<HazardMap>(3 * 4096 + 300, 3);
  compare_fast_and_general<DdrHazardMap>(3 * 4096 + 300, 4);
}

}  // namespace
}  // namespace npuforge::sim
