// Entries for the generator and memory-plan formats: profiles, plans (CSV and YAML),
// memory maps and regression lists.
#include <algorithm>
#include <filesystem>
#include <string>
#include <string_view>

#include <fmt/core.h>
#include <unistd.h>

#include "bundle/memmap.h"
#include "fuzz/fuzz_targets.h"
#include "gen/generator.h"
#include "gen/profile.h"
#include "planner/plan_check.h"
#include "planner/plan_io.h"
#include "planner/planner.h"
#include "regress/jobs.h"
#include "util/file_io.h"

namespace npuforge::fuzz {
namespace {

std::string_view as_text(std::span<const uint8_t> data) {
  return {reinterpret_cast<const char*>(data.data()), data.size()};
}

// Enough to reach every generator path (OOM policies, directed sequences) in milliseconds.
constexpr int64_t kMaxGenLength = 200;
// The planners are O(n log n) to O(n^2); beyond this the fuzzer would mostly wait.
constexpr size_t kMaxPlanBuffers = 256;
// best and lifetime-aware improve until a wall-clock budget (default 60 s) runs out; the fuzzer
// stops a run after 10 s, so a problem they could keep improving reads as a hang without this.
constexpr double kPlannerBudgetSeconds = 0.5;

// Whether the offsets the input fixes are consistent among themselves (aligned, disjoint):
// naive and greedy-size keep fixed offsets as given, so only then must their plans check clean.
bool fixed_offsets_check_clean(const planner::PlanProblem& problem) {
  planner::PlanProblem fixed;
  for (const auto& b : problem.buffers)
    if (b.offset) fixed.buffers.push_back(b);
  return planner::check_plan(fixed).ok();
}

// `npuforge plan` and `check-plan` on a parsed plan: every planner's result must check clean.
void plan_and_check(const planner::PlanProblem& problem) {
  planner::check_plan(problem);
  planner::lower_bound(problem);
  if (problem.buffers.size() > kMaxPlanBuffers) return;
  const bool fixed = std::any_of(problem.buffers.begin(), problem.buffers.end(),
                                 [](const auto& b) { return b.offset.has_value(); });
  if (fixed && !fixed_offsets_check_clean(problem)) return;
  for (const std::string& name : planner::planner_names()) {
    if (name == "exact") continue;  // exponential, with a wall-clock budget
    if (fixed && name != "naive" && name != "greedy-size") continue;
    planner::PlannerOptions options;
    options.time_limit_s = kPlannerBudgetSeconds;
    const planner::PlanResult r = planner::run_planner(name, problem, options);
    if (!r.found) continue;
    const auto check = planner::check_plan(problem, r.offsets, std::nullopt);
    if (!check.ok()) throw InvariantBroken(fmt::format("planner {}: {}", name, check.report()));
  }
}

}  // namespace

// `npuforge gen --profile`: load, then generate a short program with it.
void fuzz_gen_profile(std::span<const uint8_t> data) {
  const gen::Profile profile = gen::Profile::load_string(as_text(data), "fuzz_profile.yaml");
  gen::GenOptions options;
  options.length = std::min(profile.length, kMaxGenLength);
  gen::generate(isa::builtin_isa(), isa::NpuConfig{}, profile, options);
}

void fuzz_plan_csv(std::span<const uint8_t> data) {
  const auto problem = planner::read_plan_csv(as_text(data), "fuzz.csv");
  plan_and_check(problem);
  if (planner::read_plan_csv(planner::write_plan_csv(problem), "<written>") != problem)
    throw InvariantBroken("plan CSV does not read back as written");
}

void fuzz_plan_yaml(std::span<const uint8_t> data) {
  const auto problem = planner::read_plan_yaml(as_text(data), "fuzz_plan.yaml");
  plan_and_check(problem);
  if (planner::read_plan_yaml(planner::write_plan_yaml(problem), "<written>") != problem)
    throw InvariantBroken("plan YAML does not read back as written");
}

// `npuforge check-plan prog.memmap.yaml` (and the simulator's checkers' input).
void fuzz_memmap(std::span<const uint8_t> data) {
  const auto map = bundle::MemMap::load_string(as_text(data), "fuzz.memmap.yaml");
  planner::check_memmap(map);
  const std::string yaml = map.to_yaml();
  if (bundle::MemMap::load_string(yaml, "<written>").to_yaml() != yaml)
    throw InvariantBroken("memory map does not read back as written");
}

// `npuforge regress LIST`: load_list reads a path, so the bytes go to a per-process file.
void fuzz_regress_list(std::span<const uint8_t> data) {
  static const std::filesystem::path dir = [] {
    auto d = std::filesystem::temp_directory_path() / fmt::format("npuforge-fuzz-{}", getpid()) / "regress";
    std::filesystem::create_directories(d);
    return d;
  }();
  const auto path = dir / "list.yaml";
  util::write_file(path, data, "regression list");
  regress::load_list(path);
}

}  // namespace npuforge::fuzz
