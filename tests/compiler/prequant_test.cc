// Pre-quantized models (docs/compiler.md section 2): QDQ and QOperator graphs become float graphs
// with the model's scales kept as hints, computing what the model computes up to its fake-quant
// rounding.
#include "compiler/prequant.h"

#include <gtest/gtest.h>

#include "compiler/qref.h"
#include "test_util.h"

namespace npuforge::compiler {
namespace {

using testing::count_ops;
using testing::yaml_graph;

// x -> Q(0.02, 128 uint8) -> DQ -> Conv(DQ(int8 w, per channel), DQ(int32 b)) -> Q(0.05, 0) -> DQ -> y
const char* kQdq = R"(
opset: 13
inputs: [{name: x, shape: [1, 2, 5, 5]}]
outputs: [{name: y}]
constants:
  - {name: xs, shape: [], values: [0.02]}
  - {name: xz, dtype: uint8, shape: [], values: [128]}
  - {name: wq, dtype: int8, shape: [3, 2, 3, 3], random: {seed: 1, low: -127, high: 127}}
  - {name: ws, shape: [3], values: [0.01, 0.02, 0.005]}
  - {name: wz, dtype: int8, shape: [3], fill: 0}
  - {name: bq, dtype: int32, shape: [3], values: [100, -2000, 35]}
  - {name: bs, shape: [3], values: [0.0002, 0.0004, 0.0001]}
  - {name: bz, dtype: int32, shape: [3], fill: 0}
  - {name: ys, shape: [], values: [0.05]}
  - {name: yz, dtype: uint8, shape: [], values: [0]}
nodes:
  - {name: qx, op: QuantizeLinear, inputs: [x, xs, xz], outputs: [xq]}
  - {name: dqx, op: DequantizeLinear, inputs: [xq, xs, xz], outputs: [xf]}
  - {name: dqw, op: DequantizeLinear, inputs: [wq, ws, wz], outputs: [wf], attributes: {axis: 0}}
  - {name: dqb, op: DequantizeLinear, inputs: [bq, bs, bz], outputs: [bf], attributes: {axis: 0}}
  - {name: conv, op: Conv, inputs: [xf, wf, bf], outputs: [c], attributes: {pads: [1, 1, 1, 1]}}
  - {name: qy, op: QuantizeLinear, inputs: [c, ys, yz], outputs: [cq]}
  - {name: dqy, op: DequantizeLinear, inputs: [cq, ys, yz], outputs: [y]}
)";

TEST(Prequant, QdqBecomesFloatWithTheModelsScales) {
  const model::Graph original = yaml_graph(kQdq);
  ASSERT_TRUE(is_pre_quantized(original));
  model::Graph g = original;
  const QuantHints h = dequantize_model(g);
  EXPECT_TRUE(h.pre_quantized);
  EXPECT_EQ(count_ops(g, "QuantizeLinear") + count_ops(g, "DequantizeLinear"), 0u);
  EXPECT_EQ(count_ops(g, "Conv"), 1u);
  EXPECT_EQ(count_ops(g, "Relu"), 1u);  // uint8 with zero point 0 clamps at 0
  // The weights: ints * per-channel scales, and those scales as the hint.
  const model::Node& conv = g.nodes[0];
  const model::Tensor& w = *g.find_constant(conv.inputs[1]);
  const model::Tensor& wq = *original.find_constant("wq");
  for (int64_t i = 0; i < w.numel(); ++i) {
    const float s = std::vector<float>{0.01f, 0.02f, 0.005f}[static_cast<size_t>(i / 18)];
    EXPECT_EQ(w.values<float>()[i], static_cast<float>(wq.values<int8_t>()[i]) * s);
  }
  ASSERT_TRUE(h.weights.count(conv.inputs[1]));
  EXPECT_EQ(h.weights.at(conv.inputs[1]).axis, 0);
  EXPECT_EQ(h.weights.at(conv.inputs[1]).scales, (std::vector<float>{0.01f, 0.02f, 0.005f}));
  // Ranges: x in [(0-128)*0.02, (255-128)*0.02], the output in [0, 255*0.05].
  EXPECT_FLOAT_EQ(h.ranges.at("x").lo, -2.56f);
  EXPECT_FLOAT_EQ(h.ranges.at("x").hi, 2.54f);
  const std::string relu_out = g.nodes[1].outputs[0];
  EXPECT_FLOAT_EQ(h.ranges.at(relu_out).hi, 12.75f);
  EXPECT_EQ(h.ranges.at(relu_out).node, "qy");
  // The float graph computes the model's values but for the rounding of the removed steps.
  const model::TensorMap in = testing::random_inputs(original, 3, -2, 2);
  const model::Tensor want = model::run_graph(original, in).at("y");
  const model::Tensor got = model::run_graph(g, in).at("y");
  for (int64_t i = 0; i < want.numel(); ++i) EXPECT_NEAR(got.values<float>()[i], want.values<float>()[i], 0.2f) << i;
}

TEST(Prequant, CompiledQdqModelKeepsItsInts) {
  const model::Graph original = yaml_graph(kQdq);
  FrontOptions o;
  o.calibration.random_lo = -2;
  o.calibration.random_hi = 2;
  const CompileFront f = compile_front(original, o);
  const ConvOp& conv = std::get<ConvOp>(f.graph.ops.at(0));
  const model::Tensor& wq = *original.find_constant("wq");
  // Row (ky*3 + kx)*2 + ci, column co; the model's int8 weights come back unchanged.
  for (int64_t co = 0; co < 3; ++co)
    for (int64_t ci = 0; ci < 2; ++ci)
      for (int64_t k = 0; k < 9; ++k)
        EXPECT_EQ(conv.weights[static_cast<size_t>((k * 2 + ci) * 3 + co)], wq.values<int8_t>()[(co * 2 + ci) * 9 + k]);
  EXPECT_TRUE(conv.relu);
  // Input scale from the model's range: max(2.56, 2.54) / 127; output 12.75 / 127.
  EXPECT_FLOAT_EQ(f.graph.tensor(conv.input).scale, 2.56f / 127);
  EXPECT_FLOAT_EQ(f.graph.tensor(conv.output).scale, 12.75f / 127);
  const model::TensorMap in = testing::random_inputs(original, 4, -2, 2);
  EXPECT_GT(testing::cosine(run_qref(f.graph, in).outputs.at("y"), model::run_graph(original, in).at("y")), 0.999);
}

// QOperator form: QLinearConv, then ConvInteger + bias + scale, then MatMulInteger, and a
// uint8 model output.
const char* kQop = R"(
opset: 13
inputs: [{name: x, shape: [1, 1, 4, 4]}]
outputs: [{name: out}]
constants:
  - {name: s_in, shape: [], values: [0.01]}
  - {name: z_in, dtype: uint8, shape: [], values: [0]}
  - {name: w1, dtype: int8, shape: [2, 1, 3, 3], random: {seed: 2, low: -100, high: 100}}
  - {name: w1s, shape: [], values: [0.01]}
  - {name: w1z, dtype: int8, shape: [], values: [0]}
  - {name: y1s, shape: [], values: [0.02]}
  - {name: y1z, dtype: uint8, shape: [], values: [0]}
  - {name: b1, dtype: int32, shape: [2], values: [50, -50]}
  - {name: w2, dtype: int8, shape: [32, 3], random: {seed: 3, low: -100, high: 100}}
  - {name: w2z, dtype: int8, shape: [], values: [0]}
  - {name: b2, dtype: int32, shape: [3], values: [10, 20, -30]}
  - {name: k2, shape: [], values: [0.0002]}
  - {name: s2, shape: [], values: [0.01]}
  - {name: z2, dtype: uint8, shape: [], values: [100]}
  - {name: shape, dtype: int64, shape: [2], values: [1, 32]}
nodes:
  - {name: qx, op: QuantizeLinear, inputs: [x, s_in, z_in], outputs: [xq]}
  - {name: conv, op: QLinearConv, inputs: [xq, s_in, z_in, w1, w1s, w1z, y1s, y1z, b1], outputs: [c], attributes: {pads: [1, 1, 1, 1]}}
  - {name: flat, op: Reshape, inputs: [c, shape], outputs: [f]}
  - {name: mm, op: MatMulInteger, inputs: [f, w2, y1z, w2z], outputs: [acc]}
  - {name: bias, op: Add, inputs: [acc, b2], outputs: [acc2]}
  - {name: cast, op: Cast, inputs: [acc2], outputs: [accf], attributes: {to: 1}}
  - {name: scale, op: Mul, inputs: [accf, k2], outputs: [yf]}
  - {name: qo, op: QuantizeLinear, inputs: [yf, s2, z2], outputs: [out]}
)";

