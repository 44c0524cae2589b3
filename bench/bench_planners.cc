// Every planner on the MiniMalloc "challenging" instances (capacity 1048576) and on random
// interval sets of 100 to 100k buffers: a table of peak / lower bound and milliseconds.
// Then Google Benchmark timings of the checker. Run: build/bench/bench_planners
// (--quick skips the exact planner on A-G; --time-limit S sets its budget, default 60).
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <map>

#include <fmt/core.h>

#include "planner/plan_check.h"
#include "planner/plan_io.h"
#include "planner/planner.h"
#include "gen/generator.h"
#include "gen/profile.h"
#include "isa/npu_config.h"
#include "util/rng.h"

namespace {

using namespace npuforge;
using namespace npuforge::planner;

PlanProblem random_intervals(int n, uint64_t seed) {
  Rng rng(seed);
  PlanProblem p;
  for (int i = 0; i < n; ++i) {
    const int64_t t = rng.range(0, n - 1);
    p.buffers.push_back({std::to_string(i), {t, t + rng.range(1, 100)},
                         Bytes{64 * uint64_t(rng.range(1, 256))}, Bytes{64}, {}});
  }
  return p;
}

std::string cell(const PlanProblem& p, const std::string& algo, const PlannerOptions& opt) {
  const auto t0 = std::chrono::steady_clock::now();
  const PlanResult r = run_planner(algo, p, opt);
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  if (!r.found) return fmt::format("none {:.0f}ms", ms);
  const bool ok = check_plan(p, r.offsets, std::nullopt).ok();  // overlaps, alignment
  const double lb = double(std::max<uint64_t>(1, lower_bound(p).value));
  return fmt::format("{:.3f}{} {:.0f}ms", double(r.peak.value) / lb, ok ? "" : "!", ms);
}

// The generator's memory maps: its buffers and lifetimes, offsets cleared so that every planner
// places them afresh; the generator's own online placement is printed for comparison.
void add_generated(std::vector<std::pair<std::string, PlanProblem>>& instances) {
  const auto& isa = isa::builtin_isa();
  for (const char* name : {"default", "near-full"}) {
    for (uint64_t length : {1000, 20000}) {
      const auto profile = gen::Profile::load_file(std::filesystem::path(NPUFORGE_SOURCE_DIR) / "configs/gen" /
                                                   (std::string(name) + ".yaml"));
      gen::GenOptions opt;
      opt.seed = 1;
      opt.length = length;
      PlanProblem p = problem_from_memmap(gen::generate(isa, isa::NpuConfig{}, profile, opt).memmap());
      const std::string label = fmt::format("gen-{}-{}k", name, length / 1000);
      fmt::print("{}: the generator's online placement (first/best/next-fit with its OOM policy) peaks at "
                 "{:.3f} x LB\n",
                 label, double(plan_peak(p).value) / double(std::max<uint64_t>(1, lower_bound(p).value)));
      for (auto& b : p.buffers) b.offset.reset();
      instances.emplace_back(label, std::move(p));
    }
  }
}

void table(double time_limit, bool quick) {
  std::vector<std::pair<std::string, PlanProblem>> instances;
  const std::filesystem::path dir =
      std::filesystem::path(NPUFORGE_SOURCE_DIR) / "tests/data/minimalloc/challenging";
  std::map<std::string, std::filesystem::path> files;
  // The instances are part of the repository: a missing directory is a broken checkout.
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().extension() == ".csv") files[e.path().filename().string()] = e.path();
  for (const auto& [name, path] : files) {
    PlanProblem p = load_plan_file(path);
    p.capacity = Bytes{1048576};
    instances.emplace_back(name.substr(0, name.find('.')), std::move(p));
  }
  for (int n : {100, 1000, 10000, 100000})
    instances.emplace_back(fmt::format("rand{}", n), random_intervals(n, 42 + uint64_t(n)));
  add_generated(instances);
  fmt::print("peak/LB and wall time per planner ('!' = checker failed, 'none' = no placement in "
             "capacity); exact budget {} s\n", time_limit);
  fmt::print("{:<9} {:>7} {:>9}", "instance", "buffers", "LB");
  for (const auto& a : planner_names()) fmt::print(" | {:>18}", a);
  fmt::print("\n");
  for (const auto& [name, p] : instances) {
    fmt::print("{:<9} {:>7} {:>9}", name, p.buffers.size(), lower_bound(p).value);
    std::fflush(stdout);
    PlannerOptions opt;
    opt.capacity = p.capacity;
    opt.time_limit_s = p.capacity ? time_limit : std::min(time_limit, 10.0);
    for (const auto& a : planner_names()) {
      std::string c;
      if (a == "exact" && quick && p.capacity) c = "skipped (--quick)";
      else if (a == "exact" && p.buffers.size() > 1000) c = "skipped (n>1000)";
      else if (a == "naive" || a.starts_with("linked") || a == "greedy-size" || a == "lifetime-aware" || a == "exact") c = cell(p, a, opt);
      fmt::print(" | {:>18}", c);
      std::fflush(stdout);
    }
    fmt::print("\n");
  }
}

void BM_CheckPlan(benchmark::State& state) {
  const PlanProblem p = random_intervals(int(state.range(0)), 7);
  const auto off = plan_greedy_size(p).offsets;
  for (auto _ : state) benchmark::DoNotOptimize(check_plan(p, off, std::nullopt).ok());
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_CheckPlan)->Arg(1000)->Arg(100000)->Unit(benchmark::kMillisecond);

}  // namespace

int main(int argc, char** argv) {
  double time_limit = 60;
  bool quick = false, table_only = false;
  std::vector<char*> rest = {argv[0]};
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--quick")) quick = true;
    else if (!std::strcmp(argv[i], "--table-only")) table_only = true;
    else if (!std::strcmp(argv[i], "--time-limit") && i + 1 < argc) time_limit = std::atof(argv[++i]);
    else rest.push_back(argv[i]);
  }
  table(time_limit, quick);
  if (table_only) return 0;
  int rest_argc = int(rest.size());
  benchmark::Initialize(&rest_argc, rest.data());
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
