// The model layer on real models: import time (parse + shape inference + folding) and
// reference-interpreter time per model, and the interpreter's MAC/s on the largest Conv of
// all models found. Models: configs/models/small_convnet.yaml, plus every model of
// configs/models/models.txt present in the model cache ($NPUFORGE_MODEL_CACHE, default
// ~/.cache/npuforge/models; scripts/fetch-models.sh fills it). Absent models are skipped.
// Run: build/bench/bench_model [--benchmark_filter=...]
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/core.h>

#include "model/interpreter.h"
#include "model/load.h"
#include "model/stats.h"
#include "model/subgraph.h"
#include "util/error.h"
#include "util/rng.h"

namespace {

using namespace npuforge;
using namespace npuforge::model;
namespace fs = std::filesystem;

struct InputSpec {
  std::string name;
  DType dtype = DType::kFloat32;
  Shape shape;
  double lo = -1, hi = 1;
};

struct ModelEntry {
  std::string name;
  fs::path path;
  std::vector<InputSpec> inputs;  // empty: the graph's own (fully known) input shapes
};

fs::path model_cache() {
  if (const char* env = std::getenv("NPUFORGE_MODEL_CACHE")) return env;
  const char* home = std::getenv("HOME");
  return fs::path(home ? home : ".") / ".cache/npuforge/models";
}

// INPUT|DTYPE|SHAPE|LO|HI[,...] as configs/models/models.txt writes inputs.
std::vector<InputSpec> parse_inputs(const std::string& column) {
  std::vector<InputSpec> specs;
  std::stringstream list(column);
  std::string item;
  while (std::getline(list, item, ',')) {
    std::vector<std::string> f;
    std::stringstream parts(item);
    std::string p;
    while (std::getline(parts, p, '|')) f.push_back(p);
    if (f.size() != 5) throw Error("models.txt: bad inputs column '" + column + "'");
    InputSpec s;
    s.name = f[0];
    s.dtype = dtype_from_name(f[1]).value_or(DType::kFloat32);
    s.shape = parse_input_shape(f[0] + "=" + f[2]).second;
    s.lo = std::stod(f[3]);
    s.hi = std::stod(f[4]);
    specs.push_back(s);
  }
  return specs;
}

std::vector<ModelEntry> find_models() {
  std::vector<ModelEntry> models{{"small_convnet", fs::path(NPUFORGE_SOURCE_DIR) / "configs/models/small_convnet.yaml", {}}};
  std::ifstream list(fs::path(NPUFORGE_SOURCE_DIR) / "configs/models/models.txt");
  std::string line;
  while (std::getline(list, line)) {
    std::stringstream in(line);
    std::string name, source, sha, inputs, options;
    if (!(in >> name >> source >> sha >> inputs) || name.starts_with("#")) continue;
    in >> options;
    if (options.find("unsupported=") != std::string::npos) continue;
    const fs::path path = model_cache() / (name + ".onnx");
    if (fs::exists(path)) models.push_back({name, path, parse_inputs(inputs)});
  }
  return models;
}

LoadOptions load_options(const ModelEntry& m) {
  LoadOptions o;
  for (const InputSpec& s : m.inputs) o.input_shapes.emplace(s.name, s.shape);
  return o;
}

// Seeded uniform inputs, as the model tests make them.
TensorMap make_inputs(const Graph& g, const ModelEntry& m) {
  TensorMap inputs;
  Rng rng(1);
  for (const std::string& name : g.inputs) {
    const ValueInfo& info = *g.find_value(name);
    InputSpec spec{name, info.dtype, info.shape, -1, 1};
    for (const InputSpec& s : m.inputs)
      if (s.name == name) spec = s;
    Tensor t(info.dtype, info.shape);
    for (int64_t i = 0; i < t.numel(); ++i) {
      const double u = static_cast<double>(rng.next() >> 11) * 0x1.0p-53;
      const double v = spec.lo + (spec.hi - spec.lo) * u;
      switch (t.dtype()) {
        case DType::kFloat32: t.values<float>()[static_cast<size_t>(i)] = static_cast<float>(v); break;
        case DType::kUInt8: t.values<uint8_t>()[static_cast<size_t>(i)] = static_cast<uint8_t>(std::clamp(v, 0.0, 255.0)); break;
        case DType::kInt8: t.values<int8_t>()[static_cast<size_t>(i)] = static_cast<int8_t>(std::clamp(v, -128.0, 127.0)); break;
        case DType::kInt32: t.values<int32_t>()[static_cast<size_t>(i)] = static_cast<int32_t>(v); break;
        case DType::kInt64: t.values<int64_t>()[static_cast<size_t>(i)] = static_cast<int64_t>(v); break;
        case DType::kBool: t.values<bool>()[static_cast<size_t>(i)] = v > 0; break;
      }
    }
    inputs.emplace(name, std::move(t));
  }
  return inputs;
}

struct LargestConv {
  int64_t macs = 0;
  std::string label;
  std::shared_ptr<Graph> graph;  // the Conv alone
};

void register_skipped(const std::string& name, const std::string& why) {
  benchmark::RegisterBenchmark(name.c_str(), [why](benchmark::State& state) {
    state.SkipWithError(why.c_str());
    for (auto _ : state) {
    }
  });
}

void register_model(const ModelEntry& m, LargestConv& largest) {
  std::shared_ptr<Graph> graph;
  try {
    graph = std::make_shared<Graph>(load_model(m.path, load_options(m)));
  } catch (const Error& e) {
    register_skipped("import/" + m.name, e.what());
    return;
  }
  benchmark::RegisterBenchmark(("import/" + m.name).c_str(), [m](benchmark::State& state) {
    for (auto _ : state) benchmark::DoNotOptimize(load_model(m.path, load_options(m)));
  })->Unit(benchmark::kMillisecond);
  try {
    Interpreter check(*graph);  // every op runnable?
  } catch (const Error& e) {
    register_skipped("infer/" + m.name, e.what());
    return;
  }
  const GraphStats stats = graph_stats(*graph);
  benchmark::RegisterBenchmark(("infer/" + m.name).c_str(), [graph, m, stats](benchmark::State& state) {
    const Interpreter interpreter(*graph);
    const TensorMap inputs = make_inputs(*graph, m);
    for (auto _ : state) benchmark::DoNotOptimize(interpreter.run(inputs));
    state.counters["MACs"] = static_cast<double>(stats.macs);
    state.counters["MAC/s"] = benchmark::Counter(static_cast<double>(stats.macs), benchmark::Counter::kIsIterationInvariantRate);
  })->Unit(benchmark::kMillisecond);
  if (stats.largest_conv_macs > largest.macs) {
    for (size_t i = 0; i < graph->nodes.size(); ++i)
      if (graph->nodes[i].name == stats.largest_conv) {
        largest.macs = stats.largest_conv_macs;
        largest.label = m.name + ":" + stats.largest_conv;
        largest.graph = std::make_shared<Graph>(extract_subgraph(*graph, {i}));
      }
  }
}

void register_largest_conv(const LargestConv& largest) {
  if (!largest.graph) return;
  const std::string name = fmt::format("conv_mac_rate/{}", largest.label);
  benchmark::RegisterBenchmark(name.c_str(), [largest](benchmark::State& state) {
    const Interpreter interpreter(*largest.graph);
    const TensorMap inputs = make_inputs(*largest.graph, ModelEntry{});
    for (auto _ : state) benchmark::DoNotOptimize(interpreter.run(inputs));
    state.counters["MACs"] = static_cast<double>(largest.macs);
    state.counters["MAC/s"] = benchmark::Counter(static_cast<double>(largest.macs), benchmark::Counter::kIsIterationInvariantRate);
  })->Unit(benchmark::kMillisecond);
}

}  // namespace

int main(int argc, char** argv) {
  LargestConv largest;
  for (const ModelEntry& m : find_models()) register_model(m, largest);
  register_largest_conv(largest);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
