// Property test: a million random define/consume/release operations per policy through the
// SymbolTable, against a plain reference model (a map of owners per alignment unit).
// After every operation the allocator's invariants hold; every placement is aligned, inside
// the range and on bytes the reference says are free; and the reference predicts the exact
// address each policy must choose (so a failure is only reported when no free run fits).
#include <gtest/gtest.h>

#include <cstdio>
#include <vector>

#include "allocator/allocator.h"
#include "allocator/symbol_table.h"
#include "util/rng.h"

namespace npuforge::allocator {
namespace {

constexpr uint64_t kUnit = 64;
constexpr uint64_t kUnits = 1024;  // 64 KiB: the reference scan stays cheap
constexpr uint32_t kBase = 0x20000;
constexpr int kOps = 1'000'000;
constexpr uint32_t kSymbols = 400;
constexpr int32_t kFree = -1;

// The reference: owner per unit, plus what each policy must pick.
struct Reference {
  std::vector<int32_t> owner = std::vector<int32_t>(kUnits, kFree);
  uint64_t cursor = 0;  // next-fit, in units

  struct Run {
    uint64_t start, len;
  };
  std::vector<Run> runs() const {  // maximal free runs, ascending
    std::vector<Run> out;
    for (uint64_t u = 0; u < kUnits;) {
      if (owner[u] != kFree) {
        ++u;
        continue;
      }
      uint64_t s = u;
      while (u < kUnits && owner[u] == kFree) ++u;
      out.push_back({s, u - s});
    }
    return out;
  }
  // Expected start unit for `len` units, or -1 when nothing fits.
  int64_t choose(Policy p, uint64_t len) const {
    int64_t best = -1, best_len = 0, wrap = -1;
    for (const Run& r : runs()) {
      if (r.len < len) continue;
      switch (p) {
        case Policy::FirstFit:
          return int64_t(r.start);
        case Policy::BestFit:
          if (best < 0 || int64_t(r.len) < best_len) best = int64_t(r.start), best_len = r.len;
          break;
        case Policy::NextFit:
          if (r.start >= cursor) return int64_t(r.start);
          if (wrap < 0) wrap = int64_t(r.start);
          break;
      }
    }
    return p == Policy::NextFit ? wrap : best;
  }
};

struct Live {
  SymbolId id;
  uint64_t start, len;  // units
  uint32_t uses;
};

void run_policy(Policy policy, uint64_t seed) {
  Allocator alloc(SramAddr{kBase}, Bytes{kUnits * kUnit}, Bytes{kUnit}, policy);
  SymbolTable table(alloc);
  Reference ref;
  Rng rng(seed);
  std::vector<SymbolId> ids;
  for (uint32_t i = 0; i < kSymbols; ++i) ids.push_back(table.intern("s" + std::to_string(i)));
  std::vector<int32_t> slot(kSymbols, -1);  // symbol -> index in `live`
  std::vector<Live> live;
  uint64_t fails = 0, defines = 0, used_units = 0;

  auto drop = [&](size_t i) {  // the buffer at live[i] died: clear the reference
    for (uint64_t u = live[i].start; u < live[i].start + live[i].len; ++u) ref.owner[u] = kFree;
    used_units -= live[i].len;
    slot[live[i].id.value] = -1;
    live[i] = live.back();
    if (i < live.size() - 1) slot[live[i].id.value] = int32_t(i);
    live.pop_back();
  };

  for (int op = 0; op < kOps; ++op) {
    // Define more while under 3/4 full, less above: occupancy hovers near 75%, so large
    // requests fail now and then and the allocator runs fragmented.
    const uint64_t dice = rng.below(100);
    const uint64_t define_pct = used_units * 4 < kUnits * 3 ? 60 : 25;
    if (dice < define_pct && live.size() < kSymbols) {
      SymbolId id;
      do id = ids[rng.below(kSymbols)];
      while (slot[id.value] >= 0);
      const uint64_t r = rng.below(100);
      const uint64_t bytes = r < 70 ? 1 + rng.below(8 * kUnit)
                             : r < 95 ? 1 + rng.below(64 * kUnit)
                                      : 1 + rng.below(400 * kUnit);
      const uint64_t len = (bytes + kUnit - 1) / kUnit;
      const int64_t expect = ref.choose(policy, len);
      const uint32_t uses = 1 + uint32_t(rng.below(3));
      AllocResult res = table.define(id, Bytes{bytes}, uses);
      if (!res.ok()) {
        ASSERT_EQ(expect, -1) << "op " << op << ": failed though a run fits: "
                              << res.oom.message() << "\n" << alloc.dump();
        ASSERT_EQ(res.oom.free_total.value, (kUnits - used_units) * kUnit);
        ++fails;
      } else {
        ++defines;
        const uint64_t a = res.addr.value;
        ASSERT_EQ(a % kUnit, 0u);
        ASSERT_GE(a, kBase);
        ASSERT_LE(a + res.padded.value, kBase + kUnits * kUnit);
        ASSERT_EQ(res.padded.value, len * kUnit);
        const uint64_t start = (a - kBase) / kUnit;
        ASSERT_EQ(int64_t(start), expect) << "op " << op << " " << policy_name(policy);
        for (uint64_t u = start; u < start + len; ++u) {
          ASSERT_EQ(ref.owner[u], kFree) << "op " << op << ": unit " << u << " already owned";
          ref.owner[u] = int32_t(id.value);
        }
        ref.cursor = start + len == kUnits ? 0 : start + len;
        used_units += len;
        slot[id.value] = int32_t(live.size());
        live.push_back({id, start, len, uses});
      }
    } else if (!live.empty()) {
      const size_t i = rng.below(live.size());
      if (dice < 96) {
        const bool freed = table.consume(live[i].id);
        ASSERT_EQ(freed, --live[i].uses == 0);
        if (freed) drop(i);
      } else {
        table.release(live[i].id);
        drop(i);
      }
    }
    // The full O(n) check every op for the first stretch, then every 16th (speed).
    if (op < 20'000 || op % 16 == 0) {
      const std::string err = alloc.check_invariants();
      ASSERT_EQ(err, "") << "op " << op;
    }
    if (op % 1024 == 0) {
      const auto runs = ref.runs();
      const Stats s = alloc.stats();
      uint64_t largest = 0;
      for (const auto& r : runs) largest = std::max(largest, r.len);
      ASSERT_EQ(s.free_nodes, runs.size());
      ASSERT_EQ(s.largest_free.value, largest * kUnit);
      ASSERT_EQ(s.used_nodes, live.size());
      ASSERT_EQ(table.live_count(), live.size());
    }
  }
  // Both outcomes must have been exercised for the test to mean anything.
  EXPECT_GT(fails, 1000u);
  EXPECT_LT(fails, defines);
  EXPECT_GT(defines, 100'000u);
  std::printf("%s: %llu placements, %llu out-of-memory results\n",
              std::string(policy_name(policy)).c_str(), (unsigned long long)defines,
              (unsigned long long)fails);
}

TEST(AllocatorProperty, FirstFitMatchesReference) { run_policy(Policy::FirstFit, 1); }
TEST(AllocatorProperty, BestFitMatchesReference) { run_policy(Policy::BestFit, 2); }
TEST(AllocatorProperty, NextFitMatchesReference) { run_policy(Policy::NextFit, 3); }

}  // namespace
}  // namespace npuforge::allocator
