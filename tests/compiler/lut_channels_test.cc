// Per-channel-group scales around LUTs (scales.h plan_scales, LutOp::channel_tables): the range
// partition, the tensors and tables quantize() builds, the int8 reference against the float
// model, and validate() refusing an op that would read such a tensor at one scale. And the
// squeeze-and-excite multiply by a per-channel vector (EltwiseOp::broadcast_b) on the NPU.
#include <gtest/gtest.h>

#include <cmath>

#include "compiler/front.h"
#include "compiler/qref.h"
#include "compiler/scales.h"
#include "test_util.h"
#include "util/error.h"

namespace npuforge::compiler {
namespace {

using testing::yaml_graph;

TEST(ChannelRanges, SplitsWhereTheRangeJumpsAndNoMore) {
  // Two large channels, two 100x smaller: two ranges; one range allowed: the whole.
  EXPECT_EQ(channel_ranges({{1, 1, 0.01f, 0.01f}}, 8), (std::vector<size_t>{2, 4}));
  EXPECT_EQ(channel_ranges({{1, 1, 0.01f, 0.01f}}, 1), (std::vector<size_t>{4}));
  // Equal channels gain nothing from a split: one range.
  EXPECT_EQ(channel_ranges({{0.5f, 0.5f, 0.5f}}, 8), (std::vector<size_t>{3}));
  // Both sides count: the output side alone is flat, the input side splits.
  EXPECT_EQ(channel_ranges({{1, 1, 1, 1}, {2, 0.02f, 0.02f, 0.02f}}, 4), (std::vector<size_t>{1, 4}));
  // A dead channel counts as 1/256 of the top (8 bits lost), not as infinitely many: between
  // two live channels it cannot be separated from both, so one range stays best.
  EXPECT_EQ(channel_ranges({{1, 0, 1}}, 2), (std::vector<size_t>{3}));
  EXPECT_EQ(channel_ranges({{1, 0, 0}}, 2), (std::vector<size_t>{1, 3}));
}

// Conv (channels of very different ranges) -> hard-swish -> depthwise 3x3 -> pointwise.
const char* kBlock = R"(
inputs: [{name: x, shape: [1, 3, 8, 8]}]
outputs: [{name: y}]
constants:
  - {name: w1, shape: [6, 3, 1, 1], values: [2, -1, 1.5,  1, 2, -2,  0.02, 0.01, -0.02,  -0.01, 0.02, 0.01,  0.5, 0.4, -0.3,  0.004, -0.003, 0.002]}
  - {name: dw, shape: [6, 1, 3, 3], random: {seed: 5, low: -0.5, high: 0.5}}
  - {name: pw, shape: [4, 6, 1, 1], values: [1, 1, 50, 50, 2, 300,  -1, 1, -50, 50, -2, 300,  1, -1, 50, -50, 2, -300,  0.5, 0.5, 60, 40, 1, 200]}
nodes:
  - {name: conv1, op: Conv, inputs: [x, w1], outputs: [c1], attributes: {kernel_shape: [1, 1]}}
  - {name: hs1, op: HardSwish, inputs: [c1], outputs: [h1]}
  - {name: dwc, op: Conv, inputs: [h1, dw], outputs: [d1], attributes: {kernel_shape: [3, 3], pads: [1, 1, 1, 1], group: 6}}
  - {name: pwc, op: Conv, inputs: [d1, pw], outputs: [y], attributes: {kernel_shape: [1, 1]}}
)";

CompileFront compile_block(int groups) {
  FrontOptions o;
  o.calibration.random_samples = 4;
  o.calibration.seed = 7;
  o.calibration.random_lo = -3;
  o.calibration.random_hi = 3;
  o.equalize = false;  // the ranges must reach the LUT as the weights make them
  o.lut_channel_groups = groups;
  return compile_front(yaml_graph(kBlock), o);
}

const LutOp* only_lut(const QGraph& q) {
  const LutOp* found = nullptr;
  for (const QOp& op : q.ops)
    if (const auto* l = std::get_if<LutOp>(&op)) {
      EXPECT_EQ(found, nullptr) << "one lut expected";
      found = l;
    }
  return found;
}

TEST(LutChannels, GroupsGetTheirOwnScalesAndTables) {
  const CompileFront f = compile_block(8);
  const LutOp* lut = only_lut(f.graph);
  ASSERT_NE(lut, nullptr);
  const QTensor& in = f.graph.tensor(lut->input);
  const QTensor& out = f.graph.tensor(lut->output);
  ASSERT_EQ(in.channel_scales.size(), 6u) << "the conv writes c1 for the LUT alone: per-channel requant";
  ASSERT_EQ(out.channel_scales.size(), 6u) << "only a conv reads h1";
  ASSERT_GE(lut->channel_tables.size(), 2u);
  // Channels 2, 3 and 5 are 100x smaller than 0 and 1: the finest scale a group may take
  // (scales.cc: at most 8x finer than the tensor's).
  EXPECT_LE(out.channel_scales[2], out.scale / 8 * 1.001f);
  EXPECT_LE(in.channel_scales[5], in.scale / 8 * 1.001f);
  EXPECT_EQ(lut->channel_tables.front().c0, 0);
  EXPECT_EQ(lut->channel_tables.back().c1, 6);
  // Each group's table is the function at its own scales.
  for (const LutOp::ChannelTable& t : lut->channel_tables) {
    const float si = in.channel_scales[static_cast<size_t>(t.c0)], so = out.channel_scales[static_cast<size_t>(t.c0)];
    for (int q = -128; q < 128; q += 17) {
      const double x = q * static_cast<double>(si);
      const double hs = x * std::clamp(x / 6 + 0.5, 0.0, 1.0);
      EXPECT_NEAR(t.table[static_cast<size_t>(q + 128)], std::clamp(std::nearbyint(hs / so), -128.0, 127.0), 1.0)
          << "group [" << t.c0 << ", " << t.c1 << ") q " << q;
    }
  }
  // Off: one scale per tensor, one table.
  const CompileFront off = compile_block(0);
  const LutOp* plain = only_lut(off.graph);
  ASSERT_NE(plain, nullptr);
  EXPECT_TRUE(plain->channel_tables.empty());
  EXPECT_TRUE(off.graph.tensor(plain->output).channel_scales.empty());
}

TEST(LutChannels, TheInt8ReferenceGetsCloserToTheFloatModel) {
  const model::Graph g = yaml_graph(kBlock);
  const model::TensorMap in = testing::random_inputs(g, 99, -3, 3);
  const model::Tensor want = model::Interpreter(g).run(in).at("y");
  const double on = testing::cosine(run_qref(compile_block(8).graph, in).outputs.at("y"), want);
  const double off = testing::cosine(run_qref(compile_block(0).graph, in).outputs.at("y"), want);
  // The pointwise weights amplify the small channels 100x, so per-tensor scales lose them
  // (cosine ~0.07); groups at most 8x finer recover part of them.
  EXPECT_GT(on, off + 0.1) << "per-channel groups must gain here";
  std::cout << "  cosine per-tensor " << off << ", channel groups " << on << "\n";
}

TEST(LutChannels, ValidateRefusesOpsThatReadOneScaleAndBrokenTables) {
  const CompileFront f = compile_block(8);
  // A planted bug: the tables no longer cover the last channel.
  QGraph q = f.graph;
  for (QOp& op : q.ops)
    if (auto* l = std::get_if<LutOp>(&op)) l->channel_tables.back().c1 -= 1;
  EXPECT_THROW(validate(q), Error);
  // A planted bug: the LUT's output (per-channel scales) read by a clamp, which has one scale.
  q = f.graph;
  const LutOp* lut = only_lut(q);
  ClampOp c;
  c.input = lut->output;
  QTensor t = q.tensor(lut->output);
  t.name = "clamped";
  t.channel_scales.clear();
  c.output = q.add_tensor(t);
  q.ops.push_back(c);
  q.segments.clear();
  try {
    validate(q);
    ADD_FAILURE() << "validate accepted a clamp reading per-channel scales";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("per-channel scales"), std::string::npos) << e.what();
  }
  // A planted bug: a channel scale above the tensor's scale.
  q = f.graph;
  QTensor& out = q.tensor(only_lut(q)->output);
  out.channel_scales[0] = out.scale * 2;
  EXPECT_THROW(validate(q), Error);
}

