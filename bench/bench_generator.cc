// Instructions generated per second, allocation and fix-up included, for 10k- and
// 1M-instruction programs on one core (the target is >= 1M instructions/s).
// Outputs (text, files) are not part of the timing: they are written once per program.
#include <benchmark/benchmark.h>

#include "gen/generator.h"

namespace {

using namespace npuforge;

void BM_Generate(benchmark::State& state, const char* profile_name) {
  const gen::Profile profile =
      gen::Profile::load_file(std::string(NPUFORGE_SOURCE_DIR) + "/configs/gen/" + profile_name + ".yaml");
  uint64_t seed = 1;
  uint64_t instrs = 0;
  for (auto _ : state) {
    gen::GenOptions o;
    o.seed = seed++;
    o.length = state.range(0);
    const gen::GeneratedProgram g = gen::generate(isa::builtin_isa(), isa::NpuConfig{}, profile, o);
    instrs += g.bundle.instrs.size();
    benchmark::DoNotOptimize(g.bundle.instrs.data());
  }
  state.SetItemsProcessed(static_cast<int64_t>(instrs));
  state.counters["instr_per_s"] = benchmark::Counter(static_cast<double>(instrs), benchmark::Counter::kIsRate);
}

BENCHMARK_CAPTURE(BM_Generate, default, "default")->Arg(10'000)->Arg(1'000'000)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Generate, stress_fragment, "stress-fragment")->Arg(10'000)->Arg(1'000'000)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Generate, near_full, "near-full")->Arg(10'000)->Arg(1'000'000)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Generate, tiny_buffers, "tiny-buffers")->Arg(10'000)->Arg(1'000'000)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
