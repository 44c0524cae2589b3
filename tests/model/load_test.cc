// --input-shape parsing and application, and loading by file extension.
#include <gtest/gtest.h>

#include "model/bindings.h"
#include "model/load.h"
#include "model/npy.h"
#include "onnx_builder.h"
#include "test_ops.h"
#include "util/error.h"

namespace npuforge::model {
namespace {

using testing::OnnxBuilder;

#define EXPECT_CONTAINS(text, part) EXPECT_NE(std::string(text).find(part), std::string::npos) << (text)

template <class F>
std::string error_of(F f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(Load, ParsesInputShapes) {
  EXPECT_EQ(parse_input_shape("x=1x3x224x224"), (std::pair<std::string, Shape>{"x", {1, 3, 224, 224}}));
  EXPECT_EQ(parse_input_shape("input.1=2,5"), (std::pair<std::string, Shape>{"input.1", {2, 5}}));
  EXPECT_EQ(parse_input_shape("a=b=7"), (std::pair<std::string, Shape>{"a=b", {7}}));
  EXPECT_EQ(parse_input_shape("s=scalar"), (std::pair<std::string, Shape>{"s", {}}));
  EXPECT_CONTAINS(error_of([] { parse_input_shape("1x3"); }), "--input-shape '1x3': no name");
  EXPECT_CONTAINS(error_of([] { parse_input_shape("x="); }), "no dimensions");
  EXPECT_CONTAINS(error_of([] { parse_input_shape("x=1xx3"); }), "'' is not a non-negative dimension");
  EXPECT_CONTAINS(error_of([] { parse_input_shape("x=1x-3"); }), "'-3' is not a non-negative dimension");
  EXPECT_CONTAINS(error_of([] { parse_input_shape("x=1x3q"); }), "'3q' is not a non-negative dimension");
}

Graph dynamic_graph() {
  OnnxBuilder b;
  b.input("x", DType::kFloat32, {-1, 3, -1});
  b.node("Relu", {"x"}, {"y"}, "relu");
  b.output("y", DType::kFloat32, {-1, 3, -1});
  Graph g = import_model(b.save("dyn.onnx"));
  return g;
}

TEST(Load, InputShapesFixUnknownDimensions) {
  Graph g = dynamic_graph();
  EXPECT_CONTAINS(error_of([&] { require_known_inputs(g); }),
                  "dyn.onnx: input 'x' has a dimension that is not known (Nx3xN); fix it with --input-shape x=DIMS");
  apply_input_shapes(g, {{"x", {2, 3, 5}}});
  require_known_inputs(g);
  infer_shapes(g, testing::test_infer());
  EXPECT_EQ(g.find_value("y")->shape, (Shape{2, 3, 5}));
}

TEST(Load, WrongInputShapesAreErrorsNamingTheInput) {
  Graph g = dynamic_graph();
  EXPECT_CONTAINS(error_of([&] { apply_input_shapes(g, {{"z", {1}}}); }),
                  "dyn.onnx: --input-shape names 'z', which is not an input of the model (its inputs: 'x')");
  EXPECT_CONTAINS(error_of([&] { apply_input_shapes(g, {{"x", {1, 3}}}); }),
                  "dyn.onnx: --input-shape x=1x3 has rank 2, but input 'x' has rank 3 (?x3x?)");
  EXPECT_CONTAINS(error_of([&] { apply_input_shapes(g, {{"x", {1, 4, 5}}}); }),
                  "changes dimension 1 of input 'x', which the model fixes to 3");
}

TEST(Load, UnknownExtensionIsAnError) {
  EXPECT_CONTAINS(error_of([] { import_model(testing::write_temp("m.txt", "hi")); }),
                  "m.txt: unknown model format '.txt' (expected .onnx, .yaml or .yml)");
}

TEST(Bindings, BindsFilesByNameAndInOrder) {
  const std::vector<std::string> names{"a", "b", "c"};
  auto bound = bind_files(names, {"b=x.npy", "first.npy", "third.npy"}, "--input");
  EXPECT_EQ(bound.at("a"), "first.npy");
  EXPECT_EQ(bound.at("b"), "x.npy");
  EXPECT_EQ(bound.at("c"), "third.npy");
  bound = bind_files(names, {"dir/k=v.npy"}, "--input");  // not an input name: a path
  EXPECT_EQ(bound.at("a"), "dir/k=v.npy");
  EXPECT_CONTAINS(error_of([&] { bind_files(names, {"a=1.npy", "a=2.npy"}, "--input"); }), "'a' is given twice");
  EXPECT_CONTAINS(error_of([&] { bind_files({"y"}, {"1.npy", "2.npy"}, "--output"); }),
                  "--output 2.npy: no model output left to bind it to (the model's: 'y')");
  EXPECT_CONTAINS(error_of([&] { read_inputs({"x"}, {}); }), "no --input given for model input 'x'");
}

}  // namespace
}  // namespace npuforge::model
