// Quantization (docs/compiler.md section 7): scales, int8 weights, biases, requant fields and
// tables, against the formulas written out here.
#include "compiler/quantize.h"

#include <gtest/gtest.h>

#include <cmath>

#include "compiler/convert.h"
#include "compiler/qref.h"
#include "test_util.h"

namespace npuforge::compiler {
namespace {

using testing::yaml_graph;

// Every float value gets [-r, r] with clip r (r = 1 unless set).
Calibration flat_calibration(const model::Graph& g, std::map<std::string, float> clips = {}) {
  Calibration cal;
  const auto set = [&](const std::string& v) {
    const float r = clips.count(v) ? clips[v] : 1.0f;
    cal.ranges[v] = ValueRange{-r, r, r};
  };
  for (const std::string& in : g.inputs) set(in);
  for (const model::Node& n : g.nodes)
    for (const std::string& o : n.outputs) set(o);
  return cal;
}

QGraph build(const model::Graph& g, const Calibration& cal, const QuantHints& hints = {}) {
  const Partition p = partition(g);
  const ScalePlan s = plan_scales(g, p, cal, hints);
  QGraph q = quantize(g, p, s, hints);
  validate(q);
  return q;
}

template <class T>
std::vector<const T*> ops_of(const QGraph& q) {
  std::vector<const T*> out;
  for (const QOp& op : q.ops)
    if (const T* t = std::get_if<T>(&op)) out.push_back(t);
  return out;
}

const char* kConv = R"(
inputs: [{name: x, shape: [1, 2, 4, 4]}]
outputs: [{name: y}]
constants:
  - {name: w, shape: [3, 2, 2, 1], values: [0.5, -0.25, 1.0, 0.125,  0, 0, 0, 0,  -2, 1, 0.5, 0.25]}
  - {name: b, shape: [3], values: [0.1, -0.2, 0.3]}
nodes:
  - {name: conv, op: Conv, inputs: [x, w, b], outputs: [c]}
  - {name: relu, op: Relu, inputs: [c], outputs: [y]}
)";

TEST(Quantize, ConvWeightsBiasAndRequantFollowTheFormulas) {
  const model::Graph g = yaml_graph(kConv);
  const QGraph q = build(g, flat_calibration(g, {{"x", 2.54f}, {"y", 6.35f}}));
  const auto convs = ops_of<ConvOp>(q);
  ASSERT_EQ(convs.size(), 1u);
  const ConvOp& c = *convs[0];
  const float s_in = 2.54f / 127, s_out = 6.35f / 127;
  EXPECT_FLOAT_EQ(q.tensor(c.input).scale, s_in);
  EXPECT_FLOAT_EQ(q.tensor(c.output).scale, s_out);
  EXPECT_TRUE(c.relu);
  const std::vector<std::vector<double>> w = {{0.5, -0.25, 1.0, 0.125}, {0, 0, 0, 0}, {-2, 1, 0.5, 0.25}};
  const std::vector<double> b = {0.1f, -0.2f, 0.3f};  // the model's float32 values
  for (size_t co = 0; co < 3; ++co) {
    double absmax = 0;
    for (double v : w[co]) absmax = std::max(absmax, std::fabs(v));
    // An all-zero channel keeps its bias representable: |b| / (s_in * s_w) < 2^30.
    const double s_w = absmax > 0 ? absmax / 127 : std::fabs(b[co]) / (s_in * 0x1.0p30);
    EXPECT_NEAR(c.weight_scales[co], s_w, 1e-9) << co;
    // Weight layout: row (ky*kw + kx)*cin + ci; the ONNX weight is [co][ci][ky][kx], kw = 1.
    for (int ci = 0; ci < 2; ++ci)
      for (int ky = 0; ky < 2; ++ky) {
        const double v = w[co][static_cast<size_t>(ci * 2 + ky)];
        EXPECT_EQ(c.weights[static_cast<size_t>((ky * 2 + ci) * 3) + co], static_cast<int8_t>(std::nearbyint(v / c.weight_scales[co])));
      }
    EXPECT_EQ(c.bias[co], static_cast<int32_t>(std::nearbyint(b[co] / (double{s_in} * c.weight_scales[co]))));
    const isa::RequantParams want = isa::make_requant(double{s_in} * c.weight_scales[co] / s_out, 31, 62);
    EXPECT_EQ(c.requant[co].scale, want.scale);
    EXPECT_EQ(c.requant[co].shift, want.shift);
    EXPECT_TRUE(c.requant[co].relu);
  }
}

TEST(Quantize, HintedWeightsKeepTheModelsInts) {
  const model::Graph g = yaml_graph(kConv);
  QuantHints hints;
  // Channel scales the weights are exact multiples of (ints 4, -2, 8, 1 / 0 / -16, 8, 4, 2).
  hints.weights["w"] = WeightHint{0, {0.125f, 1.0f, 0.125f}};
  const QGraph q = build(g, flat_calibration(g), hints);
  const ConvOp& c = *ops_of<ConvOp>(q).at(0);
  EXPECT_EQ(c.weight_scales, (std::vector<float>{0.125f, 1.0f, 0.125f}));
  const std::vector<int8_t> want = {4, 0, -16, 8, 0, 4, -2, 0, 8, 1, 0, 2};  // rows (ky, ci), columns co
  EXPECT_EQ(c.weights, want);
}

TEST(Quantize, SigmoidTableAndFusedClipScale) {
  const model::Graph g = yaml_graph(R"(
opset: 13
inputs: [{name: x, shape: [1, 1, 4, 4]}]
outputs: [{name: y}, {name: z}]
constants:
  - {name: w, shape: [1, 1, 1, 1], values: [1]}
  - {name: lo, shape: [], values: [0]}
  - {name: hi, shape: [], values: [6]}
nodes:
  - {name: conv, op: Conv, inputs: [x, w], outputs: [c]}
  - {name: sig, op: Sigmoid, inputs: [c], outputs: [y]}
  - {name: conv2, op: Conv, inputs: [x, w], outputs: [d]}
  - {name: clip, op: Clip, inputs: [d, lo, hi], outputs: [z]}
)");
  Calibration cal = flat_calibration(g, {{"c", 8}, {"y", 1}, {"z", 5}});
  cal.ranges["d"] = ValueRange{-9, 9, 9};  // the clip is active: output scale 6/127
  const QGraph q = build(g, cal);
  const LutOp& lut = *ops_of<LutOp>(q).at(0);
  EXPECT_EQ(lut.function, "Sigmoid");
  for (int v = -128; v < 128; ++v) {
    const float s = 1.0f / (1.0f + std::exp(-static_cast<float>(v) * (8.0f / 127)));
    EXPECT_EQ(lut.table[static_cast<size_t>(v + 128)], quantize_value(s, 1.0f / 127)) << v;
  }
  EXPECT_FLOAT_EQ(q.tensor(q.find("z")).scale, 6.0f / 127);
  // Without an active clip the calibrated scale stays.
  cal.ranges["d"] = ValueRange{-4, 4, 4};
  cal.ranges["z"] = ValueRange{0, 4, 4};
  EXPECT_FLOAT_EQ(build(g, cal).tensor(q.find("z")).scale, 4.0f / 127);
}

const char* kAdd = R"(
inputs: [{name: x, shape: [1, 2, 3, 3]}]
outputs: [{name: y}, {name: p}]
constants:
  - {name: w, shape: [2, 2, 1, 1], random: {seed: 1}}
nodes:
  - {name: c1, op: Conv, inputs: [x, w], outputs: [a]}
  - {name: c2, op: Conv, inputs: [x, w], outputs: [b]}
  - {name: pool, op: MaxPool, inputs: [a], outputs: [p], attributes: {kernel_shape: [1, 1]}}
  - {name: add, op: Add, inputs: [a, b], outputs: [y]}
)";

