// Host-side conversions: the HWC order by the index formula, rounding, round trips.
#include "compiler/convert.h"

#include <gtest/gtest.h>

#include "test_util.h"

namespace npuforge::compiler {
namespace {

TEST(Convert, QuantizeRoundsTiesToEvenAndSaturates) {
  EXPECT_EQ(quantize_value(0.5f, 1), 0);
  EXPECT_EQ(quantize_value(1.5f, 1), 2);
  EXPECT_EQ(quantize_value(-2.5f, 1), -2);
  EXPECT_EQ(quantize_value(0.26f, 0.1f), 3);
  EXPECT_EQ(quantize_value(1000, 1), 127);
  EXPECT_EQ(quantize_value(-1000, 1), -128);
  EXPECT_EQ(quantize_value(std::nanf(""), 1), 0);
}

TEST(Convert, HwcStorageFollowsTheIndexFormula) {
  const QTensor t{"t", {1, 3, 2, 5}, Layout::kHWC, model::DType::kInt8, 1};
  EXPECT_EQ(t.storage_shape(), (model::Shape{2, 5, 3}));
  const model::Tensor x = testing::random_int8({1, 3, 2, 5}, 9);
  const model::Tensor s = to_storage(x, t);
  for (int c = 0; c < 3; ++c)
    for (int y = 0; y < 2; ++y)
      for (int w = 0; w < 5; ++w)
        EXPECT_EQ(s.values<int8_t>()[(y * 5 + w) * 3 + c], x.values<int8_t>()[(c * 2 + y) * 5 + w]);
  EXPECT_EQ(from_storage(s, t), x);
  const QTensor one_d{"u", {1, 3, 7}, Layout::kHWC, model::DType::kInt8, 1};
  EXPECT_EQ(one_d.storage_shape(), (model::Shape{1, 7, 3}));
}

TEST(Convert, QuantizeDequantizeRoundTrip) {
  const QTensor t{"t", {1, 2, 3, 3}, Layout::kHWC, model::DType::kInt8, 0.02f};
  const model::Tensor x = testing::random_tensor({1, 2, 3, 3}, 4, -2.5f, 2.5f);
  const model::Tensor back = dequantize(quantize(x, t), t);
  for (int64_t i = 0; i < x.numel(); ++i) {
    const float v = x.values<float>()[i];
    const float clipped = std::clamp(v, -128 * 0.02f, 127 * 0.02f);
    EXPECT_LE(std::fabs(back.values<float>()[i] - clipped), 0.01f + 1e-6f) << i;
  }
  const QTensor rm{"m", {2, 9}, Layout::kRowMajor, model::DType::kInt8, 0.02f};
  EXPECT_EQ(quantize(x.reshaped({2, 9}), rm).shape(), (model::Shape{2, 9}));
}

TEST(Convert, ShapeMismatchIsAnErrorNamingTheTensor) {
  const QTensor t{"act", {1, 2, 3, 3}, Layout::kHWC, model::DType::kInt8, 1};
  try {
    to_storage(model::Tensor(model::DType::kInt8, {1, 2, 3, 4}), t);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'act'"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace npuforge::compiler
