// Every planner on the MiniMalloc "challenging" instances A-K (capacity 1048576), on a real
// compiler trace (tests/data/traces), on traces found in --traces DIR (downloaded by hand: see
// tests/data/traces/README.md), on random and trace-like synthetic sets of 1k to 1M buffers,
// and on the generator's memory maps: a table of peak / lower bound, wall and CPU time (the
// machine is shared: CPU time is the planner's own cost). Then Google Benchmark timings of the
// checker and of greedy-size. Run: build/bench/bench_planners
//   --quick          skip exact on A-K
//   --time-limit S   budget of exact, lifetime-aware and best (default 60)
//   --max-n N        skip instances of more than N buffers
//   --only A,B       only the instances whose names start with one of these
//   --algos A,B      only these planners
//   --traces DIR     also plan every *.csv in DIR (MiniMalloc format)
//   --table-only     no Google Benchmark part
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <optional>

#include <fmt/core.h>

#include "planner/plan_check.h"
#include "planner/plan_io.h"
#include "planner/plan_synth.h"
#include "planner/planner.h"
#include "gen/generator.h"
#include "gen/profile.h"
#include "isa/npu_config.h"
#include "util/error.h"
#include "util/rng.h"

namespace {

using namespace npuforge;
using namespace npuforge::planner;

struct Settings {
  double time_limit = 60;
  bool quick = false, table_only = false;
  size_t max_n = SIZE_MAX;
  std::string traces;
  std::vector<std::string> only, algos;  // empty: all

  bool wants_instance(const std::string& name) const {
    return only.empty() || std::any_of(only.begin(), only.end(), [&](const std::string& o) { return name.starts_with(o); });
  }
  bool wants_algo(const std::string& algo) const {
    return algos.empty() || std::find(algos.begin(), algos.end(), algo) != algos.end();
  }
};

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  for (size_t at = 0; at <= text.size();) {
    const size_t comma = std::min(text.find(',', at), text.size());
    if (comma > at) out.push_back(text.substr(at, comma - at));
    at = comma + 1;
  }
  return out;
}

std::string duration(double ms) {
  return ms < 10000 ? fmt::format("{:.0f}ms", ms) : fmt::format("{:.1f}s", ms / 1000);
}

struct Cell {
  std::string text;
  std::optional<Bytes> peak;
  std::string note{};  // the planner's own account (best: the winner, the members' peaks, the bound)
};

Cell cell(const PlanProblem& p, const std::string& algo, const PlannerOptions& opt) {
  const auto t0 = std::chrono::steady_clock::now();
  const std::clock_t c0 = std::clock();
  PlanResult r;
  try {
    r = run_planner(algo, p, opt);
  } catch (const Error& e) {  // e.g. linked-list: beyond the SRAM allocator's 32-bit range
    return {std::string(e.what()).find("32-bit") != std::string::npos ? "n/a (>4 GiB)" : "error", std::nullopt};
  }
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  const double cpu_ms = 1000.0 * double(std::clock() - c0) / CLOCKS_PER_SEC;
  const std::string time = fmt::format("{} ({} cpu)", duration(ms), duration(cpu_ms));
  if (!r.found) return {"none " + time, std::nullopt};
  const bool ok = check_plan(p, r.offsets, std::nullopt).ok();  // overlaps, alignment
  const double lb = double(std::max<uint64_t>(1, lower_bound(p).value));
  return {fmt::format("{:.4f}{}{} {}", double(r.peak.value) / lb, ok ? "" : "!", r.proven_optimal ? "*" : "", time),
          r.peak, fmt::format("peak {}, {}", r.peak.value, r.note)};
}

