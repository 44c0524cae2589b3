// Shape inference and constant folding, with a test-only registry of trivial ops; results
// cross-checked with ONNX's own shape inference.
#include <gtest/gtest.h>

#include "model/infer.h"
#include "model/onnx_import.h"
#include "onnx_builder.h"
#include "onnx_shape_check.h"
#include "test_ops.h"
#include "util/error.h"

namespace npuforge::model {
namespace {

using testing::floats;
using testing::int64s;
using testing::OnnxBuilder;

#define EXPECT_CONTAINS(text, part) EXPECT_NE(std::string(text).find(part), std::string::npos) << (text)

const InferOptions kTestOps = testing::test_infer();

Graph import(const OnnxBuilder& b) {
  const std::string bytes = b.bytes();
  return import_onnx_bytes({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()}, "m.onnx");
}

// x[2,3] -> Relu -> r -> Reshape to Shape(x) -> r2 -> Reshape to (flip + zeros) = [3, -1]
// -> y. The shape values (Shape, Add of constants) fold; Relu and both Reshapes remain.
OnnxBuilder shape_chain_model() {
  OnnxBuilder b;
  b.input("x", DType::kFloat32, {2, 3});
  b.initializer("zeros", int64s({2}, {0, 0}));
  b.initializer("flip", int64s({2}, {3, -1}));
  b.node("Relu", {"x"}, {"r"}, "relu");
  b.node("Shape", {"x"}, {"s"}, "shape");
  b.node("Reshape", {"r", "s"}, {"r2"}, "reshape_same");
  b.node("Add", {"flip", "zeros"}, {"flip2"}, "add_shape");
  b.node("Reshape", {"r2", "flip2"}, {"y"}, "reshape_flip");
  b.output("y", DType::kFloat32, {3, 2});
  return b;
}

TEST(Infer, FoldsShapeChainsAndRecordsEveryValue) {
  Graph g = import(shape_chain_model());
  infer_shapes(g, kTestOps);
  ASSERT_EQ(g.nodes.size(), 3u);
  EXPECT_EQ(g.nodes[0].name, "relu");
  EXPECT_EQ(g.nodes[1].name, "reshape_same");
  EXPECT_EQ(g.nodes[2].name, "reshape_flip");
  EXPECT_EQ(*g.find_constant("s"), int64s({2}, {2, 3}));
  EXPECT_EQ(*g.find_constant("flip2"), int64s({2}, {3, -1}));
  EXPECT_FALSE(g.is_constant("zeros"));  // read only by the folded Add: pruned
  EXPECT_FALSE(g.is_constant("flip"));
  EXPECT_EQ(g.find_value("r2")->shape, (Shape{2, 3}));
  EXPECT_EQ(g.find_value("y")->shape, (Shape{3, 2}));
  EXPECT_EQ(g.find_value("y")->dtype, DType::kFloat32);
}

TEST(Infer, AgreesWithOnnxShapeInference) {
  const OnnxBuilder b = shape_chain_model();
  Graph g = import(b);
  infer_shapes(g, kTestOps);
  const auto check = testing::compare_with_onnx_inference(b.model, g);
  EXPECT_TRUE(check.onnx_error.empty()) << check.onnx_error;
  // ONNX 1.12 leaves r2 unknown (its Reshape does not use the propagated Shape value).
  EXPECT_GE(check.compared, 4) << "r, s, flip2, y";
  for (const auto& m : check.mismatches) ADD_FAILURE() << m;
}

TEST(Infer, CrossCheckCatchesAWrongInference) {
  // A planted bug: the graph claims r is 6x1; the comparison must say so.
  const OnnxBuilder b = shape_chain_model();
  Graph g = import(b);
  infer_shapes(g, kTestOps);
  g.values["r"].shape = {6, 1};
  const auto check = testing::compare_with_onnx_inference(b.model, g);
  ASSERT_EQ(check.mismatches.size(), 1u);
  EXPECT_CONTAINS(check.mismatches[0], "'r': npuforge float32 6x1, ONNX type 1 shape 2x3");
}

TEST(Infer, KeepOpsAreNotFolded) {
  OnnxBuilder b;
  b.input("x", DType::kFloat32, {2});
  b.initializer("a", floats({2}, {1, 2}));
  b.initializer("c", floats({2}, {3, 4}));
  b.node("Add", {"a", "c"}, {"w"}, "fold_me");
  b.node("Add", {"x", "w"}, {"y"}, "runtime");
  b.output("y", DType::kFloat32, {2});
  Graph folded = import(b);
  infer_shapes(folded, kTestOps);
  ASSERT_EQ(folded.nodes.size(), 1u);
  EXPECT_EQ(*folded.find_constant("w"), floats({2}, {4, 6}));
  Graph kept = import(b);
  infer_shapes(kept, testing::test_infer(true, {"Add"}));
  EXPECT_EQ(kept.nodes.size(), 2u);
  EXPECT_EQ(kept.find_value("w")->shape, Shape{2});
}

TEST(Infer, UnsupportedOpsAndMismatchesAreErrorsNamingTheNode) {
  OnnxBuilder b;
  b.input("x", DType::kFloat32, {2});
  b.node("Softplus", {"x"}, {"y"}, "soft");
  b.output("y", DType::kFloat32, {2});
  Graph g = import(b);
  try {
    infer_shapes(g, kTestOps);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "node 'soft' (Softplus): operator not supported by npuforge");
  }

  OnnxBuilder d;
  d.input("x", DType::kFloat32, {2});
  auto& n = d.node("Relu", {"x"}, {"y"}, "vendor");
  n.set_domain("com.vendor");
  d.output("y", DType::kFloat32, {2});
  g = import(d);
  EXPECT_THROW(infer_shapes(g, kTestOps), Error);

  // The file declares an output shape the graph does not compute.
  OnnxBuilder m;
  m.input("x", DType::kFloat32, {2});
  m.node("Relu", {"x"}, {"y"}, "relu");
  m.output("y", DType::kFloat32, {3});
  g = import(m);
  try {
    infer_shapes(g, kTestOps);
    FAIL();
  } catch (const Error& e) {
    EXPECT_CONTAINS(e.what(), "node 'relu' (Relu): computes graph output 'y' as float32 2, but the model declares float32 3");
  }

  // Broadcasting failure comes from the op, naming the node.
  OnnxBuilder s;
  s.input("x", DType::kFloat32, {2});
  s.input("z", DType::kFloat32, {3});
  s.node("Add", {"x", "z"}, {"y"}, "add");
  s.output("y", DType::kFloat32);
  g = import(s);
  try {
    infer_shapes(g, kTestOps);
    FAIL();
  } catch (const Error& e) {
    EXPECT_CONTAINS(e.what(), "node 'add' (Add): shapes 2 and 3 do not broadcast");
  }
}

TEST(Infer, DeadNodesAreDroppedBeforeTheyCanFail) {
  OnnxBuilder b;
  b.input("x", DType::kFloat32, {2});
  b.node("Relu", {"x"}, {"y"}, "relu");
  b.node("Softplus", {"x"}, {"unused"}, "dead");  // nothing reads it
  b.output("y", DType::kFloat32, {2});
  Graph g = import(b);
  infer_shapes(g, kTestOps);
  ASSERT_EQ(g.nodes.size(), 1u);
  EXPECT_EQ(g.nodes[0].name, "relu");
}

}  // namespace
}  // namespace npuforge::model