TEST(Quantize, AddInputsShareAScaleOrGetARescale) {
  const model::Graph g = yaml_graph(kAdd);
  // a (read by the pool too) is not free; b (read by the Add only) takes the larger scale.
  QGraph q = build(g, flat_calibration(g, {{"a", 2}, {"b", 1}, {"y", 3}}));
  EXPECT_FLOAT_EQ(q.tensor(q.find("b")).scale, 2.0f / 127);
  EXPECT_TRUE(ops_of<LutOp>(q).empty());
  EXPECT_FLOAT_EQ(q.tensor(q.find("p")).scale, 2.0f / 127);  // the pool keeps its input's scale
  const EltwiseOp& add = *ops_of<EltwiseOp>(q).at(0);
  const isa::RequantParams want = isa::make_requant((2.0 / 127) / (3.0 / 127), 16, 40);
  EXPECT_EQ(add.requant.scale, want.scale);
  EXPECT_EQ(add.requant.shift, want.shift);
  // Now a has the smaller scale and cannot change: it is rescaled by a table.
  q = build(g, flat_calibration(g, {{"a", 1}, {"b", 2}, {"y", 3}}));
  const auto luts = ops_of<LutOp>(q);
  ASSERT_EQ(luts.size(), 1u);
  EXPECT_TRUE(luts[0]->nodes.empty());
  EXPECT_EQ(q.tensor(luts[0]->input).name, "a");
  EXPECT_FLOAT_EQ(q.tensor(luts[0]->output).scale, 2.0f / 127);
  for (int v = -128; v < 128; ++v)
    EXPECT_EQ(luts[0]->table[static_cast<size_t>(v + 128)], quantize_value(static_cast<float>(v) * (1.0f / 127), 2.0f / 127));
  const EltwiseOp& add2 = *ops_of<EltwiseOp>(q).at(0);
  EXPECT_EQ(add2.a, luts[0]->output);
}

