// Unary maths and activations against the spec's formulas evaluated in double.
#include <cmath>
#include <limits>

#include <gtest/gtest.h>

#include "ops_test_util.h"

namespace npuforge::model {
namespace {

using namespace testing;

const std::vector<float> kSamples = {-100.0f, -3.5f, -1.0f, -0.25f, 0.0f, 0.25f, 1.0f, 2.5f, 3.0f, 100.0f};

// Runs a float op on kSamples and compares with `ref` (computed in double).
template <class Ref>
void expect_matches(const Node& n, int64_t opset, Ref ref) {
  const Tensor y = run1(n, opset, {F({static_cast<int64_t>(kSamples.size())}, kSamples)});
  ASSERT_EQ(y.dtype(), DType::kFloat32);
  for (size_t i = 0; i < kSamples.size(); ++i) {
    const double want = ref(static_cast<double>(kSamples[i]));
    const double got = y.values<float>()[i];
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(got)) << n.op_type << "(" << kSamples[i] << ")";
    } else if (std::isinf(static_cast<float>(want))) {  // overflows float32
      EXPECT_EQ(got, static_cast<float>(want)) << n.op_type << "(" << kSamples[i] << ")";
    } else {
      EXPECT_NEAR(got, want, 1e-6 * std::max(1.0, std::abs(want))) << n.op_type << "(" << kSamples[i] << ")";
    }
  }
}

TEST(Unary, MathsFunctions) {
  expect_matches(make_node("Sqrt", 1), 13, [](double x) { return std::sqrt(x); });
  expect_matches(make_node("Exp", 1), 13, [](double x) { return std::exp(x); });
  expect_matches(make_node("Log", 1), 13, [](double x) { return std::log(x); });
  expect_matches(make_node("Reciprocal", 1), 13, [](double x) { return 1.0 / x; });
  expect_matches(make_node("Floor", 1), 13, [](double x) { return std::floor(x); });
  expect_matches(make_node("Ceil", 1), 13, [](double x) { return std::ceil(x); });
  expect_matches(make_node("Tanh", 1), 13, [](double x) { return std::tanh(x); });
  expect_matches(make_node("Erf", 1), 13, [](double x) { return std::erf(x); });
  expect_matches(make_node("Neg", 1), 13, [](double x) { return -x; });
  expect_matches(make_node("Abs", 1), 13, [](double x) { return std::abs(x); });
}

TEST(Unary, Activations) {
  expect_matches(make_node("Relu", 1), 14, [](double x) { return x > 0 ? x : 0.0; });
  expect_matches(make_node("Sigmoid", 1), 13, [](double x) { return 1.0 / (1.0 + std::exp(-x)); });
  expect_matches(make_node("LeakyRelu", 1), 16, [](double x) { return x < 0 ? 0.01 * x : x; });
  expect_matches(make_node("HardSigmoid", 1), 7, [](double x) { return std::clamp(0.2 * x + 0.5, 0.0, 1.0); });
  expect_matches(make_node("HardSwish", 1), 14, [](double x) { return x * std::clamp(x / 6 + 0.5, 0.0, 1.0); });
  expect_matches(make_node("Elu", 1), 7, [](double x) { return x < 0 ? std::exp(x) - 1 : x; });
  expect_matches(make_node("Selu", 1), 7, [](double x) {
    const double a = 1.67326319217681884765625, g = 1.05070102214813232421875;
    return x <= 0 ? g * (a * std::exp(x) - a) : g * x;
  });
  expect_matches(make_node("Softplus", 1), 13, [](double x) { return std::log(std::exp(x) + 1); });
}

TEST(Unary, AttributesOverrideDefaults) {
  Node n = make_node("LeakyRelu", 1);
  set_attr(n, "alpha", 0.5f);
  expect_matches(n, 16, [](double x) { return x < 0 ? 0.5 * x : x; });
  n = make_node("HardSigmoid", 1);
  set_attr(n, "alpha", 0.5f);
  set_attr(n, "beta", 0.25f);
  expect_matches(n, 7, [](double x) { return std::clamp(0.5 * x + 0.25, 0.0, 1.0); });
  n = make_node("Elu", 1);
  set_attr(n, "alpha", 2.0f);
  expect_matches(n, 7, [](double x) { return x < 0 ? 2 * (std::exp(x) - 1) : x; });
}

