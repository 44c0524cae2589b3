// The plan checker against an O(n^2) reference, and on planted bugs.
#include <gtest/gtest.h>

#include "bundle/memmap.h"
#include "planner/plan_check.h"
#include "planner/planner.h"
#include "plan_test_util.h"

namespace npuforge::planner {
namespace {

using testing::random_problem;
using testing::reference_overlap;

TEST(PlanCheck, AgreesWithReferenceOnRandomOffsets) {
  Rng rng(1);
  int overlaps = 0;
  for (int k = 0; k < 3000; ++k) {
    const PlanProblem p = random_problem(rng, 10, 12, 16, false);
    std::vector<Offset> off;
    for (size_t i = 0; i < p.buffers.size(); ++i) off.push_back(uint64_t(rng.range(0, 40)));
    const PlanCheckResult r = check_plan(p, off, std::nullopt);
    const bool ref = reference_overlap(p, off);
    ASSERT_EQ(r.ok(), !ref) << r.report();
    overlaps += ref;
    for (const auto& f : r.findings) {
      ASSERT_EQ(f.outcome, PlanOutcome::kOverlap);
      ASSERT_TRUE(f.other.has_value());
      const auto &a = p.buffers[f.buffer], &b = p.buffers[*f.other];
      EXPECT_TRUE(a.lifespan.intersects(b.lifespan));
      EXPECT_TRUE(off[f.buffer] < off[*f.other] + b.size.value &&
                  off[*f.other] < off[f.buffer] + a.size.value);
    }
  }
  EXPECT_GT(overlaps, 500);  // the random offsets do produce both outcomes
  EXPECT_LT(overlaps, 2900);
}

TEST(PlanCheck, CatchesPlantedOverlapNamingBothBuffers) {
  PlanProblem p;
  p.buffers = {{"x", {0, 10}, {64}, {1}, {}}, {"y", {5, 15}, {32}, {1}, {}},
               {"z", {10, 20}, {64}, {1}, {}}};
  EXPECT_TRUE(check_plan(p, {0, 64, 0}, Bytes{96}).ok());  // z reuses x: half-open lifetimes
  const PlanCheckResult r = check_plan(p, {0, 32, 0}, Bytes{96});
  ASSERT_EQ(r.total_findings, 2u) << r.report();  // y meets x and z
  EXPECT_EQ(r.outcome(), PlanOutcome::kOverlap);
  const std::string msg = r.findings[0].message;
  EXPECT_NE(msg.find("'x'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'y'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("[0x20, 0x40)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("live [5, 15)"), std::string::npos) << msg;
}

TEST(PlanCheck, CatchesPlantedBugsInPlannerOutput) {
  Rng rng(2);
  for (int k = 0; k < 1000; ++k) {
    const PlanProblem p = random_problem(rng, 10, 12, 16, true);
    std::vector<Offset> off = plan_greedy_size(p).offsets;
    const Bytes peak = plan_peak(with_offsets(p, off));
    ASSERT_TRUE(check_plan(p, off, peak).ok());
    // Out of capacity: one byte less than the peak.
    const PlanCheckResult cap = check_plan(p, off, Bytes{peak.value - 1});
    ASSERT_FALSE(cap.ok());
    EXPECT_EQ(cap.findings[0].outcome, PlanOutcome::kOutOfCapacity);
    // Misaligned: nudge a buffer whose alignment is above 1.
    for (size_t i = 0; i < p.buffers.size(); ++i) {
      if (p.buffers[i].alignment.value == 1) continue;
      std::vector<Offset> bad = off;
      bad[i] += 1;
      const PlanCheckResult r = check_plan(p, bad, std::nullopt);
      bool found = false;
      for (const auto& f : r.findings) found |= f.outcome == PlanOutcome::kMisaligned && f.buffer == i;
      EXPECT_TRUE(found) << r.report();
      break;
    }
    // Overlap: put one of two conflicting buffers onto the other.
    for (size_t i = 0; i + 1 < p.buffers.size(); ++i) {
      if (!p.buffers[i].lifespan.intersects(p.buffers[i + 1].lifespan)) continue;
      std::vector<Offset> bad = off;
      bad[i + 1] = bad[i];
      const PlanCheckResult r = check_plan(p, bad, std::nullopt);
      bool found = false;
      for (const auto& f : r.findings)
        found |= f.outcome == PlanOutcome::kOverlap && f.other &&
                 std::min(f.buffer, *f.other) == i && std::max(f.buffer, *f.other) == i + 1;
      EXPECT_TRUE(found) << r.report();
      break;
    }
  }
}

TEST(PlanCheck, MissingOffsetsAreReported) {
  PlanProblem p;
  p.buffers = {{"a", {0, 2}, {8}, {1}, Offset{0}}, {"b", {0, 2}, {8}, {1}, {}},
               {"c", {0, 2}, {8}, {1}, Offset{8}}};
  const PlanCheckResult r = check_plan(p);
  ASSERT_EQ(r.total_findings, 1u) << r.report();
  EXPECT_EQ(r.findings[0].outcome, PlanOutcome::kMissingOffset);
  EXPECT_EQ(r.findings[0].buffer, 1u);
}

TEST(PlanCheck, BackwardsLifetimeIsABadLifespan) {
  // The CSV and YAML readers refuse lower > upper, so a problem built in code (or a memory
  // map with first > last) is the way in. The bad buffer stays out of the overlap sweep:
  // it shares bytes with `a` but no overlap is reported for it.
  PlanProblem p;
  p.buffers = {{"a", {0, 8}, {16}, {1}, Offset{0}}, {"back", {6, 2}, {16}, {1}, Offset{0}},
               {"b", {0, 8}, {16}, {1}, Offset{16}}};
  const PlanCheckResult r = check_plan(p);
  ASSERT_EQ(r.total_findings, 1u) << r.report();
  EXPECT_EQ(r.outcome(), PlanOutcome::kBadLifespan);
  EXPECT_EQ(r.findings[0].buffer, 1u);
  EXPECT_NE(r.findings[0].message.find("'back': lifetime lower 6 > upper 2"), std::string::npos)
      << r.findings[0].message;
  EXPECT_STREQ(to_string(PlanOutcome::kBadLifespan), "bad lifespan");
  p.buffers[1].lifespan = {2, 6};  // the same bytes, now a real overlap with a
  EXPECT_EQ(check_plan(p).outcome(), PlanOutcome::kOverlap) << check_plan(p).report();

  MemMap m;  // inclusive [first, last]: first = 5, last = 3 is backwards too
  m.sram_bytes = {256};
  m.alignment = {64};
  m.buffers = {{"x", SramAddr{0}, {64}, 5, 3, 5, {3}}, {"y", SramAddr{64}, {64}, 0, 9, 0, {9}}};
  const PlanCheckResult mr = check_memmap(m);
  ASSERT_EQ(mr.total_findings, 1u) << mr.report();
  EXPECT_EQ(mr.outcome(), PlanOutcome::kBadLifespan);
  EXPECT_NE(mr.report().find("'x'"), std::string::npos) << mr.report();
}

TEST(PlanCheck, MemMapUsesInclusiveLifetimesAndNamesSymbols) {
  MemMap m;
  m.sram_bytes = {256};
  m.alignment = {64};
  m.buffers = {{"act0", SramAddr{0}, {128}, 3, 7, 3, {7}},
               {"act1", SramAddr{64}, {64}, 7, 9, 7, {9}},   // meets act0 at instruction 7
               {"w0", SramAddr{192}, {128}, 0, 9, -1, {}}};  // runs past 256
  const PlanCheckResult r = check_memmap(m);
  ASSERT_EQ(r.total_findings, 2u) << r.report();
  const std::string text = r.report();
  EXPECT_NE(text.find("'act0'"), std::string::npos) << text;
  EXPECT_NE(text.find("'act1'"), std::string::npos) << text;
  EXPECT_NE(text.find("live [7, 9]"), std::string::npos) << text;
  EXPECT_NE(text.find("out of capacity"), std::string::npos) << text;
  m.buffers[1].first = 8;  // now act0 is dead when act1 is produced
  m.buffers[2].size = {64};
  EXPECT_TRUE(check_memmap(m).ok()) << check_memmap(m).report();
}

// Size only: how fast the checker runs is measured in bench_planners (BM_CheckPlan).
TEST(PlanCheck, LargeGreedyPlanPassesTheChecker) {
  Rng rng(3);
  PlanProblem p;
  for (int i = 0; i < 20000; ++i) {
    const int64_t t = rng.range(0, 20000);
    p.buffers.push_back({std::to_string(i), {t, t + rng.range(1, 50)},
                         {uint64_t(rng.range(1, 4096))}, {1}, {}});
  }
  const auto off = plan_greedy_size(p).offsets;
  EXPECT_TRUE(check_plan(p, off, std::nullopt).ok());
}

}  // namespace
}  // namespace npuforge::planner
