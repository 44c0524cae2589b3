// The reference interpreter: input checks, order of execution, release after the last
// consumer, intermediates on request, and an op that disagrees with its own inference.
#include <gtest/gtest.h>

#include "model/infer.h"
#include "model/interpreter.h"
#include "model/onnx_import.h"
#include "onnx_builder.h"
#include "test_ops.h"
#include "util/error.h"

namespace npuforge::model {
namespace {

using testing::floats;
using testing::OnnxBuilder;

#define EXPECT_CONTAINS(text, part) EXPECT_NE(std::string(text).find(part), std::string::npos) << (text)

Graph load(const OnnxBuilder& b) {
  const std::string bytes = b.bytes();
  Graph g = import_onnx_bytes({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()}, "m.onnx");
  infer_shapes(g, testing::test_infer());
  return g;
}

// y = relu(x + b) + relu(x + b); z = relu(x) (a second output).
OnnxBuilder two_output_model() {
  OnnxBuilder b;
  b.input("x", DType::kFloat32, {4});
  b.initializer("b", floats({4}, {1, -1, 0.5f, -3}));
  b.node("Add", {"x", "b"}, {"s"}, "add");
  b.node("Relu", {"s"}, {"r"}, "relu");
  b.node("Add", {"r", "r"}, {"y"}, "double");
  b.node("Relu", {"x"}, {"z"}, "relu_x");
  b.output("y", DType::kFloat32, {4});
  b.output("z", DType::kFloat32, {4});
  return b;
}

TEST(Interpreter, ComputesOutputsInOrder) {
  const Graph g = load(two_output_model());
  const Interpreter interp(g, &testing::test_registry());
  TensorMap in;
  in.emplace("x", floats({4}, {1, 2, -3, 4}));
  const TensorMap out = interp.run(in);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out.at("y"), floats({4}, {4, 2, 0, 2}));
  EXPECT_EQ(out.at("z"), floats({4}, {1, 2, 0, 4}));
}

TEST(Interpreter, FreesValuesAfterTheirLastConsumer) {
  const Graph g = load(two_output_model());
  const Interpreter interp(g, &testing::test_registry());
  TensorMap in;
  in.emplace("x", floats({4}, {1, 2, -3, 4}));
  RunStats stats;
  std::vector<std::string> order;
  RunOptions options;
  options.on_node = [&](const Node& n, std::span<const Tensor> outs) {
    order.push_back(n.name);
    EXPECT_EQ(outs.size(), 1u);
  };
  interp.run(in, options, &stats);
  EXPECT_EQ(order, (std::vector<std::string>{"add", "relu", "double", "relu_x"}));
  // Live at most: x, r (s freed after relu), y, then z: 16 bytes each; never x, s, r, y, z together.
  EXPECT_EQ(stats.peak_live_bytes, 3u * 16u);

  options.keep_intermediates = true;
  const TensorMap all = interp.run(in, options, &stats);
  EXPECT_EQ(all.size(), 5u);  // x, s, r, y, z: nothing constant
  EXPECT_EQ(all.count("b"), 0u);
  EXPECT_EQ(all.at("s"), floats({4}, {2, 1, -2.5f, 1}));
  EXPECT_EQ(stats.peak_live_bytes, 5u * 16u);
}

TEST(Interpreter, InputsAreChecked) {
  const Graph g = load(two_output_model());
  const Interpreter interp(g, &testing::test_registry());
  const auto error_of = [&](TensorMap in) {
    try {
      interp.run(std::move(in));
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  TensorMap wrong_shape;
  wrong_shape.emplace("x", floats({2, 2}, {1, 2, 3, 4}));
  EXPECT_EQ(error_of(wrong_shape), "m.onnx: input 'x' is float32 2x2, the model expects float32 4");
  TensorMap wrong_type;
  wrong_type.emplace("x", Tensor(DType::kInt8, {4}));
  EXPECT_EQ(error_of(wrong_type), "m.onnx: input 'x' is int8 4, the model expects float32 4");
  EXPECT_EQ(error_of({}), "m.onnx: no value given for input 'x'");
  TensorMap extra;
  extra.emplace("x", floats({4}, {1, 2, 3, 4}));
  extra.emplace("q", floats({1}, {1}));
  EXPECT_EQ(error_of(extra), "m.onnx: 'q' is not an input of the model (its inputs: 'x')");
}

TEST(Interpreter, AnOpDisagreeingWithItsInferenceIsCaught) {
  OnnxBuilder b;
  b.input("x", DType::kFloat32, {4});
  b.node("WrongShape", {"x"}, {"y"}, "liar").set_domain("test");
  b.output("y", DType::kFloat32, {4});
  const Graph g = load(b);
  const Interpreter interp(g, &testing::test_registry());
  TensorMap in;
  in.emplace("x", floats({4}, {1, 2, 3, 4}));
  try {
    interp.run(in);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "node 'liar' (WrongShape): computed output 'y' as float32 1, but shape inference said float32 4");
  }
}

TEST(Interpreter, NodesWithoutAReferenceImplementationFailUpFront) {
  OnnxBuilder b;
  b.input("x", DType::kFloat32, {4});
  b.node("NoRun", {"x"}, {"y"}, "shape_only").set_domain("test");
  b.output("y", DType::kFloat32, {4});
  const Graph g = load(b);
  try {
    Interpreter interp(g, &testing::test_registry());
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "node 'shape_only' (NoRun): has no reference implementation in npuforge");
  }
}

TEST(Interpreter, OutputsMayBeConstantsOrInputs) {
  OnnxBuilder b;
  b.input("x", DType::kFloat32, {2});
  b.initializer("c", floats({2}, {7, 8}));
  b.node("Identity", {"x"}, {"x_out"}, "pass");
  b.node("Shape", {"x"}, {"shape"}, "shape");
  b.output("x_out", DType::kFloat32, {2});
  b.output("c", DType::kFloat32, {2});
  b.output("shape", DType::kInt64, {1});
  const Graph g = load(b);
  TensorMap in;
  in.emplace("x", floats({2}, {1, 2}));
  const TensorMap out = Interpreter(g, &testing::test_registry()).run(in);
  EXPECT_EQ(out.at("x_out"), floats({2}, {1, 2}));
  EXPECT_EQ(out.at("c"), floats({2}, {7, 8}));
  EXPECT_EQ(out.at("shape"), testing::int64s({1}, {2}));
}

}  // namespace
}  // namespace npuforge::model