// Squeeze-and-excite: x * HardSigmoid(Conv(Relu(Conv(GlobalAveragePool(x))))).
const char* kSqueezeExcite = R"(
inputs: [{name: x, shape: [1, 8, 6, 6]}]
outputs: [{name: y}]
constants:
  - {name: w1, shape: [4, 8, 1, 1], random: {seed: 11, low: -0.6, high: 0.6}}
  - {name: w2, shape: [8, 4, 1, 1], random: {seed: 12, low: -1.5, high: 1.5}}
  - {name: w3, shape: [5, 8, 1, 1], random: {seed: 13, low: -0.5, high: 0.5}}
nodes:
  - {name: gap, op: GlobalAveragePool, inputs: [x], outputs: [g]}
  - {name: se1, op: Conv, inputs: [g, w1], outputs: [s1], attributes: {kernel_shape: [1, 1]}}
  - {name: relu, op: Relu, inputs: [s1], outputs: [r1]}
  - {name: se2, op: Conv, inputs: [r1, w2], outputs: [s2], attributes: {kernel_shape: [1, 1]}}
  - {name: gate, op: HardSigmoid, inputs: [s2], outputs: [h], attributes: {alpha: 0.1666667, beta: 0.5}}
  - {name: excite, op: Mul, inputs: [x, h], outputs: [m]}
  - {name: pw, op: Conv, inputs: [m, w3], outputs: [y], attributes: {kernel_shape: [1, 1]}}
)";

