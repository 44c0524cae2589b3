// lifetime-aware is never worse than greedy-size; best keeps the lowest placement it tried,
// decomposes into independent time windows, and says "optimal" only with a proof.
#include <gtest/gtest.h>

#include <filesystem>
#include <functional>

#include "gen/generator.h"
#include "gen/profile.h"
#include "isa/isa.h"
#include "isa/npu_config.h"
#include "planner/plan_check.h"
#include "planner/plan_synth.h"
#include "planner/planner.h"
#include "planner/planner_util.h"
#include "plan_test_util.h"

namespace npuforge::planner {
namespace {

using testing::random_problem;

#ifdef __OPTIMIZE__
constexpr double kSlow = 1;
#else
constexpr double kSlow = 15;  // Debug and sanitizer builds: the same work takes this much longer
#endif

// The generator's memory maps (every profile, two seeds), offsets cleared so that the
// planners place them afresh: the instances the regressions hand to the planners.
std::vector<PlanProblem> generated_maps() {
  std::vector<PlanProblem> maps;
  const std::filesystem::path dir = std::filesystem::path(NPUFORGE_SOURCE_DIR) / "configs/gen";
  for (const char* name : {"default", "near-full", "stress-fragment", "tiny-buffers"})
    for (uint64_t seed = 1; seed <= 2; ++seed) {
      gen::GenOptions opt;
      opt.seed = seed;
      opt.length = kSlow > 1 ? 200 : 1000;
      const auto profile = gen::Profile::load_file(dir / (std::string(name) + ".yaml"));
      PlanProblem p = problem_from_memmap(gen::generate(isa::builtin_isa(), isa::NpuConfig{}, profile, opt).memmap());
      for (auto& b : p.buffers) b.offset.reset();
      maps.push_back(std::move(p));
    }
  return maps;
}

// The random and generated problem sets: small random problems, uniform random
// intervals, trace-like sets (many short-lived small buffers, a few long-lived large) and
// the generator's memory maps.
std::vector<PlanProblem> random_and_generated_sets() {
  std::vector<PlanProblem> sets;
  Rng rng(31);
  for (int k = 0; k < 30; ++k) sets.push_back(random_problem(rng, 40, 30, 100, k % 2 == 0));
  // lifetime-aware replays 96 variants up to 5,000 buffers: keep the sets at 1,000 buffers
  // (400 and one seed in unoptimized builds) so that the suite stays quick under sanitizers.
  const size_t n = kSlow > 1 ? 400 : 1000;
  for (uint64_t seed = 1; seed <= (kSlow > 1 ? 1 : 2); ++seed) {
    sets.push_back(random_intervals_problem(n, seed));
    sets.push_back(trace_like_problem(n, seed));
  }
  for (PlanProblem& p : generated_maps()) sets.push_back(std::move(p));
  return sets;
}

TEST(LifetimeAwarePlanner, NoWorseThanGreedyOnTheRandomAndGeneratedSets) {
  for (const PlanProblem& p : random_and_generated_sets()) {
    const PlanResult la = plan_lifetime_aware(p), gs = plan_greedy_size(p);
    ASSERT_TRUE(check_plan(p, la.offsets, std::nullopt).ok());
    EXPECT_LE(la.peak, gs.peak) << p.buffers.size() << " buffers: " << la.note;
  }
}

// In time order the replay keeps its live buffers across requests instead of searching the
// placed ones per request: the same placements, on shapes where buffers start and end at the
// same steps (ties), moves and expansions are frequent (small random sets), and on larger sets.
TEST(LifetimeAwarePlanner, KeepingTheLiveBuffersGivesTheSamePlacements) {
  Rng rng(41);
  std::vector<PlanProblem> sets;
  for (int k = 0; k < 300; ++k) sets.push_back(random_problem(rng, 60, k % 3 == 0 ? 8 : 40, 100, k % 2 == 0));
  sets.push_back(random_intervals_problem(kSlow > 1 ? 500 : 3000, 9));
  sets.push_back(trace_like_problem(kSlow > 1 ? 500 : 3000, 9));
  for (const PlanProblem& p : sets)
    for (size_t w = 0; w < 8; ++w) {
      const std::vector<Offset> kept = lifetime_aware_time_order_replay(p, w, true);
      ASSERT_TRUE(check_plan(p, kept, std::nullopt).ok()) << p.buffers.size() << " buffers, weight set " << w;
      ASSERT_EQ(kept, lifetime_aware_time_order_replay(p, w, false)) << p.buffers.size() << " buffers, weight set " << w;
    }
}

TEST(LifetimeAwarePlanner, AnExhaustedBudgetLeavesGreedysPlacement) {
  const PlanProblem p = trace_like_problem(2000, 3);
  PlannerOptions none;
  none.time_limit_s = 0;
  none.guaranteed_replays = 0;
  const PlanResult r = plan_lifetime_aware(p, none);
  EXPECT_EQ(r.offsets, plan_greedy_size(p).offsets);
  EXPECT_EQ(r.winner, "greedy-size");
  EXPECT_NE(r.note.find("cut by the 0 s budget"), std::string::npos) << r.note;
}

// With no budget left, the guaranteed replays still run: the result is a replay, and it is
// the same placement as with a budget that lets exactly those replays finish.
TEST(LifetimeAwarePlanner, GuaranteedReplaysRunPastTheBudget) {
  const PlanProblem p = trace_like_problem(2000, 3);
  PlannerOptions none;
  none.time_limit_s = 0;
  none.guaranteed_replays = 2;
  const PlanResult r = plan_lifetime_aware(p, none);
  ASSERT_TRUE(check_plan(p, r.offsets, std::nullopt).ok());
  // 2,000 buffers: 12 replay orders x 8 weight sets, all but the two guaranteed cut.
  EXPECT_NE(r.note.find("94 of 96 replays cut by the 0 s budget"), std::string::npos) << r.note;
  EXPECT_LE(r.peak, plan_greedy_size(p).peak) << r.note;
  none.guaranteed_replays = 0;  // the count above is the guaranteed ones, not a fixed cost
  EXPECT_NE(plan_lifetime_aware(p, none).note.find("96 of 96 replays cut"), std::string::npos);
}

// The members best runs, each alone with the same options. With a zero budget best runs only
// what always completes (greedy-size, the linked-list replays of small windows and
// lifetime-aware's guaranteed replays), so each comparison below is deterministic: best must
// not be worse than any of them, and lifetime-aware not worse than greedy-size.
TEST(BestPlanner, NoWorseThanAnyMemberWhenTheBudgetIsCut) {
  PlannerOptions cut;
  cut.time_limit_s = 0;
  cut.guaranteed_replays = 2;
  for (const PlanProblem& p : random_and_generated_sets()) {
    const PlanResult best = plan_best(p, cut);
    ASSERT_TRUE(check_plan(p, best.offsets, std::nullopt).ok());
    const PlanResult gs = plan_greedy_size(p), la = plan_lifetime_aware(p, cut);
    EXPECT_LE(la.peak, gs.peak) << p.buffers.size() << " buffers: " << la.note;
    EXPECT_LE(best.peak, gs.peak) << best.note;
    EXPECT_LE(best.peak, la.peak) << p.buffers.size() << " buffers: " << best.note << " / " << la.note;
    if (p.buffers.size() <= 20000) {
      for (ListFit fit : {ListFit::kFirst, ListFit::kBest}) {
        EXPECT_LE(best.peak, plan_linked_list(p, fit).peak) << best.note;
      }
    }
    EXPECT_NE(best.note.find(best.winner + " won"), std::string::npos) << best.note;
    EXPECT_NE(best.note.find("members tried on the highest window: greedy-size"), std::string::npos) << best.note;
  }
}

// Larger generated instances (the bench's shapes above 5,000 buffers, where lifetime-aware
// replays only time order): the same properties with one guaranteed replay, as by default.
TEST(BestPlanner, NoWorseThanAnyMemberOnLargerTraces) {
  PlannerOptions cut;
  cut.time_limit_s = 0;
  const size_t n = kSlow > 1 ? 2000 : 6000;
  for (const PlanProblem& p : {trace_like_problem(n, 5), random_intervals_problem(n, 5)}) {
    const PlanResult best = plan_best(p, cut), la = plan_lifetime_aware(p, cut), gs = plan_greedy_size(p);
    ASSERT_TRUE(check_plan(p, best.offsets, std::nullopt).ok());
    EXPECT_LE(la.peak, gs.peak) << la.note;
    EXPECT_LE(best.peak, la.peak) << best.note << " / " << la.note;
    EXPECT_LE(best.peak, gs.peak) << best.note;
  }
}

TEST(BestPlanner, NoWorseThanTheHeuristicsItRuns) {
  PlannerOptions opt;
  opt.time_limit_s = 0.2;  // whatever the budget cuts, the result must hold these properties
  for (const PlanProblem& p : random_and_generated_sets()) {
    const PlanResult best = plan_best(p, opt);
    ASSERT_TRUE(check_plan(p, best.offsets, std::nullopt).ok());
    EXPECT_LE(best.peak, plan_greedy_size(p).peak);
    EXPECT_GE(best.peak, best.lower_bound);
    EXPECT_GE(best.lower_bound, lower_bound(p));
    EXPECT_FALSE(best.winner.empty());
  }
}

// The smallest peak by exhaustive search (tiny problems only).
uint64_t brute_force_peak(const PlanProblem& p) {
  std::vector<uint64_t> off(p.buffers.size());
  std::function<bool(size_t, uint64_t)> fits = [&](size_t i, uint64_t peak) {
    if (i == p.buffers.size()) return true;
    const auto& b = p.buffers[i];
    for (uint64_t o = 0; o + b.size.value <= peak; o += b.alignment.value) {
      bool clash = false;
      for (size_t j = 0; j < i && !clash; ++j)
        clash = p.buffers[j].lifespan.intersects(b.lifespan) && off[j] < o + b.size.value &&
                o < off[j] + p.buffers[j].size.value;
      if (clash) continue;
      off[i] = o;
      if (fits(i + 1, peak)) return true;
    }
    return false;
  };
  for (uint64_t peak = lower_bound(p).value;; ++peak)
    if (fits(0, peak)) return peak;
}

// Where the load bound is not reachable, the optimum is proved by exact's infeasibility
// proofs, and best reports it as the lower bound.
TEST(BestPlanner, ProvesTheOptimumAboveTheLoadBound) {
  Rng rng(13);
  int raised = 0;
  for (int k = 0; k < 150; ++k) {
    const PlanProblem p = random_problem(rng, 6, 6, 6, k % 3 == 0);
    const uint64_t optimum = brute_force_peak(p);
    const PlanResult r = plan_best(p);
    ASSERT_TRUE(r.proven_optimal) << r.note;
    ASSERT_EQ(r.peak.value, optimum) << "problem " << k;
    ASSERT_EQ(r.lower_bound.value, optimum) << r.note;
    raised += optimum > lower_bound(p).value;
  }
  EXPECT_GT(raised, 5);  // the set includes problems whose load bound is not reachable
}

// A 5,000-buffer trace made of many small independent windows: too large for one search,
// but every window is small. The highest window (a tiny instance whose optimum lies above its
// load bound, sizes scaled up) is solved exactly, which proves the whole plan optimal.
TEST(BestPlanner, SolvesALargeTraceOfSmallIndependentWindowsExactly) {
  Rng rng(43);
  PlanProblem hard;  // a tiny problem whose optimum exceeds its load bound (alignment helps)
  uint64_t hard_optimum = 0;
  while (hard_optimum <= lower_bound(hard).value) {
    hard = random_problem(rng, 6, 6, 6, true);
    hard_optimum = brute_force_peak(hard);
  }
  // Sizes and alignments scaled alike: the same problem in units of kScale bytes, whose
  // load lies above every other window's peak.
  constexpr uint64_t kScale = 1000;
  PlanProblem p;
  TimeValue t = 0;
  for (const PlanBuffer& b : hard.buffers)
    p.buffers.push_back({"hard." + b.id, b.lifespan, Bytes{b.size.value * kScale}, Bytes{b.alignment.value * kScale}, {}});
  t = 10;
  while (p.buffers.size() < 5000) {
    const PlanProblem w = random_problem(rng, 12, 10, 100, true);
    for (const PlanBuffer& b : w.buffers)
      p.buffers.push_back({std::to_string(p.buffers.size()), {t + b.lifespan.lower, t + b.lifespan.upper},
                           b.size, b.alignment, {}});
    t += 12;
  }
  PlannerOptions opt;
  opt.time_limit_s = 30 * kSlow;
  const PlanResult r = plan_best(p, opt);
  ASSERT_TRUE(check_plan(p, r.offsets, std::nullopt).ok());
  EXPECT_TRUE(r.proven_optimal) << r.note;
  EXPECT_EQ(r.peak.value, hard_optimum * kScale) << r.note;
  EXPECT_EQ(r.lower_bound.value, hard_optimum * kScale) << r.note;
  EXPECT_GT(r.lower_bound, lower_bound(p));  // raised above the load bound by exact's proof
  EXPECT_NE(r.note.find("raised above the load bound by exact's proofs"), std::string::npos) << r.note;
}

// A peak to beat narrows exact's search: at the optimum itself, exact proves that nothing is
// lower (its lower bound is the optimum) without calling its own higher placement optimal.
TEST(ExactPlanner, APeakToBeatAtTheOptimumIsProvedOptimal) {
  Rng rng(17);
  int above = 0;
  for (int k = 0; k < 80; ++k) {
    const PlanProblem p = random_problem(rng, 6, 6, 6, k % 2 == 0);
    const uint64_t optimum = brute_force_peak(p);
    PlannerOptions opt;
    opt.peak_to_beat = Bytes{optimum};
    const PlanResult r = plan_exact(p, opt);
    ASSERT_TRUE(check_plan(p, r.offsets, std::nullopt).ok());
    ASSERT_EQ(r.lower_bound.value, optimum) << r.note;
    ASSERT_GE(r.peak.value, optimum);
    ASSERT_EQ(r.proven_optimal, r.peak.value == optimum) << r.note;
    above += r.peak.value > optimum;
    opt.peak_to_beat = Bytes{optimum + 1};  // beatable: exact finds the optimum
    const PlanResult better = plan_exact(p, opt);
    ASSERT_EQ(better.peak.value, optimum) << better.note;
    ASSERT_TRUE(better.proven_optimal) << better.note;
  }
  EXPECT_GT(above, 0);  // some heuristic placements lie above the optimum
}

TEST(ExactPlanner, ReportsItsProvenLowerBound) {
  PlanProblem p;  // three buffers pairwise live together: the optimum is their sum
  p.buffers = {{"a", {0, 4}, {8}, {1}, {}}, {"b", {1, 5}, {8}, {1}, {}}, {"c", {2, 6}, {8}, {1}, {}}};
  const PlanResult r = plan_exact(p);
  EXPECT_TRUE(r.proven_optimal);
  EXPECT_EQ(r.lower_bound.value, 24u);
  PlannerOptions tight;
  tight.capacity = Bytes{20};
  const PlanResult none = plan_exact(p, tight);
  EXPECT_FALSE(none.found);
  EXPECT_EQ(none.lower_bound.value, 24u);  // max(load bound, capacity + 1)
}

}  // namespace
}  // namespace npuforge::planner
