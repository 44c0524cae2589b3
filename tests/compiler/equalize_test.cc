// Cross-layer range equalisation (compiler/equalize.h) on small synthetic graphs: the float model
// keeps its outputs, the int8 error drops where channel ranges differ ~200x, and it stays away
// from pairs it cannot scale exactly (a non-homogeneous op between, a second reader).
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "compiler/equalize.h"
#include "compiler/qref.h"
#include "test_util.h"

namespace npuforge::compiler {
namespace {

using testing::cosine;
using testing::max_rel_diff;
using testing::random_inputs;
using testing::yaml_graph;

// x [1,8,6,6] -> conv1 (3x3, 8 -> 8; output channel c scaled by gain[c], 1 .. 200) -> MID ->
// conv2 (k x k, groups G) whose weights reading channel c are divided by gain[c]: the classic
// folded-BatchNorm imbalance that per-tensor int8 activations lose.
std::string imbalanced(const std::string& mid, int64_t groups = 1, int64_t cout2 = 4, bool extra_output = false) {
  const double gain[8] = {200, 1, 35, 3, 120, 0.9, 60, 8};
  std::string w1, b1, w2;
  uint64_t s = 7;
  auto next = [&s] {
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<double>((s >> 33) % 2001) / 1000.0 - 1.0;
  };
  for (int o = 0; o < 8; ++o)
    for (int i = 0; i < 8 * 9; ++i) w1 += fmt::format("{}{:.6g}", w1.empty() ? "" : ", ", next() * 0.2 * gain[o]);
  for (int o = 0; o < 8; ++o) b1 += fmt::format("{}{:.6g}", b1.empty() ? "" : ", ", next() * 0.1 * gain[o]);
  const int64_t cin_g = 8 / groups, cout_g = cout2 / groups;
  for (int64_t o = 0; o < cout2; ++o)
    for (int64_t ci = 0; ci < cin_g; ++ci)
      for (int j = 0; j < 9; ++j)
        w2 += fmt::format("{}{:.6g}", w2.empty() ? "" : ", ", next() / gain[(o / cout_g) * cin_g + ci]);
  std::string nodes = "  - {name: conv1, op: Conv, inputs: [x, w1, b1], outputs: [a], attributes: {pads: [1, 1, 1, 1]}}\n";
  std::string into = "a";
  if (!mid.empty()) {
    nodes += "  - {name: mid, op: " + mid + ", inputs: [a], outputs: [m]" +
             (mid == "MaxPool" ? ", attributes: {kernel_shape: [2, 2]}" : "") + "}\n";
    into = "m";
  }
  nodes += fmt::format("  - {{name: conv2, op: Conv, inputs: [{}, w2], outputs: [y], attributes: {{pads: [1, 1, 1, 1], "
                       "group: {}}}}}\n",
                       into, groups);
  return fmt::format(R"(
opset: 14
inputs: [{{name: x, shape: [1, 8, 6, 6]}}]
outputs: [{{name: y}}{}]
constants:
  - {{name: w1, shape: [8, 8, 3, 3], values: [{}]}}
  - {{name: b1, shape: [8], values: [{}]}}
  - {{name: w2, shape: [{}, {}, 3, 3], values: [{}]}}
nodes:
{})",
                     extra_output ? ", {name: a}" : "", w1, b1, cout2, cin_g, w2, nodes);
}

FrontOptions options(bool equalize) {
  FrontOptions o;
  o.equalize = equalize;
  o.calibration.random_samples = 4;
  o.calibration.seed = 3;
  o.calibration.method = ClipMethod::kAbsMax;
  return o;
}

// The worst (1 - cosine) of the int8 reference against the original float model over 3 inputs.
double int8_error(const model::Graph& original, const CompileFront& f) {
  double worst = 0;
  for (uint64_t seed : {101, 202, 303}) {
    const model::TensorMap in = random_inputs(original, seed);
    const model::Tensor want = model::run_graph(original, in).at("y");
    worst = std::max(worst, 1 - cosine(run_qref(f.graph, in).outputs.at("y"), want));
  }
  return worst;
}

void expect_same_float_model(const model::Graph& original, const model::Graph& equalized) {
  for (uint64_t seed : {5, 6}) {
    const model::TensorMap in = random_inputs(original, seed);
    EXPECT_LT(max_rel_diff(model::run_graph(equalized, in).at("y"), model::run_graph(original, in).at("y")), 1e-5);
  }
}

class EqualizeThrough : public ::testing::TestWithParam<std::string> {};

TEST_P(EqualizeThrough, KeepsTheFloatModelAndCutsTheInt8Error) {
  const model::Graph g = yaml_graph(imbalanced(GetParam()));
  const CompileFront plain = compile_front(g, options(false));
  const CompileFront eq = compile_front(g, options(true));
  ASSERT_EQ(eq.report.equalize.pairs.size(), 1u);
  EXPECT_NE(eq.report.equalize.pairs[0].find("conv1 -> conv2: 8 channels"), std::string::npos)
      << eq.report.equalize.pairs[0];
  EXPECT_TRUE(plain.report.equalize.pairs.empty());
  expect_same_float_model(g, eq.float_graph);
  const double before = int8_error(g, plain), after = int8_error(g, eq);
  std::cout << "  " << (GetParam().empty() ? "direct" : GetParam()) << ": 1 - cosine " << before << " -> " << after
            << "\n";
  EXPECT_LT(after, before / 4) << "equalisation should cut the int8 error of a 200x channel imbalance";
}

INSTANTIATE_TEST_SUITE_P(Ops, EqualizeThrough, ::testing::Values("", "Relu", "LeakyRelu", "MaxPool"),
                         [](const auto& info) { return info.param.empty() ? std::string("Direct") : info.param; });

TEST(Equalize, GroupedAndDepthwiseSecondConvsKeepTheFloatModel) {
  for (const auto& [groups, cout2] : {std::pair<int64_t, int64_t>{2, 4}, {8, 8}, {8, 16}}) {
    const model::Graph g = yaml_graph(imbalanced("Relu", groups, cout2));
    const CompileFront eq = compile_front(g, options(true));
    EXPECT_EQ(eq.report.equalize.pairs.size(), 1u) << "groups " << groups;
    expect_same_float_model(g, eq.float_graph);
    EXPECT_LT(int8_error(g, eq), int8_error(g, compile_front(g, options(false)))) << "groups " << groups;
  }
}

TEST(Equalize, LeavesPairsItCannotScaleExactly) {
  // HardSwish and Sigmoid do not commute with a per-channel scale; a second reader (here the
  // graph output) would see the scaled channels.
  for (const char* mid : {"HardSwish", "Sigmoid"}) {
    const model::Graph g = yaml_graph(imbalanced(mid));
    EXPECT_TRUE(compile_front(g, options(true)).report.equalize.pairs.empty()) << mid;
  }
  const model::Graph g = yaml_graph(imbalanced("", 1, 4, true));
  EXPECT_TRUE(compile_front(g, options(true)).report.equalize.pairs.empty());
}

TEST(Equalize, BalancedChannelsAreLeftAlone) {
  model::Graph g = yaml_graph(R"(
opset: 13
inputs: [{name: x, shape: [1, 4, 5, 5]}]
outputs: [{name: y}]
constants:
  - {name: w1, shape: [4, 4, 1, 1], values: [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1]}
  - {name: w2, shape: [2, 4, 1, 1], values: [1, 1, 1, 1, 1, -1, 1, -1]}
nodes:
  - {name: c1, op: Conv, inputs: [x, w1], outputs: [a]}
  - {name: c2, op: Conv, inputs: [a, w2], outputs: [y]}
)");
  // Every channel of `a` is x's (same range), every weight 1: nothing to gain, nothing done.
  const model::TensorMap in = random_inputs(g, 9);
  EXPECT_TRUE(equalize_channels(g, {in}).pairs.empty());
}

}  // namespace
}  // namespace npuforge::compiler
