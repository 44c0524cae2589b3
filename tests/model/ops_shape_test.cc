// Shape-computing ops: Identity, Dropout, Shape, Size, Reshape, Flatten, Squeeze, Unsqueeze,
// Constant, ConstantOfShape, Range; run and infer, opset variants, errors.
#include <gtest/gtest.h>

#include "ops_test_util.h"

namespace npuforge::model {
namespace {

using namespace testing;

const Tensor kX = F({2, 3, 4}, std::vector<float>(24, 1.5f));

TEST(Identity, PassesValueAndInfo) {
  EXPECT_EQ(run1(make_node("Identity", 1), 13, {kX}), kX);
  const InferResult r = infer(make_node("Identity", 1), 13, {info_of(DType::kInt8, {kUnknownDim})});
  EXPECT_EQ(r.outputs[0].dtype, DType::kInt8);
}

TEST(Dropout, InferenceIsIdentityWithAllTrueMask) {
  const std::vector<Tensor> out = run(make_node("Dropout", 1, 2), 13, {kX});
  EXPECT_EQ(out.at(0), kX);
  EXPECT_EQ(out.at(1).dtype(), DType::kBool);
  EXPECT_EQ(out.at(1).shape(), kX.shape());
  for (bool m : out.at(1).values<bool>()) EXPECT_TRUE(m);
  // Before opset 10 the mask has the data's type.
  EXPECT_EQ(run(make_node("Dropout", 1, 2), 7, {kX}).at(1).dtype(), DType::kFloat32);
  const InferResult r = infer(make_node("Dropout", 1, 2), 9, {info_of(DType::kFloat32, {2})});
  EXPECT_EQ(r.outputs.size(), 2u);
  EXPECT_EQ(r.outputs[1].dtype, DType::kFloat32);
}

TEST(Dropout, TrainingModeIsRejectedUnlessRatioIsZero) {
  const Node n = make_node("Dropout", 3);
  expect_error([&] { run1(n, 13, {kX, F({}, {0.5f}), B({}, {1})}); }, {"(Dropout)", "training_mode"});
  EXPECT_EQ(run1(n, 13, {kX, F({}, {0.0f}), B({}, {1})}), kX);
  EXPECT_EQ(run1(n, 13, {kX, F({}, {0.5f}), B({}, {0})}), kX);
  expect_error([&] { infer(n, 13, {info_of(DType::kFloat32, {2}), std::nullopt, const_of(B({}, {1}))}); },
               {"training_mode = true"});  // default ratio 0.5
  // Known only at run time: checked by run.
  EXPECT_EQ(infer(n, 13, {info_of(DType::kFloat32, {2}), std::nullopt, info_of(DType::kBool, {})}).outputs.size(), 1u);
}

TEST(Shape, WholeShapeAndOpset15Slices) {
  EXPECT_EQ(vals<int64_t>(run1(make_node("Shape", 1), 13, {kX})), (std::vector<int64_t>{2, 3, 4}));
  Node n = make_node("Shape", 1);
  set_attr(n, "start", int64_t{1});
  EXPECT_EQ(vals<int64_t>(run1(n, 15, {kX})), (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(vals<int64_t>(run1(n, 14, {kX})), (std::vector<int64_t>{2, 3, 4}));  // no start/end before 15
  set_attr(n, "end", int64_t{-1});
  EXPECT_EQ(vals<int64_t>(run1(n, 15, {kX})), (std::vector<int64_t>{3}));
  set_attr(n, "start", int64_t{-10});  // clamped to 0
  set_attr(n, "end", int64_t{10});     // clamped to the rank
  EXPECT_EQ(vals<int64_t>(run1(n, 15, {kX})), (std::vector<int64_t>{2, 3, 4}));
  set_attr(n, "start", int64_t{2});
  set_attr(n, "end", int64_t{1});
  EXPECT_EQ(run1(n, 15, {kX}).shape(), (Shape{0}));
}

TEST(Shape, InferGivesTheValueWhenTheDimsAreKnown) {
  Node n = make_node("Shape", 1);
  InferResult r = infer(n, 13, {info_of(DType::kFloat32, {1, 3, 224})});
  EXPECT_EQ(r.outputs[0].shape, (Shape{3}));
  ASSERT_TRUE(r.values.at(0).has_value());
  EXPECT_EQ(vals<int64_t>(*r.values[0]), (std::vector<int64_t>{1, 3, 224}));
  r = infer(n, 13, {info_of(DType::kFloat32, {kUnknownDim, 3})});
  EXPECT_EQ(r.outputs[0].shape, (Shape{2}));
  EXPECT_FALSE(r.values.at(0).has_value());
  set_attr(n, "start", int64_t{1});  // the unknown batch dim is outside the slice
  r = infer(n, 15, {info_of(DType::kFloat32, {kUnknownDim, 3})});
  ASSERT_TRUE(r.values.at(0).has_value());
  EXPECT_EQ(vals<int64_t>(*r.values[0]), (std::vector<int64_t>{3}));
}

TEST(Size, CountsElements) {
  const Tensor s = run1(make_node("Size", 1), 13, {kX});
  EXPECT_EQ(s.shape(), Shape{});
  EXPECT_EQ(s.values<int64_t>()[0], 24);
  const InferResult r = infer(make_node("Size", 1), 13, {info_of(DType::kFloat32, {5, 5})});
  EXPECT_EQ(r.values.at(0)->values<int64_t>()[0], 25);
}

TEST(Reshape, ZeroCopiesAndMinusOneInfers) {
  const Node n = make_node("Reshape", 2);
  EXPECT_EQ(run1(n, 13, {kX, I64({2}, {0, -1})}).shape(), (Shape{2, 12}));
  EXPECT_EQ(run1(n, 13, {kX, I64({4}, {-1, 1, 2, 2})}).shape(), (Shape{6, 1, 2, 2}));
  EXPECT_EQ(run1(n, 13, {kX, I64({3}, {0, 0, -1})}).shape(), (Shape{2, 3, 4}));
  const Tensor y = run1(n, 13, {F({2, 2}, {1, 2, 3, 4}), I64({1}, {4})});
  EXPECT_EQ(vals<float>(y), (std::vector<float>{1, 2, 3, 4}));
}

TEST(Reshape, AllowzeroKeepsZeroLiteral) {
  Node n = make_node("Reshape", 2);
  set_attr(n, "allowzero", int64_t{1});
  EXPECT_EQ(run1(n, 14, {F({0, 3}, {}), I64({2}, {3, 0})}).shape(), (Shape{3, 0}));
  expect_error([&] { run1(n, 14, {F({0, 3}, {}), I64({2}, {0, -1})}); }, {"allowzero"});
  EXPECT_EQ(run1(n, 13, {F({0, 3}, {}), I64({2}, {0, 3})}).shape(), (Shape{0, 3}));  // ignored before 14
}

TEST(Reshape, BadShapesAreErrors) {
  const Node n = make_node("Reshape", 2);
  expect_error([&] { run1(n, 13, {kX, I64({2}, {-1, -1})}); }, {"(Reshape)", "more than one -1"});
  expect_error([&] { run1(n, 13, {kX, I64({2}, {5, -1})}); }, {"cannot infer the -1"});
  expect_error([&] { run1(n, 13, {kX, I64({2}, {5, 5})}); }, {"cannot reshape 2x3x4"});
  expect_error([&] { run1(n, 13, {kX, I64({2}, {-2, 12})}); }, {"negative"});
  expect_error([&] { run1(n, 13, {F({2}, {1, 2}), I64({2}, {0, 0})}); }, {"lacks"});
  expect_error([&] { run1(n, 13, {kX, F({1}, {24})}); }, {"float32"});
}

TEST(Reshape, InferWithUnknownDimsAndShapes) {
  const Node n = make_node("Reshape", 2);
  InferResult r = infer(n, 13, {info_of(DType::kFloat32, {kUnknownDim, 3, 4}), const_of(I64({2}, {0, -1}))});
  EXPECT_EQ(r.outputs[0].shape, (Shape{kUnknownDim, 12}));
  r = infer(n, 13, {info_of(DType::kFloat32, {kUnknownDim, 3, 4}), const_of(I64({2}, {-1, 12}))});
  EXPECT_EQ(r.outputs[0].shape, (Shape{kUnknownDim, 12}));
  r = infer(n, 13, {info_of(DType::kFloat32, {2, 3, 4}), info_of(DType::kInt64, {3})});  // shape known at run time only
  EXPECT_EQ(r.outputs[0].shape, (Shape{kUnknownDim, kUnknownDim, kUnknownDim}));
}

TEST(Flatten, AxisSplitsTheDims) {
  Node n = make_node("Flatten", 1);
  EXPECT_EQ(run1(n, 13, {kX}).shape(), (Shape{2, 12}));
  set_attr(n, "axis", int64_t{0});
  EXPECT_EQ(run1(n, 13, {kX}).shape(), (Shape{1, 24}));
  set_attr(n, "axis", int64_t{3});
  EXPECT_EQ(run1(n, 13, {kX}).shape(), (Shape{24, 1}));
  set_attr(n, "axis", int64_t{-1});
  EXPECT_EQ(run1(n, 13, {kX}).shape(), (Shape{6, 4}));
  EXPECT_EQ(infer(n, 13, {info_of(DType::kFloat32, {kUnknownDim, 3, 4})}).outputs[0].shape, (Shape{kUnknownDim, 4}));
  set_attr(n, "axis", int64_t{4});
  expect_error([&] { run1(n, 13, {kX}); }, {"(Flatten)", "axis 4"});
}

TEST(Squeeze, AxesAttributeBefore13InputFrom13) {
  const Tensor x = F({1, 3, 1, 2}, std::vector<float>(6, 0));
  Node a = make_node("Squeeze", 1);
  set_attr(a, "axes", std::vector<int64_t>{0, -2});
  EXPECT_EQ(run1(a, 11, {x}).shape(), (Shape{3, 2}));
  EXPECT_EQ(run1(make_node("Squeeze", 2), 13, {x, I64({1}, {2})}).shape(), (Shape{1, 3, 2}));
  EXPECT_EQ(run1(make_node("Squeeze", 1), 13, {x}).shape(), (Shape{3, 2}));  // all 1-dims
  expect_error([&] { run1(make_node("Squeeze", 2), 13, {x, I64({1}, {1})}); }, {"(Squeeze)", "cannot squeeze axis 1 of size 3"});
  EXPECT_FALSE(infer(make_node("Squeeze", 1), 13, {info_of(DType::kFloat32, {1, kUnknownDim})}).outputs[0].has_shape);
  EXPECT_EQ(infer(make_node("Squeeze", 2), 13, {info_of(DType::kFloat32, {1, kUnknownDim}), const_of(I64({1}, {0}))})
                .outputs[0].shape,
            (Shape{kUnknownDim}));
}

TEST(Unsqueeze, AxesRelativeToTheOutput) {
  const Tensor x = F({3, 2}, std::vector<float>(6, 0));
  Node a = make_node("Unsqueeze", 1);
  set_attr(a, "axes", std::vector<int64_t>{0, 3});
  EXPECT_EQ(run1(a, 11, {x}).shape(), (Shape{1, 3, 2, 1}));
  EXPECT_EQ(run1(make_node("Unsqueeze", 2), 13, {x, I64({2}, {-1, 1})}).shape(), (Shape{3, 1, 2, 1}));
  EXPECT_EQ(run1(make_node("Unsqueeze", 2), 13, {F({}, {5}), I64({1}, {0})}).shape(), (Shape{1}));
  expect_error([&] { run1(make_node("Unsqueeze", 2), 13, {x, I64({2}, {1, 1})}); }, {"(Unsqueeze)", "twice"});
  expect_error([&] { run1(make_node("Unsqueeze", 2), 13, {x, I64({1}, {4})}); }, {"axis 4 is out of range"});
  expect_error([&] { run1(make_node("Unsqueeze", 1), 13, {x}); }, {"axes are required"});
}

TEST(Constant, ValueAttributesAndInferredValue) {
  Node n = make_node("Constant", 0);
  set_attr(n, "value", I64({2}, {4, 5}));
  EXPECT_EQ(run1(n, 13, {}), I64({2}, {4, 5}));
  EXPECT_EQ(*infer(n, 13, {}).values.at(0), I64({2}, {4, 5}));
  Node f = make_node("Constant", 0);
  set_attr(f, "value_floats", std::vector<float>{1.5f, 2});
  EXPECT_EQ(run1(f, 13, {}), F({2}, {1.5f, 2}));
  Node i = make_node("Constant", 0);
  set_attr(i, "value_int", int64_t{7});
  EXPECT_EQ(run1(i, 13, {}), I64({}, {7}));
  Node s = make_node("Constant", 0);
  set_attr(s, "value_string", std::string("x"));
  expect_error([&] { run1(s, 13, {}); }, {"(Constant)", "value_string"});
}

TEST(ConstantOfShape, FillsWithTheValueAttribute) {
  Node n = make_node("ConstantOfShape", 1);
  const Tensor zeros = run1(n, 13, {I64({2}, {2, 3})});
  EXPECT_EQ(zeros, F({2, 3}, std::vector<float>(6, 0)));
  set_attr(n, "value", I32({1}, {7}));
  EXPECT_EQ(run1(n, 13, {I64({1}, {3})}), I32({3}, {7, 7, 7}));
  EXPECT_EQ(run1(n, 13, {I64({0}, {})}).shape(), Shape{});  // an empty shape is a scalar
  EXPECT_EQ(infer(n, 13, {const_of(I64({2}, {4, 1}))}).outputs[0].shape, (Shape{4, 1}));
  EXPECT_EQ(infer(n, 13, {info_of(DType::kInt64, {3})}).outputs[0].shape, (Shape(3, kUnknownDim)));
  expect_error([&] { run1(n, 13, {I64({1}, {-1})}); }, {"(ConstantOfShape)", "negative"});
}

TEST(Range, CountsAndValues) {
  const Node n = make_node("Range", 3);
  EXPECT_EQ(run1(n, 13, {I32({}, {10}), I32({}, {4}), I32({}, {-3})}), I32({2}, {10, 7}));
  EXPECT_EQ(run1(n, 13, {F({}, {1}), F({}, {5}), F({}, {2})}), F({2}, {1, 3}));
  EXPECT_EQ(run1(n, 13, {I64({}, {0}), I64({}, {5}), I64({}, {-1})}).shape(), (Shape{0}));
  EXPECT_EQ(run1(n, 13, {F({}, {0}), F({}, {1}), F({}, {0.3f})}).shape(), (Shape{4}));
  EXPECT_EQ(infer(n, 13, {const_of(I64({}, {0})), const_of(I64({}, {10})), const_of(I64({}, {3}))}).outputs[0].shape,
            (Shape{4}));
  expect_error([&] { run1(n, 13, {I64({}, {0}), I64({}, {5}), I64({}, {0})}); }, {"(Range)", "delta is zero"});
  expect_error([&] { run1(n, 13, {I64({}, {0}), I64({}, {INT64_MAX}), I64({}, {1})}); }, {"more than"});
  expect_error([&] { run1(n, 10, {I64({}, {0}), I64({}, {5}), I64({}, {1})}); }, {"opset 10"});
}

}  // namespace
}  // namespace npuforge::model