// The generator's memory maps: its buffers and lifetimes, offsets cleared so that every planner
// places them afresh; the generator's own online placement is printed for comparison.
void add_generated(std::vector<std::pair<std::string, PlanProblem>>& instances, const Settings& s) {
  const auto& isa = isa::builtin_isa();
  for (const char* name : {"default", "near-full"}) {
    for (uint64_t length : {1000, 20000}) {
      if (!s.wants_instance(fmt::format("gen-{}-{}k", name, length / 1000))) continue;
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

void add_files(std::vector<std::pair<std::string, PlanProblem>>& instances, const std::filesystem::path& dir,
               std::optional<Bytes> capacity, const Settings& s) {
  std::map<std::string, std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().extension() == ".csv") files[e.path().filename().string()] = e.path();
  for (const auto& [name, path] : files) {
    const std::string label = name.substr(0, name.find('.'));
    if (!s.wants_instance(label)) continue;
    PlanProblem p = load_plan_file(path);
    p.capacity = capacity;
    instances.emplace_back(label, std::move(p));
  }
}

// Whether `algo` runs on an instance of n buffers, or why not.
std::string skip_reason(const std::string& algo, const PlanProblem& p, const Settings& s) {
  const size_t n = p.buffers.size();
  if (algo == "exact" && s.quick && p.capacity) return "skipped (--quick)";
  if (algo == "exact" && n > 1000) return "skipped (n>1000)";
  if (algo.starts_with("linked-list") && n > 100000) return "skipped (n>100k)";
  return "";
}

void table(const Settings& s) {
  std::vector<std::pair<std::string, PlanProblem>> instances;
  const std::filesystem::path data = std::filesystem::path(NPUFORGE_SOURCE_DIR) / "tests/data";
  // The instances are part of the repository: a missing directory is a broken checkout.
  add_files(instances, data / "minimalloc/challenging", Bytes{1048576}, s);
  add_files(instances, data / "traces", std::nullopt, s);
  if (!s.traces.empty()) {
    if (std::filesystem::is_directory(s.traces)) add_files(instances, s.traces, std::nullopt, s);
    else fmt::print("--traces {}: no such directory; skipped\n", s.traces);
  }
  for (size_t n : {1000, 10000, 100000, 1000000}) {
    if (n > s.max_n) continue;
    const std::string rand = fmt::format("rand{}k", n / 1000), trace = fmt::format("trace{}k", n / 1000);
    if (s.wants_instance(rand)) instances.emplace_back(rand, random_intervals_problem(n, 42 + uint64_t(n)));
    if (s.wants_instance(trace)) instances.emplace_back(trace, trace_like_problem(n, 7 + uint64_t(n)));
  }
  add_generated(instances, s);
  std::vector<std::string> algos;
  for (const auto& a : planner_names())
    if (s.wants_algo(a)) algos.push_back(a);
  fmt::print("peak/LB, wall time (CPU time) per planner ('!' = checker failed, '*' = proven optimal, 'none' = no "
             "placement in capacity); budget of exact, lifetime-aware and best {} s\n", s.time_limit);
  fmt::print("{:<12} {:>7} {:>11}", "instance", "buffers", "LB");
  for (const auto& a : algos) fmt::print(" | {:>27}", a);
  fmt::print("\n");
  int la_worse = 0, compared = 0;
  for (const auto& [name, p] : instances) {
    if (p.buffers.size() > s.max_n) continue;
    fmt::print("{:<12} {:>7} {:>11}", name, p.buffers.size(), lower_bound(p).value);
    std::fflush(stdout);
    PlannerOptions opt;
    opt.capacity = p.capacity;
    opt.time_limit_s = s.time_limit;
    std::map<std::string, Cell> cells;
    for (const auto& a : algos) {
      const std::string why = skip_reason(a, p, s);
      cells[a] = why.empty() ? cell(p, a, opt) : Cell{why, std::nullopt};
      fmt::print(" | {:>27}", cells[a].text);
      std::fflush(stdout);
    }
    fmt::print("\n");
    if (!cells["best"].note.empty()) fmt::print("    best on {}: {}\n", name, cells["best"].note);
    if (cells["best"].peak)
      for (const auto& [a, c] : cells)
        if (c.peak && *c.peak < *cells["best"].peak) fmt::print("    WORSE: best above {} on {}\n", a, name);
    if (cells["lifetime-aware"].peak && cells["greedy-size"].peak) {
      ++compared;
      la_worse += *cells["lifetime-aware"].peak > *cells["greedy-size"].peak;
    }
  }
  fmt::print("lifetime-aware above greedy-size on {} of {} instances\n", la_worse, compared);
}

void BM_CheckPlan(benchmark::State& state) {
  const PlanProblem p = random_intervals_problem(size_t(state.range(0)), 7);
  const auto off = plan_greedy_size(p).offsets;
  for (auto _ : state) benchmark::DoNotOptimize(check_plan(p, off, std::nullopt).ok());
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_CheckPlan)->Arg(1000)->Arg(100000)->Unit(benchmark::kMillisecond);

void BM_GreedySizeTraceLike(benchmark::State& state) {
  const PlanProblem p = trace_like_problem(size_t(state.range(0)), 7);
  for (auto _ : state) benchmark::DoNotOptimize(plan_greedy_size(p).peak);
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_GreedySizeTraceLike)->Arg(10000)->Arg(100000)->Arg(1000000)->Unit(benchmark::kMillisecond);

void BM_GreedySizeRandom(benchmark::State& state) {
  const PlanProblem p = random_intervals_problem(size_t(state.range(0)), 7);
  for (auto _ : state) benchmark::DoNotOptimize(plan_greedy_size(p).peak);
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_GreedySizeRandom)->Arg(10000)->Arg(100000)->Arg(1000000)->Unit(benchmark::kMillisecond);

}  // namespace

int main(int argc, char** argv) {
  Settings s;
  std::vector<char*> rest = {argv[0]};
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--quick")) s.quick = true;
    else if (!std::strcmp(argv[i], "--table-only")) s.table_only = true;
    else if (!std::strcmp(argv[i], "--time-limit") && i + 1 < argc) s.time_limit = std::atof(argv[++i]);
    else if (!std::strcmp(argv[i], "--max-n") && i + 1 < argc) s.max_n = size_t(std::atoll(argv[++i]));
    else if (!std::strcmp(argv[i], "--traces") && i + 1 < argc) s.traces = argv[++i];
    else if (!std::strcmp(argv[i], "--only") && i + 1 < argc) s.only = split_list(argv[++i]);
    else if (!std::strcmp(argv[i], "--algos") && i + 1 < argc) s.algos = split_list(argv[++i]);
    else rest.push_back(argv[i]);
  }
  table(s);
  if (s.table_only) return 0;
  int rest_argc = int(rest.size());
  benchmark::Initialize(&rest_argc, rest.data());
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
