// The model compiler on configs/models/small_convnet.yaml and every model of
// configs/models/models.txt present in the model cache ($NPUFORGE_MODEL_CACHE, default
// ~/.cache/npuforge/models; absent models are skipped, so are models the compiler refuses,
// with the reason):
//   compile/<model>  `npuforge compile` as a library call (load, front half, back half, int8
//                    reference on the sample, writing OUT/), default options;
//   run/<model>      `npuforge run-model OUT/` (the built npuforge binary next to this bench:
//                    NPU segments on the SystemC model with every checker in child processes, CPU
//                    steps on the interpreter, bit-exact comparison): items/s is simulated
//                    inferences per second; counters give simulated cycles and instructions.
// Run: build/bench/bench_compiler [--benchmark_filter=...]
#include <benchmark/benchmark.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include <fmt/core.h>

#include "compiler/driver.h"
#include "model/load.h"
#include "model/npy.h"
#include "util/error.h"
#include "util/rng.h"

namespace {

using namespace npuforge;
namespace fs = std::filesystem;

struct ModelEntry {
  std::string name;
  fs::path path;
  model::InputShapes shapes;               // from models.txt (dynamic models need them)
  std::map<std::string, std::pair<double, double>> ranges;  // input -> [lo, hi)
};

fs::path model_cache() {
  if (const char* env = std::getenv("NPUFORGE_MODEL_CACHE")) return env;
  const char* home = std::getenv("HOME");
  return fs::path(home ? home : ".") / ".cache/npuforge/models";
}

std::vector<ModelEntry> find_models() {
  std::vector<ModelEntry> models{{"small_convnet", fs::path(NPUFORGE_SOURCE_DIR) / "configs/models/small_convnet.yaml", {}, {}}};
  std::ifstream list(fs::path(NPUFORGE_SOURCE_DIR) / "configs/models/models.txt");
  std::string line;
  while (std::getline(list, line)) {
    std::stringstream in(line);
    std::string name, source, sha, inputs, options;
    if (!(in >> name >> source >> sha >> inputs) || name.starts_with("#")) continue;
    in >> options;
    if (options.find("unsupported=") != std::string::npos) continue;
    ModelEntry m{name, model_cache() / (name + ".onnx"), {}, {}};
    if (!fs::exists(m.path)) continue;
    std::stringstream items(inputs);
    std::string item;
    while (std::getline(items, item, ',')) {  // INPUT|DTYPE|SHAPE|LO|HI
      std::vector<std::string> f;
      std::stringstream parts(item);
      for (std::string p; std::getline(parts, p, '|');) f.push_back(p);
      if (f.size() != 5) continue;
      m.shapes.emplace(f[0], model::parse_input_shape(f[0] + "=" + f[2]).second);
      m.ranges[f[0]] = {std::stod(f[3]), std::stod(f[4])};
    }
    models.push_back(std::move(m));
  }
  return models;
}

compiler::CompileOptions options(const ModelEntry& m, const fs::path& out) {
  compiler::CompileOptions o;
  o.model = m.path;
  o.input_shapes = m.shapes;
  o.npu = isa::load_npu_config("");
  o.out = out;
  return o;
}

// Seeded float inputs as .npy files in `dir`, in the model's input order; the --input list.
std::string write_inputs(const compiler::Manifest& mf, const ModelEntry& m, const fs::path& dir) {
  std::string args;
  Rng rng(1);
  for (const compiler::ManifestTensor& t : mf.inputs) {
    auto [lo, hi] = m.ranges.count(t.name) ? m.ranges.at(t.name) : std::pair{-1.0, 1.0};
    model::Tensor x(model::DType::kFloat32, t.shape);
    for (float& v : x.values<float>())
      v = static_cast<float>(lo + (hi - lo) * static_cast<double>(rng.next() >> 11) * 0x1.0p-53);
    const fs::path file = dir / fmt::format("in{}.npy", args.size());
    model::write_npy(file, x);
    args += " --input " + t.name + "=" + file.string();
  }
  return args;
}

std::pair<int, std::string> run(const std::string& cmd) {
  std::string out;
  FILE* pipe = ::popen((cmd + " 2>&1").c_str(), "r");
  if (!pipe) return {-1, ""};
  char buf[4096];
  while (size_t n = std::fread(buf, 1, sizeof buf, pipe)) out.append(buf, n);
  const int status = ::pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

void skip(const std::string& name, const std::string& why) {
  benchmark::RegisterBenchmark(name.c_str(), [why](benchmark::State& state) {
    state.SkipWithError(why.c_str());
    for (auto _ : state) {
    }
  });
}

fs::path scratch(const std::string& name) {
  return fs::temp_directory_path() / fmt::format("npuforge_bench_compiler_{}_{}", ::getpid(), name);
}

void register_model(const ModelEntry& m, const fs::path& cli) {
  const fs::path dir = scratch(m.name);
  compiler::CompileResult first;
  try {
    first = compiler::compile_model(options(m, dir / "out"), isa::builtin_isa());
  } catch (const Error& e) {
    skip("compile/" + m.name, e.what());
    return;
  }
  const uint64_t macs = first.compiled.macs, instrs = first.compiled.instructions;
  benchmark::RegisterBenchmark(("compile/" + m.name).c_str(), [m, dir, macs, instrs](benchmark::State& state) {
    for (auto _ : state) benchmark::DoNotOptimize(compiler::compile_model(options(m, dir / "again"), isa::builtin_isa()));
    state.counters["MACs"] = static_cast<double>(macs);
    state.counters["instructions"] = static_cast<double>(instrs);
  })->Unit(benchmark::kMillisecond)->Iterations(m.name == "small_convnet" ? 10 : 1);
  if (!fs::exists(cli)) {
    skip("run/" + m.name, "no npuforge binary at " + cli.string());
    return;
  }
  const std::string cmd = cli.string() + " run-model " + (dir / "out").string() + write_inputs(first.manifest, m, dir);
  benchmark::RegisterBenchmark(("run/" + m.name).c_str(), [cmd, macs](benchmark::State& state) {
    std::string last;
    for (auto _ : state) {
      auto [code, out] = run(cmd);
      if (code != 0) {
        state.SkipWithError(("run-model failed: " + out.substr(0, 2000)).c_str());
        break;
      }
      last = out;
    }
    std::smatch match;
    if (std::regex_search(last, match, std::regex("total: (\\d+) cycles, (\\d+) instructions"))) {
      state.counters["sim_cycles"] = std::stod(match[1]);
      state.counters["instructions"] = std::stod(match[2]);
      state.counters["MACs/cycle"] = static_cast<double>(macs) / std::max(1.0, std::stod(match[1]));
    }
    state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
  })->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(m.name == "small_convnet" ? 3 : 1);  // the work is in child processes
}

}  // namespace

int main(int argc, char** argv) {
  const fs::path cli = fs::read_symlink("/proc/self/exe").parent_path().parent_path() / "tools" / "npuforge";
  const std::vector<ModelEntry> models = find_models();
  for (const ModelEntry& m : models) register_model(m, cli);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  for (const ModelEntry& m : models) fs::remove_all(scratch(m.name));
  return 0;
}