TEST(Prequant, QOperatorGraphBecomesConvAndGemm) {
  const model::Graph original = yaml_graph(kQop);
  model::Graph g = original;
  const QuantHints h = dequantize_model(g);
  EXPECT_EQ(count_ops(g, "QLinearConv") + count_ops(g, "MatMulInteger") + count_ops(g, "Cast"), 0u);
  EXPECT_EQ(count_ops(g, "Conv"), 1u);
  EXPECT_EQ(count_ops(g, "MatMul"), 1u);
  EXPECT_EQ(count_ops(g, "QuantizeLinear"), 1u);  // the uint8 model output, re-made from its real value
  EXPECT_EQ(g.find_value("out")->dtype, model::DType::kUInt8);
  // Same results as the integer model, within one output step (the fake quantization of c is gone).
  const model::TensorMap in = testing::random_inputs(original, 5, 0, 1);
  const model::Tensor want = model::run_graph(original, in).at("out");
  const model::Tensor got = model::run_graph(g, in).at("out");
  for (int64_t i = 0; i < want.numel(); ++i) EXPECT_NEAR(got.int_at(i), want.int_at(i), 2) << i;
  // Compiled: the conv and the gemm run on the NPU with the model's weights.
  const CompileFront f = compile_front(original, FrontOptions{});
  size_t npu = 0;
  for (const QOp& op : f.graph.ops) npu += op_target(op) == Target::kNpu;
  EXPECT_GE(npu, 2u);
  const QrefResult r = run_qref(f.graph, in);
  for (int64_t i = 0; i < want.numel(); ++i) EXPECT_NEAR(r.outputs.at("out").int_at(i), want.int_at(i), 3) << i;
  (void)h;
}

TEST(Prequant, FloatModelsAreLeftAlone) {
  model::Graph g = yaml_graph(R"(
inputs: [{name: x, shape: [2]}]
outputs: [{name: y}]
nodes:
  - {op: Relu, inputs: [x], outputs: [y]}
)");
  EXPECT_FALSE(is_pre_quantized(g));
  const QuantHints h = dequantize_model(g);
  EXPECT_FALSE(h.pre_quantized);
  EXPECT_EQ(g.nodes.size(), 1u);
}

}  // namespace
}  // namespace npuforge::compiler
