// Extracting a run of nodes as a graph: inputs, constants and outputs at its boundary.
#include <gtest/gtest.h>

#include "model/interpreter.h"
#include "model/onnx_import.h"
#include "model/subgraph.h"
#include "onnx_builder.h"
#include "test_ops.h"
#include "util/error.h"

namespace npuforge::model {
namespace {

using testing::floats;
using testing::OnnxBuilder;

TEST(Subgraph, BoundaryValuesBecomeInputsAndOutputs) {
  // x -> add(b) -> s -> relu -> r -> add(r, s) -> y
  OnnxBuilder b;
  b.input("x", DType::kFloat32, {3});
  b.initializer("b", floats({3}, {1, -2, 3}));
  b.node("Add", {"x", "b"}, {"s"}, "add");
  b.node("Relu", {"s"}, {"r"}, "relu");
  b.node("Add", {"r", "s"}, {"y"}, "sum");
  b.output("y", DType::kFloat32, {3});
  const std::string bytes = b.bytes();
  Graph g = import_onnx_bytes({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()}, "m.onnx");
  infer_shapes(g, testing::test_infer());

  const Graph first = extract_subgraph(g, {0});
  EXPECT_EQ(first.inputs, std::vector<std::string>{"x"});
  EXPECT_EQ(first.outputs, std::vector<std::string>{"s"});  // read by relu and sum outside
  EXPECT_TRUE(first.is_constant("b"));
  EXPECT_EQ(first.find_value("s")->shape, Shape{3});

  const Graph rest = extract_subgraph(g, {2, 1});  // order of indices does not matter
  EXPECT_EQ(rest.inputs, std::vector<std::string>{"s"});
  EXPECT_EQ(rest.outputs, std::vector<std::string>{"y"});
  ASSERT_EQ(rest.nodes.size(), 2u);
  EXPECT_EQ(rest.nodes[0].name, "relu");

  // Running the pieces chained equals running the whole graph.
  TensorMap in;
  in.emplace("x", floats({3}, {0.5f, 1, -4}));
  const Tensor whole = Interpreter(g, &testing::test_registry()).run(in).at("y");
  TensorMap mid = Interpreter(first, &testing::test_registry()).run(in);
  const Tensor chained = Interpreter(rest, &testing::test_registry()).run(std::move(mid)).at("y");
  EXPECT_EQ(chained, whole);
  EXPECT_EQ(whole, floats({3}, {3, -1, -1}));

  EXPECT_THROW(extract_subgraph(g, {3}), Error);
}

}  // namespace
}  // namespace npuforge::model
