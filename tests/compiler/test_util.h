#pragma once
// Helpers shared by the compiler tests: YAML graphs, seeded tensors, comparisons.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "compiler/front.h"
#include "model/interpreter.h"
#include "model/load.h"
#include "model/yaml_import.h"
#include "util/rng.h"

namespace npuforge::compiler::testing {

// A YAML graph (README "Model graphs (YAML)"), shape-inferred as compile_front expects.
inline model::Graph yaml_graph(const std::string& text, const model::LoadOptions& options = front_load_options()) {
  model::Graph g = model::import_yaml_string(text, "test.yaml", ".");
  model::prepare_graph(g, options);
  return g;
}

// One 3x3 Conv y = conv(x, w), pads 1, x [1, 8, 6, 6], w [4, 8, 3, 3] given as 288 values
// ("v0, v1, ..." in OIHW order).
inline model::Graph conv_3x3_graph(const std::string& weights) {
  return yaml_graph(R"(
opset: 13
inputs: [{name: x, shape: [1, 8, 6, 6]}]
outputs: [{name: y}]
constants:
  - {name: w, shape: [4, 8, 3, 3], values: [)" + weights + R"(]}
nodes:
  - {name: c, op: Conv, inputs: [x, w], outputs: [y], attributes: {pads: [1, 1, 1, 1]}}
)");
}

// Uniform float32 in [lo, hi), seeded.
inline model::Tensor random_tensor(model::Shape shape, uint64_t seed, float lo = -1, float hi = 1) {
  model::Tensor t(model::DType::kFloat32, std::move(shape));
  Rng rng(seed);
  for (float& v : t.values<float>()) v = lo + (hi - lo) * static_cast<float>(static_cast<double>(rng.next() >> 11) * 0x1.0p-53);
  return t;
}

inline model::Tensor random_int8(model::Shape shape, uint64_t seed, int lo = -128, int hi = 127) {
  model::Tensor t(model::DType::kInt8, std::move(shape));
  Rng rng(seed);
  for (int8_t& v : t.values<int8_t>()) v = static_cast<int8_t>(rng.range(lo, hi));
  return t;
}

inline double cosine(const model::Tensor& a, const model::Tensor& b) {
  double ab = 0, aa = 0, bb = 0;
  for (int64_t i = 0; i < a.numel(); ++i) {
    ab += a.real_at(i) * b.real_at(i);
    aa += a.real_at(i) * a.real_at(i);
    bb += b.real_at(i) * b.real_at(i);
  }
  return aa == 0 && bb == 0 ? 1 : ab / std::sqrt(aa * bb);
}

// max |a - b| / max |b|.
inline double max_rel_diff(const model::Tensor& a, const model::Tensor& b) {
  double d = 0, m = 0;
  for (int64_t i = 0; i < a.numel(); ++i) {
    d = std::max(d, std::fabs(a.real_at(i) - b.real_at(i)));
    m = std::max(m, std::fabs(b.real_at(i)));
  }
  return m == 0 ? d : d / m;
}

// Runs `g` on one seeded input per graph input.
inline model::TensorMap random_inputs(const model::Graph& g, uint64_t seed, float lo = -1, float hi = 1) {
  model::TensorMap in;
  for (const std::string& name : g.inputs) in[name] = random_tensor(g.find_value(name)->shape, seed++, lo, hi);
  return in;
}

inline size_t count_ops(const model::Graph& g, const std::string& op) {
  size_t n = 0;
  for (const model::Node& node : g.nodes) n += node.op_type == op;
  return n;
}

}  // namespace npuforge::compiler::testing
