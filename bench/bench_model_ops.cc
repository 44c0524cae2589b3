// Reference-interpreter kernels on the layer shapes of a 224x224 MobileNet-class CNN, run
// through the op registry as the interpreter runs them. Counters: MAC/s (multiply-adds
// per second) for Conv/Gemm/MatMul-type ops, elements/s for the rest.
#include <benchmark/benchmark.h>

#include "model/op.h"
#include "util/rng.h"

namespace {
using namespace npuforge;
using namespace npuforge::model;

Tensor random_tensor(DType t, const Shape& shape, uint64_t seed) {
  Rng rng(seed);
  Tensor x(t, shape);
  for (int64_t i = 0; i < x.numel(); ++i) {
    const int64_t v = rng.range(-100, 100);
    switch (t) {
      case DType::kFloat32: x.values<float>()[static_cast<size_t>(i)] = static_cast<float>(v) / 100.0f; break;
      case DType::kUInt8: x.values<uint8_t>()[static_cast<size_t>(i)] = static_cast<uint8_t>(v + 100); break;
      case DType::kInt8: x.values<int8_t>()[static_cast<size_t>(i)] = static_cast<int8_t>(v); break;
      default: break;
    }
  }
  return x;
}

Node make_node(const char* op, size_t inputs, std::vector<std::pair<std::string, Attribute::Value>> attrs) {
  Node n;
  n.name = std::string(op) + "_bench";
  n.op_type = op;
  for (size_t i = 0; i < inputs; ++i) n.inputs.push_back("in" + std::to_string(i));
  n.outputs = {"out"};
  for (auto& [k, v] : attrs) n.attributes[k] = Attribute{std::move(v)};
  return n;
}

// args: C, M, H (= W), kernel, stride, group
void BM_Conv(benchmark::State& state) {
  const int64_t c = state.range(0), m = state.range(1), h = state.range(2), k = state.range(3), s = state.range(4),
                g = state.range(5);
  const Tensor x = random_tensor(DType::kFloat32, {1, c, h, h}, 1);
  const Tensor w = random_tensor(DType::kFloat32, {m, c / g, k, k}, 2);
  const Tensor b = random_tensor(DType::kFloat32, {m}, 3);
  const int64_t p = k / 2;
  const Node node = make_node("Conv", 3, {{"strides", std::vector<int64_t>{s, s}}, {"pads", std::vector<int64_t>{p, p, p, p}},
                                          {"group", g}});
  const OpDef& def = op_for(node, 13);
  int64_t macs = 0;
  for (auto _ : state) {
    std::vector<Tensor> y = def.run(RunContext{node, 13, {&x, &w, &b}});
    macs = y[0].numel() * (c / g) * k * k;
    benchmark::DoNotOptimize(y);
  }
  state.counters["MAC/s"] = benchmark::Counter(static_cast<double>(macs), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_Conv)
    ->ArgNames({"C", "M", "HW", "k", "s", "g"})
    ->Args({3, 32, 224, 3, 2, 1})      // stem
    ->Args({32, 32, 112, 3, 1, 32})    // depthwise
    ->Args({32, 64, 112, 1, 1, 1})     // pointwise, large image
    ->Args({128, 128, 56, 3, 2, 128})  // depthwise, stride 2
    ->Args({256, 256, 28, 1, 1, 1})    // pointwise
    ->Args({64, 64, 56, 3, 1, 1})      // dense 3x3 (ResNet-style)
    ->Args({512, 512, 14, 1, 1, 1})
    ->Unit(benchmark::kMillisecond);

void BM_QLinearConv(benchmark::State& state) {
  const int64_t c = state.range(0), m = state.range(1), h = state.range(2), k = state.range(3), g = state.range(4);
  const Tensor x = random_tensor(DType::kUInt8, {1, c, h, h}, 4);
  const Tensor w = random_tensor(DType::kInt8, {m, c / g, k, k}, 5);
  const Tensor xs = Tensor::scalar(0.02f), ws = Tensor::scalar(0.01f), ys = Tensor::scalar(0.05f);
  const Tensor xz = Tensor::scalar<uint8_t>(100), wz = Tensor::scalar<int8_t>(0), yz = Tensor::scalar<uint8_t>(128);
  const int64_t p = k / 2;
  const Node node = make_node("QLinearConv", 8, {{"pads", std::vector<int64_t>{p, p, p, p}}, {"group", g}});
  const OpDef& def = op_for(node, 13);
  int64_t macs = 0;
  for (auto _ : state) {
    std::vector<Tensor> y = def.run(RunContext{node, 13, {&x, &xs, &xz, &w, &ws, &wz, &ys, &yz}});
    macs = y[0].numel() * (c / g) * k * k;
    benchmark::DoNotOptimize(y);
  }
  state.counters["MAC/s"] = benchmark::Counter(static_cast<double>(macs), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_QLinearConv)
    ->ArgNames({"C", "M", "HW", "k", "g"})
    ->Args({32, 64, 112, 1, 1})
    ->Args({64, 64, 56, 3, 64})
    ->Args({64, 64, 56, 3, 1})
    ->Unit(benchmark::kMillisecond);

// args: M, K, N
void BM_MatMul(benchmark::State& state) {
  const int64_t m = state.range(0), k = state.range(1), n = state.range(2);
  const Tensor a = random_tensor(DType::kFloat32, {m, k}, 6), b = random_tensor(DType::kFloat32, {k, n}, 7);
  const Node node = make_node("MatMul", 2, {});
  const OpDef& def = op_for(node, 13);
  for (auto _ : state) benchmark::DoNotOptimize(def.run(RunContext{node, 13, {&a, &b}}));
  state.counters["MAC/s"] = benchmark::Counter(static_cast<double>(m * k * n), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_MatMul)->ArgNames({"M", "K", "N"})->Args({1, 1280, 1000})->Args({256, 256, 256})->Args({1024, 1024, 1024})
    ->Unit(benchmark::kMillisecond);

void BM_MaxPool(benchmark::State& state) {
  const Tensor x = random_tensor(DType::kFloat32, {1, 64, 112, 112}, 8);
  const Node node = make_node("MaxPool", 1, {{"kernel_shape", std::vector<int64_t>{3, 3}}, {"strides", std::vector<int64_t>{2, 2}},
                                             {"pads", std::vector<int64_t>{1, 1, 1, 1}}});
  const OpDef& def = op_for(node, 13);
  for (auto _ : state) benchmark::DoNotOptimize(def.run(RunContext{node, 13, {&x}}));
  state.SetItemsProcessed(state.iterations() * x.numel());
}
BENCHMARK(BM_MaxPool)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
