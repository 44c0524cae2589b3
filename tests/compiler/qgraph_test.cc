// The QGraph's queries and validate(): every planted inconsistency is caught and named.
#include "compiler/qgraph.h"

#include <gtest/gtest.h>

#include "test_util.h"

namespace npuforge::compiler {
namespace {

// x (HWC 1x2x4x4) -> conv 3x3 pad 1 -> c -> maxpool 2x2 -> p -> add(p, p) -> y
QGraph small() {
  QGraph g;
  g.source = "small";
  const TensorId x = g.add_tensor({"x", {1, 2, 4, 4}, Layout::kHWC, model::DType::kInt8, 0.1f});
  const TensorId c = g.add_tensor({"c", {1, 4, 4, 4}, Layout::kHWC, model::DType::kInt8, 0.2f});
  const TensorId p = g.add_tensor({"p", {1, 4, 2, 2}, Layout::kHWC, model::DType::kInt8, 0.2f});
  const TensorId y = g.add_tensor({"y", {1, 4, 2, 2}, Layout::kHWC, model::DType::kInt8, 0.3f});
  g.inputs = {{"x", x}};
  ConvOp conv;
  conv.nodes = {"conv"};
  conv.input = x;
  conv.output = c;
  conv.window = {3, 3, 1, 1, 1, 1, 1, 1, 1, 1};
  conv.cin_per_group = 2;
  conv.cout = 4;
  conv.weights.assign(3 * 3 * 2 * 4, 1);
  conv.bias.assign(4, 0);
  conv.weight_scales.assign(4, 1);
  conv.requant.assign(4, {1, 0, false});
  g.ops.push_back(conv);
  PoolOp pool;
  pool.nodes = {"pool"};
  pool.input = c;
  pool.output = p;
  pool.window = {2, 2, 2, 2, 1, 1, 0, 0, 0, 0};
  g.ops.push_back(pool);
  g.ops.push_back(EltwiseOp{{"add"}, EltwiseOp::Kind::kAdd, p, p, y, {1, 0, false}});
  g.outputs = {{"y", y}};
  g.segments = {Segment{Target::kNpu, 0, 3, {x}, {y}}};
  return g;
}

void expect_invalid(const QGraph& g, const std::string& needle) {
  try {
    validate(g);
    ADD_FAILURE() << "validate accepted a graph with: " << needle;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

TEST(QGraph, ValidGraphAndQueries) {
  const QGraph g = small();
  validate(g);
  EXPECT_EQ(op_kind(g.ops[0]), "conv");
  EXPECT_EQ(op_kind(g.ops[1]), "maxpool");
  EXPECT_EQ(op_kind(g.ops[2]), "add");
  EXPECT_EQ(op_inputs(g.ops[2]).size(), 2u);
  EXPECT_EQ(op_outputs(g.ops[0])[0], g.find("c"));
  EXPECT_EQ(op_target(g.ops[0]), Target::kNpu);
  EXPECT_FALSE(g.find("nope").valid());
  EXPECT_THROW(QGraph(g).add_tensor({"x", {1}, Layout::kRowMajor, model::DType::kInt8, 1}), Error);
}

TEST(QGraph, ValidateCatchesPlantedBugs) {
  {
    QGraph g = small();
    std::get<ConvOp>(g.ops[0]).weights.pop_back();
    expect_invalid(g, "weights are not [k][cout]");
  }
  {
    QGraph g = small();
    std::get<ConvOp>(g.ops[0]).window.stride_h = 2;
    expect_invalid(g, "output 4x4 but the window gives 2x4");
  }
  {
    QGraph g = small();
    std::get<ConvOp>(g.ops[0]).requant[1].shift = 63;
    expect_invalid(g, "shift <= 62");
  }
  {
    QGraph g = small();
    g.tensor(g.find("p")).scale = 0.25f;
    expect_invalid(g, "a pool keeps the scale");
  }
  {
    QGraph g = small();
    auto& add = std::get<EltwiseOp>(g.ops[2]);
    add.b = g.find("c");
    expect_invalid(g, "one shape and layout");
  }
  {
    QGraph g = small();
    std::get<EltwiseOp>(g.ops[2]).requant.scale = 1u << 16;
    expect_invalid(g, "16-bit scale");
  }
  {
    QGraph g = small();
    std::swap(g.ops[0], g.ops[1]);
    expect_invalid(g, "reads tensor 'c' before anything produces it");
  }
  {
    QGraph g = small();
    g.segments[0].end = 2;
    expect_invalid(g, "segments do not cover every op");
  }
  {
    QGraph g = small();
    g.tensor(g.find("y")).scale = 0;
    expect_invalid(g, "scale 0");
  }
  {
    QGraph g = small();
    g.tensor(g.find("y")).layout = Layout::kOnnx;
    expect_invalid(g, "CPU-side layout");
  }
}

TEST(QGraph, GroupWeightsAndConcatChunks) {
  ConvOp c;
  c.groups = 2;
  c.cin_per_group = 2;
  c.cout = 4;
  c.weights = {1, 2, 3, 4, 5, 6, 7, 8};  // k = 2 rows, 4 columns
  EXPECT_EQ(group_weights(c, 1), (std::vector<int8_t>{3, 4, 7, 8}));
  EXPECT_THROW(group_weights(c, 2), Error);

  QGraph g;
  const TensorId a = g.add_tensor({"a", {1, 2, 3, 3}, Layout::kHWC, model::DType::kInt8, 1});
  const TensorId b = g.add_tensor({"b", {1, 5, 3, 3}, Layout::kHWC, model::DType::kInt8, 1});
  const TensorId o = g.add_tensor({"o", {1, 7, 3, 3}, Layout::kHWC, model::DType::kInt8, 1});
  ConcatChunks ch = concat_chunks(g, ConcatOp{{}, {a, b}, o, 1});
  EXPECT_EQ(ch.outer, 9);  // every pixel: 2 bytes of a, then 5 of b
  EXPECT_EQ(ch.chunk_bytes, (std::vector<int64_t>{2, 5}));
  const TensorId r1 = g.add_tensor({"r1", {2, 3}, Layout::kRowMajor, model::DType::kInt8, 1});
  const TensorId r2 = g.add_tensor({"r2", {2, 3}, Layout::kRowMajor, model::DType::kInt8, 1});
  const TensorId ro = g.add_tensor({"ro", {4, 3}, Layout::kRowMajor, model::DType::kInt8, 1});
  ch = concat_chunks(g, ConcatOp{{}, {r1, r2}, ro, 0});
  EXPECT_EQ(ch.outer, 1);
  EXPECT_EQ(ch.chunk_bytes, (std::vector<int64_t>{6, 6}));
  const QTensor& h = g.tensor(a);
  EXPECT_EQ(storage_axis(h, 1), 2);
  EXPECT_EQ(storage_axis(h, 2), 0);
  EXPECT_EQ(storage_axis(h, 3), 1);
}

}  // namespace
}  // namespace npuforge::compiler