TEST(Quantize, ConcatInputsTakeTheOutputScale) {
  const model::Graph g = yaml_graph(R"(
inputs: [{name: x, shape: [1, 2, 3, 3]}]
outputs: [{name: y}]
constants:
  - {name: w, shape: [2, 2, 1, 1], random: {seed: 1}}
nodes:
  - {name: c1, op: Conv, inputs: [x, w], outputs: [a]}
  - {name: c2, op: Conv, inputs: [x, w], outputs: [b]}
  - {name: cat, op: Concat, inputs: [a, b], outputs: [y], attributes: {axis: 1}}
)");
  const QGraph q = build(g, flat_calibration(g, {{"a", 1}, {"b", 2}, {"y", 2.5}}));
  for (const char* v : {"a", "b", "y"}) EXPECT_FLOAT_EQ(q.tensor(q.find(v)).scale, 2.5f / 127) << v;
}

TEST(Quantize, ChannelAffineIsADepthwiseConv) {
  const model::Graph g = yaml_graph(R"(
inputs: [{name: x, shape: [1, 3, 2, 2]}]
outputs: [{name: y}]
constants:
  - {name: w, shape: [3, 3, 1, 1], random: {seed: 1}}
  - {name: k, shape: [3, 1, 1], values: [2, -0.5, 0.25]}
nodes:
  - {name: c1, op: Conv, inputs: [x, w], outputs: [a]}
  - {name: pool, op: MaxPool, inputs: [a], outputs: [p], attributes: {kernel_shape: [1, 1]}}
  - {name: mul, op: Mul, inputs: [p, k], outputs: [y]}
)");
  const QGraph q = build(g, flat_calibration(g));
  const auto convs = ops_of<ConvOp>(q);
  ASSERT_EQ(convs.size(), 2u);
  const ConvOp& dw = *convs[1];
  EXPECT_EQ(dw.groups, 3);
  EXPECT_EQ(dw.cin_per_group, 1);
  EXPECT_EQ(dw.weights, (std::vector<int8_t>{127, -127, 127}));
  EXPECT_NEAR(dw.weight_scales[1], 0.5 / 127, 1e-9);
}

TEST(Quantize, CpuStepsQuantizeWhatTheNpuReads) {
  const model::Graph g = yaml_graph(R"(
opset: 13
inputs: [{name: x, shape: [1, 2, 3, 3]}]
outputs: [{name: y}, {name: s}]
constants:
  - {name: w, shape: [2, 2, 1, 1], random: {seed: 1}}
nodes:
  - {name: soft, op: Softmax, inputs: [x], outputs: [s], attributes: {axis: 1}}
  - {name: conv, op: Conv, inputs: [s, w], outputs: [y]}
)");
  const QGraph q = build(g, flat_calibration(g));
  EXPECT_FALSE(q.tensor(q.find("x")).is_int8());  // only the CPU reads it
  EXPECT_TRUE(q.tensor(q.find("s")).is_int8());   // the conv reads it
  EXPECT_EQ(q.tensor(q.find("s")).layout, Layout::kHWC);
  EXPECT_EQ(q.tensor(q.find("x")).layout, Layout::kOnnx);
}

TEST(Quantize, WeightScaleKeepsTheBiasInRange) {
  EXPECT_FLOAT_EQ(weight_scale(1.27f, 0, 1), 0.01f);
  EXPECT_GT(weight_scale(0, 1e6, 1e-6f) * 1e-6 * 0x1.0p30, 1e6 * 0.999);
  EXPECT_EQ(weight_scale(0, 0, 1), 1.0f);
}

}  // namespace
}  // namespace npuforge::compiler
