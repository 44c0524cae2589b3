// Clean-up (docs/compiler.md section 3): folds and no-op removal keep the float outputs (the interpreter is the judge).
#include "compiler/cleanup.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "model/npy.h"
#include "test_util.h"

namespace npuforge::compiler {
namespace {

using testing::count_ops;
using testing::max_rel_diff;
using testing::random_inputs;
using testing::yaml_graph;

// Cleans a copy of `g` and checks every output against the original on two inputs.
model::Graph check_cleanup(const model::Graph& g, CleanupReport* report = nullptr, double rtol = 1e-5) {
  model::Graph c = g;
  CleanupReport r = cleanup(c);
  if (report) *report = r;
  for (uint64_t seed : {1u, 2u}) {
    const model::TensorMap in = random_inputs(g, seed);
    const model::TensorMap want = model::run_graph(g, in);
    const model::TensorMap got = model::run_graph(c, in);
    for (const std::string& out : g.outputs) EXPECT_LE(max_rel_diff(got.at(out), want.at(out)), rtol) << out;
  }
  return c;
}

const char* kConvBn = R"(
opset: 13
inputs: [{name: x, shape: [1, 3, 8, 8]}]
outputs: [{name: y}]
constants:
  - {name: w, shape: [4, 3, 3, 3], random: {seed: 1}}
  - {name: b, shape: [4], random: {seed: 2}}
  - {name: g, shape: [4], random: {seed: 3, low: 0.5, high: 2}}
  - {name: beta, shape: [4], random: {seed: 4}}
  - {name: mean, shape: [4], random: {seed: 5}}
  - {name: var, shape: [4], random: {seed: 6, low: 0.1, high: 2}}
  - {name: k, shape: [4, 1, 1], random: {seed: 7, low: -2, high: 2}}
  - {name: c, shape: [1, 4, 1, 1], random: {seed: 8}}
  - {name: two, shape: [], values: [2.0]}
nodes:
  - {name: conv, op: Conv, inputs: [x, w, b], outputs: [c0], attributes: {pads: [1, 1, 1, 1]}}
  - {name: bn, op: BatchNormalization, inputs: [c0, g, beta, mean, var], outputs: [c1], attributes: {epsilon: 0.001}}
  - {name: id, op: Identity, inputs: [c1], outputs: [c2]}
  - {name: mul, op: Mul, inputs: [k, c2], outputs: [c3]}
  - {name: sub, op: Sub, inputs: [c3, c], outputs: [c4]}
  - {name: div, op: Div, inputs: [c4, two], outputs: [c5]}
  - {name: relu, op: Relu, inputs: [c5], outputs: [y]}
)";

TEST(Cleanup, FoldsBatchNormAndConstantsIntoConv) {
  CleanupReport r;
  const model::Graph c = check_cleanup(yaml_graph(kConvBn), &r);
  // Conv + Relu remain: BN, Mul, Sub, Div folded, Identity dropped.
  ASSERT_EQ(c.nodes.size(), 2u);
  EXPECT_EQ(c.nodes[0].op_type, "Conv");
  EXPECT_EQ(c.nodes[1].op_type, "Relu");
  EXPECT_EQ(r.folded.size(), 4u);
  EXPECT_EQ(r.removed_noops, std::vector<std::string>{"id"});
  EXPECT_EQ(c.outputs, std::vector<std::string>{"y"});
}

TEST(Cleanup, FoldIntoConvWithoutBiasAddsOne) {
  const model::Graph c = check_cleanup(yaml_graph(R"(
inputs: [{name: x, shape: [1, 2, 5, 5]}]
outputs: [{name: y}]
constants:
  - {name: w, shape: [3, 2, 1, 1], random: {seed: 1}}
  - {name: a, shape: [3, 1, 1], values: [1, -2, 3]}
nodes:
  - {op: Conv, inputs: [x, w], outputs: [c]}
  - {op: Add, inputs: [c, a], outputs: [y]}
)"));
  ASSERT_EQ(c.nodes.size(), 1u);
  EXPECT_EQ(c.nodes[0].inputs.size(), 3u);
  EXPECT_EQ(c.nodes[0].outputs[0], "y");  // the model's output name survives
}

TEST(Cleanup, DoesNotFoldWhenTheConvHasAnotherReader) {
  const model::Graph c = check_cleanup(yaml_graph(R"(
inputs: [{name: x, shape: [1, 2, 5, 5]}]
outputs: [{name: y}, {name: z}]
constants:
  - {name: w, shape: [3, 2, 1, 1], random: {seed: 1}}
  - {name: a, shape: [3, 1, 1], values: [1, -2, 3]}
nodes:
  - {op: Conv, inputs: [x, w], outputs: [c]}
  - {op: Mul, inputs: [c, a], outputs: [y]}
  - {op: Relu, inputs: [c], outputs: [z]}
)"));
  EXPECT_EQ(count_ops(c, "Mul"), 1u);
}

TEST(Cleanup, DoesNotFoldAConstantThatVariesAlongSpace) {
  const model::Graph c = check_cleanup(yaml_graph(R"(
inputs: [{name: x, shape: [1, 2, 4, 4]}]
outputs: [{name: y}]
constants:
  - {name: w, shape: [3, 2, 1, 1], random: {seed: 1}}
  - {name: a, shape: [1, 1, 4, 4], random: {seed: 2}}
nodes:
  - {op: Conv, inputs: [x, w], outputs: [c]}
  - {op: Mul, inputs: [c, a], outputs: [y]}
)"));
  EXPECT_EQ(count_ops(c, "Mul"), 1u);
}

TEST(Cleanup, GemmAndMatMulFolds) {
  CleanupReport r;
  const model::Graph c = check_cleanup(yaml_graph(R"(
inputs: [{name: x, shape: [2, 6]}]
outputs: [{name: y}, {name: z}]
constants:
  - {name: w, shape: [5, 6], random: {seed: 1}}
  - {name: cb, shape: [5], random: {seed: 2}}
  - {name: s, shape: [5], random: {seed: 3}}
  - {name: b2, shape: [6, 4], random: {seed: 4}}
  - {name: a2, shape: [1, 4], random: {seed: 5}}
  - {name: s2, shape: [4], values: [0.5, -1, 2, 3]}
nodes:
  - {op: Gemm, inputs: [x, w, cb], outputs: [g], attributes: {transB: 1, alpha: 0.5, beta: 2.0}}
  - {op: Mul, inputs: [g, s], outputs: [y]}
  - {op: MatMul, inputs: [x, b2], outputs: [m]}
  - {op: Add, inputs: [m, a2], outputs: [m2]}
  - {op: Mul, inputs: [m2, s2], outputs: [z]}
)"), &r);
  EXPECT_EQ(c.nodes.size(), 2u);  // two Gemms
  EXPECT_EQ(count_ops(c, "Gemm"), 2u);
  EXPECT_EQ(r.folded.size(), 3u);
}

TEST(Cleanup, MatMulOfASequenceFoldsScalesOnly) {
  const model::Graph c = check_cleanup(yaml_graph(R"(
inputs: [{name: x, shape: [1, 3, 6]}]
outputs: [{name: y}]
constants:
  - {name: b, shape: [6, 4], random: {seed: 4}}
  - {name: s, shape: [4], values: [0.5, -1, 2, 3]}
  - {name: a, shape: [4], values: [1, 2, 3, 4]}
nodes:
  - {op: MatMul, inputs: [x, b], outputs: [m]}
  - {op: Mul, inputs: [m, s], outputs: [m2]}
  - {op: Add, inputs: [m2, a], outputs: [y]}
)"));
  EXPECT_EQ(count_ops(c, "MatMul"), 1u);
  EXPECT_EQ(count_ops(c, "Mul"), 0u);
  EXPECT_EQ(count_ops(c, "Add"), 1u);  // no bias input on MatMul: the partition fuses it
}

TEST(Cleanup, DecomposesABatchNormNothingAbsorbs) {
  CleanupReport r;
  const model::Graph c = check_cleanup(yaml_graph(R"(
inputs: [{name: x, shape: [1, 3, 4, 4]}]
outputs: [{name: y}]
constants:
  - {name: g, shape: [3], values: [1, 2, 3]}
  - {name: b, shape: [3], values: [0.1, 0.2, 0.3]}
  - {name: m, shape: [3], values: [0, 1, -1]}
  - {name: v, shape: [3], values: [1, 0.5, 2]}
nodes:
  - {op: BatchNormalization, inputs: [x, g, b, m, v], outputs: [y]}
)"), &r);
  EXPECT_EQ(r.decomposed.size(), 1u);
  EXPECT_EQ(count_ops(c, "Mul"), 1u);
  EXPECT_EQ(count_ops(c, "Add"), 1u);
}

TEST(Cleanup, DropsNoOps) {
  CleanupReport r;
  const model::Graph c = check_cleanup(yaml_graph(R"(
opset: 13
inputs: [{name: x, shape: [1, 4, 3, 3]}]
outputs: [{name: y}]
constants:
  - {name: shape, dtype: int64, shape: [4], values: [1, 4, 3, 3]}
  - {name: pads, dtype: int64, shape: [8], fill: 0}
  - {name: one, shape: [1], values: [1]}
  - {name: zero, shape: [], values: [0]}
nodes:
  - {op: Dropout, inputs: [x], outputs: [a]}
  - {op: Cast, inputs: [a], outputs: [b], attributes: {to: 1}}
  - {op: Reshape, inputs: [b, shape], outputs: [c]}
  - {op: Pad, inputs: [c, pads], outputs: [d]}
  - {op: Mul, inputs: [one, d], outputs: [e]}
  - {op: Sub, inputs: [e, zero], outputs: [f]}
  - {op: Transpose, inputs: [f], outputs: [g], attributes: {perm: [0, 1, 2, 3]}}
  - {op: Relu, inputs: [g], outputs: [h]}
  - {op: Identity, inputs: [h], outputs: [y]}
)"), &r);
  ASSERT_EQ(c.nodes.size(), 1u);
  EXPECT_EQ(c.nodes[0].op_type, "Relu");
  EXPECT_EQ(c.nodes[0].inputs[0], "x");
  EXPECT_EQ(c.nodes[0].outputs[0], "y");
  EXPECT_EQ(r.removed_noops.size(), 8u);
}

TEST(Cleanup, KeepsAnIdentityFromInputToOutput) {
  const model::Graph c = check_cleanup(yaml_graph(R"(
inputs: [{name: x, shape: [2]}]
outputs: [{name: y}]
nodes:
  - {op: Identity, inputs: [x], outputs: [y]}
)"));
  EXPECT_EQ(c.nodes.size(), 1u);
}

TEST(Cleanup, RescalesWeightHintsWithTheFold) {
  model::Graph g = yaml_graph(R"(
inputs: [{name: x, shape: [1, 1, 3, 3]}]
outputs: [{name: y}]
constants:
  - {name: w, shape: [2, 1, 1, 1], values: [0.5, -0.25]}
  - {name: k, shape: [2, 1, 1], values: [2, -4]}
nodes:
  - {op: Conv, inputs: [x, w], outputs: [c]}
  - {op: Mul, inputs: [c, k], outputs: [y]}
)");
  QuantHints hints;
  hints.weights["w"] = WeightHint{-1, {0.25f}};
  cleanup(g, &hints);
  ASSERT_EQ(hints.weights.size(), 1u);
  const auto& [name, h] = *hints.weights.begin();
  EXPECT_EQ(name, g.nodes[0].inputs[1]);
  EXPECT_EQ(h.axis, 0);
  EXPECT_EQ(h.scales, (std::vector<float>{0.5f, 1.0f}));  // 0.25 * |2|, 0.25 * |-4|
}

// The real models: clean-up changes no output beyond float rounding.
TEST(Cleanup, RealModelsKeepTheirOutputs) {
  const char* home = std::getenv("HOME");
  const std::filesystem::path cache = std::getenv("NPUFORGE_MODEL_CACHE") ? std::getenv("NPUFORGE_MODEL_CACHE")
                                                                           : std::filesystem::path(home ? home : "/") / ".cache/npuforge/models";
  struct M { const char* name; const char* shape; };
  int tested = 0;
  for (const M& m : {M{"ppocr_cls", "x=1x3x48x192"}, M{"squeezenet1_1", ""}, M{"oww_embedding", "input_1=1x76x32x1"},
                     M{"oww_hello_deepa", ""}}) {
    const auto file = cache / (std::string(m.name) + ".onnx");
    if (!std::filesystem::exists(file)) continue;
    model::InputShapes shapes;
    if (*m.shape) shapes.insert(model::parse_input_shape(m.shape));
    model::LoadOptions o;
    o.input_shapes = shapes;
    const model::Graph g = model::load_model(file, o);
    SCOPED_TRACE(m.name);
    CleanupReport r;
    const model::Graph c = check_cleanup(g, &r, 1e-5);
    if (std::string(m.name) == "ppocr_cls") {
      EXPECT_LT(c.nodes.size(), g.nodes.size());  // 35 BatchNormalizations fold
    }
    ++tested;
  }
  if (tested == 0) GTEST_SKIP() << "no real model in " << cache << " (scripts/prepare-models.sh fetches them)";
}

}  // namespace
}  // namespace npuforge::compiler