TEST(SqueezeExcite, MulByAChannelVectorRunsOnTheNpu) {
  const model::Graph g = yaml_graph(kSqueezeExcite);
  FrontOptions o;
  o.calibration.random_samples = 4;
  o.calibration.seed = 3;
  o.limits.broadcast_mul = true;
  const CompileFront f = compile_front(g, o);
  const EltwiseOp* mul = nullptr;
  for (const QOp& op : f.graph.ops) {
    EXPECT_EQ(op_target(op), Target::kNpu) << op_kind(op) << " fell back to the CPU";
    if (const auto* e = std::get_if<EltwiseOp>(&op)) mul = e;
  }
  ASSERT_NE(mul, nullptr);
  EXPECT_TRUE(mul->broadcast_b);
  EXPECT_EQ(f.graph.tensor(mul->a).name, "x");
  EXPECT_EQ(f.graph.tensor(mul->b).shape, (model::Shape{1, 8, 1, 1}));
  const model::TensorMap in = testing::random_inputs(g, 5);
  EXPECT_GT(testing::cosine(run_qref(f.graph, in).outputs.at("y"), model::Interpreter(g).run(in).at("y")), 0.99);
  // Off (the default): the Mul is a CPU step.
  FrontOptions off_options = o;
  off_options.limits.broadcast_mul = false;
  const CompileFront off = compile_front(g, off_options);
  size_t cpu = 0;
  for (const QOp& op : off.graph.ops) cpu += op_target(op) == Target::kCpu;
  EXPECT_EQ(cpu, 1u);
}

TEST(SqueezeExcite, TheReferenceMultipliesEachPixelByItsChannel) {
  EltwiseOp op;
  op.kind = EltwiseOp::Kind::kMul;
  op.broadcast_b = true;
  op.requant = isa::make_requant(1.0 / 4, 16, 40);
  model::Tensor a(model::DType::kInt8, {2, 1, 3});  // HWC storage: 2 pixels x 3 channels
  model::Tensor b(model::DType::kInt8, {1, 1, 3});
  const int8_t av[] = {10, -20, 30, 40, 50, -60}, bv[] = {4, 2, -1};
  std::copy(av, av + 6, a.values<int8_t>().begin());
  std::copy(bv, bv + 3, b.values<int8_t>().begin());
  const model::Tensor y = ref_eltwise(op, a, b);
  const int8_t want[] = {10, -10, -7, 40, 25, 15};  // a * b / 4, halves rounded up (-7.5 -> -7)
  for (int i = 0; i < 6; ++i) EXPECT_EQ(y.values<int8_t>()[static_cast<size_t>(i)], want[i]) << i;
}

}  // namespace
}  // namespace npuforge::compiler
