// Element-wise binary ops: broadcasting, integer semantics, opset-dependent types, Pow, Cast.
#include <cmath>
#include <limits>

#include <gtest/gtest.h>

#include "ops_test_util.h"
#include "util/rng.h"

namespace npuforge::model {
namespace {

using namespace testing;

TEST(Arith, AddBroadcastsRowOverMatrix) {
  const Node n = make_node("Add", 2);
  const Tensor y = run1(n, 13, {F({2, 3}, {1, 2, 3, 4, 5, 6}), F({3}, {10, 20, 30})});
  EXPECT_EQ(y.shape(), (Shape{2, 3}));
  EXPECT_EQ(vals<float>(y), (std::vector<float>{11, 22, 33, 14, 25, 36}));
}

TEST(Arith, BroadcastIsBidirectional) {
  const Tensor y = run1(make_node("Sub", 2), 13, {F({2, 1}, {1, 2}), F({1, 3}, {10, 20, 30})});
  EXPECT_EQ(y.shape(), (Shape{2, 3}));
  EXPECT_EQ(vals<float>(y), (std::vector<float>{-9, -19, -29, -8, -18, -28}));
}

TEST(Arith, ScalarAndEmptyOperands) {
  const Tensor y = run1(make_node("Mul", 2), 13, {F({}, {3}), F({2}, {1.5f, -2})});
  EXPECT_EQ(vals<float>(y), (std::vector<float>{4.5f, -6}));
  const Tensor e = run1(make_node("Mul", 2), 13, {F({0, 3}, {}), F({1, 3}, {1, 2, 3})});
  EXPECT_EQ(e.shape(), (Shape{0, 3}));
}

// Independent reference: every operand index from the output's multi-index by modulo.
TEST(Arith, RandomBroadcastsMatchIndexArithmetic) {
  Rng rng(7);
  for (int k = 0; k < 300; ++k) {
    const size_t rank = static_cast<size_t>(rng.range(0, 4));
    Shape out(rank), a, b;
    for (auto& d : out) d = rng.range(1, 4);
    // Each operand keeps a suffix of the dims, with some of them set to 1.
    const size_t ra = static_cast<size_t>(rng.range(0, static_cast<int64_t>(rank)));
    const size_t rb = static_cast<size_t>(rng.range(0, static_cast<int64_t>(rank)));
    for (size_t i = rank - ra; i < rank; ++i) a.push_back(rng.chance(0.3) ? 1 : out[i]);
    for (size_t i = rank - rb; i < rank; ++i) b.push_back(rng.chance(0.3) ? 1 : out[i]);
    Tensor ta(DType::kFloat32, a), tb(DType::kFloat32, b);
    for (float& v : ta.values<float>()) v = static_cast<float>(rng.range(-50, 50));
    for (float& v : tb.values<float>()) v = static_cast<float>(rng.range(-50, 50));
    const Tensor y = run1(make_node("Add", 2), 14, {ta, tb});
    // The output has the larger operand rank; a dim is 1 where both operands have 1 (or none).
    const size_t first = rank - std::max(ra, rb);
    Shape expect_shape;
    for (size_t i = first; i < rank; ++i) {
      const bool a1 = i < rank - ra || a[i - (rank - ra)] == 1;
      const bool b1 = i < rank - rb || b[i - (rank - rb)] == 1;
      expect_shape.push_back(a1 && b1 ? 1 : out[i]);
    }
    ASSERT_EQ(y.shape(), expect_shape);
    for (int64_t flat = 0; flat < y.numel(); ++flat) {
      int64_t rest = flat, ia = 0, ib = 0, sa = 1, sb = 1;
      for (size_t i = rank; i-- > first;) {
        const int64_t idx = rest % expect_shape[i - first];
        rest /= expect_shape[i - first];
        if (i >= rank - ra) {
          const int64_t d = a[i - (rank - ra)];
          ia += (idx % d) * sa;
          sa *= d;
        }
        if (i >= rank - rb) {
          const int64_t d = b[i - (rank - rb)];
          ib += (idx % d) * sb;
          sb *= d;
        }
      }
      ASSERT_EQ(y.values<float>()[flat], ta.values<float>()[ia] + tb.values<float>()[ib]) << k << " " << flat;
    }
  }
}

TEST(Arith, ShapesThatDoNotBroadcastNameTheNode) {
  expect_error([] { run1(make_node("Add", 2), 13, {F({2, 3}, {1, 2, 3, 4, 5, 6}), F({2}, {1, 2})}); },
               {"node 'n' (Add)", "2x3", "do not broadcast"});
}

TEST(Arith, IntegerDivisionTruncatesTowardZero) {
  const Tensor y = run1(make_node("Div", 2), 13, {I32({4}, {7, -7, 7, -7}), I32({4}, {2, 2, -2, -2})});
  EXPECT_EQ(vals<int32_t>(y), (std::vector<int32_t>{3, -3, -3, 3}));
  const Tensor m = run1(make_node("Div", 2), 13, {I64({1}, {std::numeric_limits<int64_t>::min()}), I64({1}, {-1})});
  EXPECT_EQ(m.values<int64_t>()[0], std::numeric_limits<int64_t>::min());  // wraps, never traps
  expect_error([] { run1(make_node("Div", 2), 13, {I32({2}, {1, 2}), I32({2}, {1, 0})}); }, {"(Div)", "division by zero"});
}

TEST(Arith, IntegerOverflowWraps) {
  const Tensor y = run1(make_node("Add", 2), 13, {I32({1}, {std::numeric_limits<int32_t>::max()}), I32({1}, {1})});
  EXPECT_EQ(y.values<int32_t>()[0], std::numeric_limits<int32_t>::min());
  const Tensor u = run1(make_node("Mul", 2), 14, {U8({2}, {200, 16}), U8({2}, {2, 16})});
  EXPECT_EQ(vals<uint8_t>(u), (std::vector<uint8_t>{144, 0}));
}

TEST(Arith, EightBitTypesOnlyFromOpset14) {
  expect_error([] { run1(make_node("Add", 2), 13, {U8({1}, {1}), U8({1}, {2})}); },
               {"(Add)", "uint8", "opset 13"});
  EXPECT_EQ(run1(make_node("Add", 2), 14, {U8({1}, {200}), U8({1}, {100})}).values<uint8_t>()[0], 44);
  expect_error([] { run1(make_node("Add", 2), 14, {B({1}, {1}), B({1}, {1})}); }, {"bool"});
}

TEST(Arith, MixedTypesAreAnError) {
  expect_error([] { run1(make_node("Add", 2), 13, {F({1}, {1}), I32({1}, {2})}); }, {"float32", "int32", "same element type"});
}

TEST(Arith, InferBroadcastsKnownAndUnknownDims) {
  const Node n = make_node("Add", 2);
  InferResult r = infer(n, 13, {info_of(DType::kFloat32, {kUnknownDim, 3, 1}), info_of(DType::kFloat32, {4})});
  EXPECT_EQ(r.outputs.at(0).shape, (Shape{kUnknownDim, 3, 4}));
  r = infer(n, 13, {info_of(DType::kFloat32, {kUnknownDim, 1}), info_of(DType::kFloat32, {5, 7})});
  EXPECT_EQ(r.outputs.at(0).shape, (Shape{5, 7}));
  r = infer(n, 13, {no_shape(DType::kFloat32), info_of(DType::kFloat32, {5})});
  EXPECT_FALSE(r.outputs.at(0).has_shape);
  expect_error([&] { infer(n, 13, {info_of(DType::kFloat32, {3}), info_of(DType::kFloat32, {4})}); }, {"do not broadcast"});
}

TEST(Variadic, MaxMinSumMeanFoldWithBroadcast) {
  const std::vector<std::optional<Tensor>> in = {F({2}, {1, 8}), F({2, 1}, {3, 5}), F({}, {4})};
  EXPECT_EQ(vals<float>(run1(make_node("Max", 3), 13, in)), (std::vector<float>{4, 8, 5, 8}));
  EXPECT_EQ(vals<float>(run1(make_node("Min", 3), 13, in)), (std::vector<float>{1, 3, 1, 4}));
  EXPECT_EQ(vals<float>(run1(make_node("Sum", 3), 13, in)), (std::vector<float>{8, 15, 10, 17}));
  const Tensor mean = run1(make_node("Mean", 3), 13, in);
  EXPECT_EQ(mean.shape(), (Shape{2, 2}));
  EXPECT_FLOAT_EQ(mean.values<float>()[1], 5.0f);
  EXPECT_EQ(vals<float>(run1(make_node("Max", 1), 13, {F({2}, {1, 2})})), (std::vector<float>{1, 2}));
}

TEST(Variadic, IntegerMaxFromOpset12) {
  expect_error([] { run1(make_node("Max", 2), 11, {I32({1}, {1}), I32({1}, {2})}); }, {"int32", "opset 11"});
  EXPECT_EQ(run1(make_node("Max", 2), 12, {I8({2}, {-5, 7}), I8({2}, {-6, 9})}).values<int8_t>()[0], -5);
}

TEST(Compare, ComparisonsGiveBool) {
  const std::vector<std::optional<Tensor>> in = {F({3}, {1, 2, 3}), F({}, {2})};
  const Tensor eq = run1(make_node("Equal", 2), 13, in);
  EXPECT_EQ(eq.dtype(), DType::kBool);
  EXPECT_EQ(vals<bool>(eq), (std::vector<bool>{false, true, false}));
  EXPECT_EQ(vals<bool>(run1(make_node("Less", 2), 13, in)), (std::vector<bool>{true, false, false}));
  EXPECT_EQ(vals<bool>(run1(make_node("Greater", 2), 13, in)), (std::vector<bool>{false, false, true}));
  EXPECT_EQ(vals<bool>(run1(make_node("LessOrEqual", 2), 13, in)), (std::vector<bool>{true, true, false}));
  EXPECT_EQ(vals<bool>(run1(make_node("GreaterOrEqual", 2), 13, in)), (std::vector<bool>{false, true, true}));
  EXPECT_EQ(infer(make_node("Less", 2), 13, {info_of(DType::kFloat32, {3}), info_of(DType::kFloat32, {})}).outputs[0].dtype,
            DType::kBool);
}

TEST(Compare, EqualOnFloatsFromOpset11) {
  expect_error([] { run1(make_node("Equal", 2), 10, {F({1}, {1}), F({1}, {1})}); }, {"(Equal)", "float32", "opset 10"});
  EXPECT_TRUE(run1(make_node("Equal", 2), 10, {I64({1}, {4}), I64({1}, {4})}).values<bool>()[0]);
}

TEST(Logic, AndOrXorNot) {
  const std::vector<std::optional<Tensor>> in = {B({4}, {0, 0, 1, 1}), B({4}, {0, 1, 0, 1})};
  EXPECT_EQ(vals<bool>(run1(make_node("And", 2), 13, in)), (std::vector<bool>{false, false, false, true}));
  EXPECT_EQ(vals<bool>(run1(make_node("Or", 2), 13, in)), (std::vector<bool>{false, true, true, true}));
  EXPECT_EQ(vals<bool>(run1(make_node("Xor", 2), 13, in)), (std::vector<bool>{false, true, true, false}));
  EXPECT_EQ(vals<bool>(run1(make_node("Not", 1), 13, {B({2}, {0, 1})})), (std::vector<bool>{true, false}));
  expect_error([] { run1(make_node("And", 2), 13, {F({1}, {1}), F({1}, {1})}); }, {"(And)", "float32"});
}

TEST(Where, SelectsWithThreeWayBroadcast) {
  const Tensor y = run1(make_node("Where", 3), 16, {B({2, 1}, {1, 0}), F({3}, {1, 2, 3}), F({}, {-1})});
  EXPECT_EQ(y.shape(), (Shape{2, 3}));
  EXPECT_EQ(vals<float>(y), (std::vector<float>{1, 2, 3, -1, -1, -1}));
  expect_error([] { run1(make_node("Where", 3), 16, {F({1}, {1}), F({1}, {1}), F({1}, {1})}); }, {"condition", "float32"});
}

TEST(Pow, FloatAndIntegerBasesAndExponents) {
  EXPECT_EQ(vals<float>(run1(make_node("Pow", 2), 15, {F({3}, {2, 4, -3}), F({3}, {3, 0.5f, 2})})),
            (std::vector<float>{8, 2, 9}));
  EXPECT_EQ(vals<float>(run1(make_node("Pow", 2), 15, {F({2}, {2, 3}), I64({1}, {2})})), (std::vector<float>{4, 9}));
  const Tensor i = run1(make_node("Pow", 2), 15, {I32({4}, {2, -3, 5, -1}), I32({4}, {10, 3, -1, -3})});
  EXPECT_EQ(i.dtype(), DType::kInt32);
  EXPECT_EQ(vals<int32_t>(i), (std::vector<int32_t>{1024, -27, 0, -1}));
  EXPECT_EQ(run1(make_node("Pow", 2), 15, {I64({1}, {3}), F({1}, {2.5f})}).values<int64_t>()[0], 15);  // trunc(15.58)
  expect_error([] { run1(make_node("Pow", 2), 15, {I32({1}, {0}), I32({1}, {-1})}); }, {"(Pow)", "negative"});
  expect_error([] { run1(make_node("Pow", 2), 11, {F({1}, {2}), I64({1}, {2})}); }, {"input Y", "int64", "opset 11"});
}

TEST(Cast, FloatToIntTruncatesTowardZero) {
  Node n = make_node("Cast", 1);
  set_attr(n, "to", int64_t{6});
  const Tensor y = run1(n, 13, {F({4}, {2.7f, -2.7f, 0.5f, -0.0f})});
  EXPECT_EQ(y.dtype(), DType::kInt32);
  EXPECT_EQ(vals<int32_t>(y), (std::vector<int32_t>{2, -2, 0, 0}));
  set_attr(n, "to", int64_t{2});
  EXPECT_EQ(run1(n, 13, {F({2}, {255.9f, -0.9f})}).values<uint8_t>()[0], 255);
}

TEST(Cast, OutOfRangeFloatIsAnErrorNotGarbage) {
  Node n = make_node("Cast", 1);
  set_attr(n, "to", int64_t{3});
  expect_error([&] { run1(n, 13, {F({1}, {128.0f})}); }, {"(Cast)", "128", "int8"});
  expect_error([&] { run1(n, 13, {F({1}, {std::nanf("")})}); }, {"nan", "int8"});
  set_attr(n, "to", int64_t{7});
  expect_error([&] { run1(n, 13, {F({1}, {9.3e18f})}); }, {"int64"});
  EXPECT_EQ(run1(n, 13, {F({1}, {-9.2e18f})}).values<int64_t>()[0], static_cast<int64_t>(-9.2e18f));
}

TEST(Cast, IntegerNarrowingWrapsAndBoolRules) {
  Node n = make_node("Cast", 1);
  set_attr(n, "to", int64_t{3});
  EXPECT_EQ(vals<int8_t>(run1(n, 13, {I64({3}, {300, -129, 127})})), (std::vector<int8_t>{44, 127, 127}));
  set_attr(n, "to", int64_t{9});
  EXPECT_EQ(vals<bool>(run1(n, 13, {F({3}, {0, -0.5f, std::nanf("")})})), (std::vector<bool>{false, true, true}));
  set_attr(n, "to", int64_t{1});
  EXPECT_EQ(vals<float>(run1(n, 13, {B({2}, {1, 0})})), (std::vector<float>{1, 0}));
  EXPECT_EQ(vals<float>(run1(n, 13, {I32({1}, {16777217})})), (std::vector<float>{16777216}));  // nearest float
}

TEST(Cast, UnsupportedTargetIsNamed) {
  Node n = make_node("Cast", 1);
  set_attr(n, "to", int64_t{10});
  expect_error([&] { run1(n, 13, {F({1}, {1})}); }, {"(Cast)", "'to' = 10", "FLOAT16"});
  expect_error([&] { infer(n, 13, {info_of(DType::kFloat32, {1})}); }, {"FLOAT16"});
  set_attr(n, "to", int64_t{7});
  const InferResult r = infer(n, 13, {info_of(DType::kFloat32, {kUnknownDim, 2})});
  EXPECT_EQ(r.outputs[0].dtype, DType::kInt64);
  EXPECT_EQ(r.outputs[0].shape, (Shape{kUnknownDim, 2}));
}

TEST(Registry, OpsRejectOpsetsOutsideTheirRange) {
  expect_error([] { run1(make_node("Where", 3), 8, {B({1}, {1}), F({1}, {1}), F({1}, {1})}); }, {"(Where)", "opset 8"});
  expect_error([] { run1(make_node("Add", 2), 18, {F({1}, {1}), F({1}, {1})}); }, {"opset 18"});
}

}  // namespace
}  // namespace npuforge::model
