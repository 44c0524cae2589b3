// Quantization ops: rounding (half to even), saturation, per-axis parameters, opset rules,
// DynamicQuantizeLinear, the com.microsoft QLinearAdd/QLinearMul.
#include <cmath>

#include <gtest/gtest.h>

#include "ops_test_util.h"
#include "util/rng.h"

namespace npuforge::model {
namespace {

using namespace testing;

// Round half to even written out (not via the current rounding mode).
double round_half_even(double v) {
  const double f = std::floor(v);
  const double frac = v - f;
  if (frac < 0.5) return f;
  if (frac > 0.5) return f + 1;
  return std::fmod(f, 2.0) == 0 ? f : f + 1;
}

TEST(QuantizeLinear, RoundsHalfToEvenAndSaturates) {
  const Node n = make_node("QuantizeLinear", 3);
  const Tensor y = run1(n, 13, {F({7}, {0, 2, 3, 5, 7, 1000, -254}), F({}, {2}), U8({}, {128})});
  EXPECT_EQ(y.dtype(), DType::kUInt8);
  EXPECT_EQ(vals<uint8_t>(y), (std::vector<uint8_t>{128, 129, 130, 130, 132, 255, 1}));
  const Tensor s = run1(n, 13, {F({4}, {-128.5f, 126.5f, -1000, 0.5f}), F({}, {1}), I8({}, {-1})});
  EXPECT_EQ(vals<int8_t>(s), (std::vector<int8_t>{-128, 125, -128, -1}));
  // No zero point: uint8 with zero point 0.
  EXPECT_EQ(vals<uint8_t>(run1(make_node("QuantizeLinear", 2), 10, {F({3}, {-3, 1.5f, 300}), F({}, {1})})),
            (std::vector<uint8_t>{0, 2, 255}));
}

TEST(QuantizeLinear, RandomValuesMatchTheFormula) {
  Rng rng(5);
  const Node n = make_node("QuantizeLinear", 3);
  for (int k = 0; k < 200; ++k) {
    Tensor x(DType::kFloat32, {64});
    for (float& v : x.values<float>()) v = static_cast<float>(rng.range(-4000, 4000)) / 8.0f;  // many exact ties
    const float scale = static_cast<float>(rng.range(1, 64)) / 16.0f;
    const int8_t zp = static_cast<int8_t>(rng.range(-128, 127));
    const Tensor y = run1(n, 13, {x, F({}, {scale}), I8({}, {zp})});
    for (size_t i = 0; i < 64; ++i) {
      const float q = x.values<float>()[i] / scale;  // float32 division, as the spec's x / y_scale
      const double want = std::clamp(round_half_even(q) + zp, -128.0, 127.0);
      ASSERT_EQ(y.values<int8_t>()[i], static_cast<int8_t>(want)) << x.values<float>()[i] << " / " << scale;
    }
  }
}

TEST(QuantizeLinear, PerAxisFromOpset13) {
  Node n = make_node("QuantizeLinear", 3);
  const Tensor x = F({2, 3}, {1, 2, 4, -1, -2, -4});
  const Tensor y = run1(n, 13, {x, F({3}, {1, 2, 4}), U8({3}, {0, 1, 2})});
  EXPECT_EQ(vals<uint8_t>(y), (std::vector<uint8_t>{1, 2, 3, 0, 0, 1}));
  set_attr(n, "axis", int64_t{0});
  const Tensor z = run1(n, 13, {x, F({2}, {1, 2}), I8({2}, {0, 10})});
  EXPECT_EQ(vals<int8_t>(z), (std::vector<int8_t>{1, 2, 4, 10, 9, 8}));
  expect_error([&] { run1(n, 10, {x, F({2}, {1, 2}), I8({2}, {0, 10})}); }, {"(QuantizeLinear)", "before opset 13"});
  expect_error([&] { run1(n, 13, {x, F({3}, {1, 2, 3}), I8({3}, {0, 0, 0})}); }, {"3 scales for axis 0 of size 2"});
  expect_error([&] { run1(n, 13, {x, F({2}, {1, 2}), I8({1}, {0})}); }, {"zero point of shape 1"});
}

TEST(QuantizeLinear, BadValuesAreErrors) {
  const Node n = make_node("QuantizeLinear", 3);
  expect_error([&] { run1(n, 13, {F({1}, {std::nanf("")}), F({}, {1}), U8({}, {0})}); }, {"NaN"});
  expect_error([&] { run1(n, 13, {F({1}, {1}), F({}, {0}), U8({}, {0})}); }, {"scale 0"});
  expect_error([&] { run1(n, 13, {F({1}, {1}), F({}, {1}), I32({}, {0})}); }, {"y_zero_point", "int32"});
  const InferResult r = infer(n, 13, {info_of(DType::kFloat32, {kUnknownDim}), info_of(DType::kFloat32, {}),
                                      info_of(DType::kInt8, {})});
  EXPECT_EQ(r.outputs[0].dtype, DType::kInt8);
  EXPECT_EQ(infer(make_node("QuantizeLinear", 2), 13, {info_of(DType::kFloat32, {1}), info_of(DType::kFloat32, {})})
                .outputs[0].dtype,
            DType::kUInt8);
}

TEST(DequantizeLinear, PerTensorPerAxisAndInt32) {
  const Node n = make_node("DequantizeLinear", 3);
  EXPECT_EQ(vals<float>(run1(n, 13, {U8({3}, {0, 128, 255}), F({}, {0.5f}), U8({}, {128})})),
            (std::vector<float>{-64, 0, 63.5f}));
  EXPECT_EQ(vals<float>(run1(make_node("DequantizeLinear", 2), 10, {I32({2}, {-1000, 5}), F({}, {0.25f})})),
            (std::vector<float>{-250, 1.25f}));
  const Tensor y = run1(n, 13, {I8({2, 2}, {-128, 127, 0, 10}), F({2}, {1, 0.5f}), I8({2}, {0, 10})});
  EXPECT_EQ(vals<float>(y), (std::vector<float>{-128, 58.5f, 0, 0}));
  expect_error([&] { run1(n, 13, {I8({1}, {1}), F({}, {1}), U8({}, {0})}); }, {"(DequantizeLinear)", "same element type"});
  expect_error([&] { run1(n, 13, {F({1}, {1}), F({}, {1}), std::nullopt}); }, {"float32"});
  EXPECT_EQ(infer(n, 13, {info_of(DType::kUInt8, {3}), info_of(DType::kFloat32, {}), std::nullopt}).outputs[0].dtype,
            DType::kFloat32);
}

TEST(DynamicQuantizeLinear, RangeIncludesZero) {
  const Node n = make_node("DynamicQuantizeLinear", 1, 3);
  // The ONNX operator's example: range [-3, 2].
  std::vector<Tensor> out = run(n, 13, {F({6}, {0, 2, -3, -2.5f, 1.34f, 0.5f})});
  EXPECT_FLOAT_EQ(out.at(1).values<float>()[0], 5.0f / 255.0f);
  EXPECT_EQ(out.at(2).values<uint8_t>()[0], 153);
  EXPECT_EQ(vals<uint8_t>(out.at(0)), (std::vector<uint8_t>{153, 255, 0, 26, 221, 179}));
  out = run(n, 13, {F({3}, {1, 2, 4})});  // all positive: zero point 0
  EXPECT_EQ(out.at(2).values<uint8_t>()[0], 0);
  // float32(4 / 255) is a little above 4 / 255: 2 / scale = 127.49999, not the tie 127.5.
  EXPECT_EQ(vals<uint8_t>(out.at(0)), (std::vector<uint8_t>{64, 127, 255}));
  out = run(n, 13, {F({2}, {0, 0})});  // no range: scale 1 as onnxruntime
  EXPECT_EQ(out.at(1).values<float>()[0], 1.0f);
  EXPECT_EQ(vals<uint8_t>(out.at(0)), (std::vector<uint8_t>{0, 0}));
}

TEST(QLinearAdd, DequantizeAddQuantize) {
  const Node n = make_node("QLinearAdd", 8, 1, "com.microsoft");
  const Tensor y = run1(n, 13, {U8({2}, {10, 200}), F({}, {0.5f}), U8({}, {0}), U8({2}, {20, 100}), F({}, {0.25f}),
                                U8({}, {100}), F({}, {1}), U8({}, {10})});
  EXPECT_EQ(vals<uint8_t>(y), (std::vector<uint8_t>{0, 110}));  // -15 + 10 saturates; 100 + 10
  // int8, B broadcast, C zero point omitted; 2.5 rounds to 2.
  const Tensor z = run1(n, 13, {I8({2, 1}, {5, -5}), F({}, {1}), std::nullopt, I8({2}, {0, 2}), F({}, {0.25f}),
                                std::nullopt, F({}, {2}), std::nullopt});
  EXPECT_EQ(z.shape(), (Shape{2, 2}));
  EXPECT_EQ(vals<int8_t>(z), (std::vector<int8_t>{2, 3, -2, -2}));
  expect_error([&] { run1(n, 13, {U8({1}, {1}), F({}, {1}), std::nullopt, I8({1}, {1}), F({}, {1}), std::nullopt, F({}, {1})}); },
               {"(QLinearAdd)", "same element type"});
}

TEST(QLinearMul, DequantizeMultiplyQuantize) {
  const Node n = make_node("QLinearMul", 8, 1, "com.microsoft");
  const Tensor y = run1(n, 13, {U8({3}, {130, 140, 0}), F({}, {0.1f}), U8({}, {128}), U8({}, {138}), F({}, {0.5f}),
                                U8({}, {128}), F({}, {0.05f}), U8({}, {128})});
  // (0.2 * 5) / 0.05 = 20, (1.2 * 5) / 0.05 = 120 (+128 saturates), (-12.8 * 5) / 0.05 = -1280.
  EXPECT_EQ(vals<uint8_t>(y), (std::vector<uint8_t>{148, 248, 0}));
  Node plain = n;
  plain.domain = "";
  expect_error([&] { run1(plain, 13, {}); }, {"(QLinearMul)", "not supported"});
}

}  // namespace
}  // namespace npuforge::model