TEST(Unary, IntegerReluNegAbs) {
  EXPECT_EQ(vals<int32_t>(run1(make_node("Relu", 1), 14, {I32({3}, {-4, 0, 9})})), (std::vector<int32_t>{0, 0, 9}));
  expect_error([] { run1(make_node("Relu", 1), 13, {I32({1}, {1})}); }, {"(Relu)", "int32", "opset 13"});
  EXPECT_EQ(vals<int8_t>(run1(make_node("Neg", 1), 13, {I8({3}, {-128, 5, 0})})), (std::vector<int8_t>{-128, -5, 0}));
  EXPECT_EQ(vals<int64_t>(run1(make_node("Abs", 1), 13, {I64({2}, {-7, 3})})), (std::vector<int64_t>{7, 3}));
  EXPECT_EQ(vals<uint8_t>(run1(make_node("Abs", 1), 13, {U8({1}, {200})})), (std::vector<uint8_t>{200}));
  expect_error([] { run1(make_node("Neg", 1), 13, {U8({1}, {1})}); }, {"(Neg)", "uint8"});
  expect_error([] { run1(make_node("Sqrt", 1), 13, {I32({1}, {4})}); }, {"(Sqrt)", "int32"});
}

TEST(Unary, InferKeepsInputInfo) {
  ValueInfo in = known(DType::kFloat32, {kUnknownDim, 8});
  in.dim_names = {"batch", ""};
  const InferResult r = infer(make_node("Sigmoid", 1), 13, {InferInput{in, std::nullopt}});
  EXPECT_EQ(r.outputs[0].shape, in.shape);
  EXPECT_EQ(r.outputs[0].dim_names, in.dim_names);
}

TEST(PRelu, SlopeBroadcastsOntoX) {
  const Tensor y = run1(make_node("PRelu", 2), 16, {F({2, 3}, {-1, 2, -3, 4, -5, 6}), F({3}, {0.5f, 0.25f, 0.125f})});
  EXPECT_EQ(vals<float>(y), (std::vector<float>{-0.5f, 2, -0.375f, 4, -1.25f, 6}));
  const Tensor i = run1(make_node("PRelu", 2), 16, {I64({2}, {-3, 3}), I64({}, {2})});
  EXPECT_EQ(vals<int64_t>(i), (std::vector<int64_t>{-6, 3}));
  expect_error([] { run1(make_node("PRelu", 2), 16, {F({3}, {1, 2, 3}), F({2, 3}, {1, 2, 3, 4, 5, 6})}); },
               {"(PRelu)", "does not broadcast onto X"});
}

TEST(Clip, BoundsAsAttributesBeforeOpset11) {
  Node n = make_node("Clip", 1);
  set_attr(n, "min", -1.0f);
  set_attr(n, "max", 2.0f);
  EXPECT_EQ(vals<float>(run1(n, 6 + 4, {F({4}, {-5, 0.5f, 3, 2})})), (std::vector<float>{-1, 0.5f, 2, 2}));
  const Node open = make_node("Clip", 1);  // no bounds: the identity
  EXPECT_EQ(vals<float>(run1(open, 7, {F({2}, {-1e30f, 1e30f})})), (std::vector<float>{-1e30f, 1e30f}));
}

TEST(Clip, BoundsAsOptionalInputsFrom11) {
  const Node n = make_node("Clip", 3);
  EXPECT_EQ(vals<float>(run1(n, 13, {F({3}, {-5, 0.5f, 3}), F({}, {-1}), F({}, {1})})), (std::vector<float>{-1, 0.5f, 1}));
  EXPECT_EQ(vals<float>(run1(n, 13, {F({3}, {-5, 0.5f, 3}), std::nullopt, F({}, {0})})), (std::vector<float>{-5, 0, 0}));
  // min > max: every value becomes max.
  EXPECT_EQ(vals<float>(run1(n, 13, {F({2}, {-5, 5}), F({}, {2}), F({}, {1})})), (std::vector<float>{1, 1}));
  EXPECT_EQ(vals<int8_t>(run1(n, 12, {I8({3}, {-100, 0, 100}), I8({}, {-10}), I8({}, {10})})),
            (std::vector<int8_t>{-10, 0, 10}));
  expect_error([&] { run1(n, 11, {I8({1}, {1}), std::nullopt, std::nullopt}); }, {"(Clip)", "int8", "opset 11"});
  expect_error([&] { run1(n, 13, {F({1}, {1}), F({2}, {0, 1}), std::nullopt}); }, {"min must be a scalar"});
}

}  // namespace
}  // namespace npuforge::model
