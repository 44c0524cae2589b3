// ConvInteger and QLinearConv: exact integer results against naive loops; rounding and
// saturation of the requantization; error cases.
#include <cmath>

#include <gtest/gtest.h>

#include "tests/model/conv_reference.h"
#include "tests/model/op_harness.h"

namespace npuforge::model::testing {
namespace {

// Reads element i of x or w minus its zero point (per output channel for w when zps has M values).
struct Centred {
  const Tensor* x;
  int64_t x_zp;
  const Tensor* w;
  std::vector<int64_t> w_zp;
  double operator()(const Tensor& t, int64_t i) const {
    if (&t == x) return static_cast<double>(t.int_at(i) - x_zp);
    const int64_t per_channel = t.numel() / t.shape()[0];
    const int64_t zp = w_zp.size() == 1 ? w_zp[0] : w_zp[static_cast<size_t>(i / per_channel)];
    return static_cast<double>(t.int_at(i) - zp);
  }
};

Tensor zp_tensor(DType t, const std::vector<int64_t>& values, bool as_vector) {
  const Shape shape = as_vector ? Shape{static_cast<int64_t>(values.size())} : Shape{};
  if (t == DType::kUInt8) {
    std::vector<uint8_t> v(values.begin(), values.end());
    return tensor<uint8_t>(shape, v);
  }
  std::vector<int8_t> v(values.begin(), values.end());
  return tensor<int8_t>(shape, v);
}

template <class W>
void check_conv_integer(Rng& rng, bool per_channel_w_zp, int64_t group, std::vector<int64_t> pads) {
  const Tensor x = random_ints<uint8_t>({2, 4, 7, 6}, rng, 0, 255);
  const Tensor w = std::is_same_v<W, int8_t> ? random_ints<int8_t>({8, 4 / group, 3, 3}, rng, -128, 127)
                                             : random_ints<uint8_t>({8, 4 / group, 3, 3}, rng, 0, 255);
  std::vector<int64_t> wz;
  for (int i = 0; i < (per_channel_w_zp ? 8 : 1); ++i)
    wz.push_back(std::is_same_v<W, int8_t> ? rng.range(-20, 20) : rng.range(100, 150));
  const Tensor xz = zp_tensor(DType::kUInt8, {131}, false);
  const Tensor wzt = zp_tensor(w.dtype(), wz, per_channel_w_zp);
  const Node node = op_node("ConvInteger", 4, {{"group", group}, {"pads", pads}, {"strides", std::vector<int64_t>{1, 2}}});
  const std::vector<Tensor> y = run_checked(node, {&x, &w, &xz, &wzt});
  Shape shape;
  const RefConvAttrs attrs{{1, 2}, {1, 1}, {pads[0], pads[1]}, {pads[2], pads[3]}, group};
  const std::vector<double> expected = ref_conv(x, w, attrs, &shape, Centred{&x, 131, &w, wz});
  ASSERT_EQ(y[0].dtype(), DType::kInt32);
  ASSERT_EQ(y[0].shape(), shape);
  EXPECT_TRUE(near_all(y[0], expected, 0, 0));
}

TEST(ConvInteger, ExactAgainstNaiveLoops) {
  Rng rng(21);
  check_conv_integer<int8_t>(rng, false, 1, {1, 1, 1, 1});
  check_conv_integer<int8_t>(rng, true, 2, {0, 1, 2, 0});
  check_conv_integer<uint8_t>(rng, false, 4, {1, 1, 1, 1});
  check_conv_integer<uint8_t>(rng, true, 1, {0, 0, 0, 0});
}

TEST(ConvInteger, ZeroPointsDefaultToZero) {
  Rng rng(22);
  const Tensor x = random_ints<int8_t>({1, 3, 5, 5}, rng, -128, 127);
  const Tensor w = random_ints<int8_t>({2, 3, 2, 2}, rng, -128, 127);
  const std::vector<Tensor> y = run_checked(op_node("ConvInteger", 2), {&x, &w});
  Shape shape;
  const std::vector<double> expected = ref_conv(x, w, {{1, 1}, {1, 1}, {0, 0}, {0, 0}, 1}, &shape, real_value);
  EXPECT_TRUE(near_all(y[0], expected, 0, 0));
}

TEST(ConvInteger, BadInputsAreClearErrors) {
  Rng rng(23);
  const Tensor x = random_ints<uint8_t>({1, 2, 4, 4}, rng, 0, 255);
  const Tensor w = random_ints<int8_t>({3, 2, 3, 3}, rng, -9, 9);
  const Tensor xf = random_floats({1, 2, 4, 4}, rng);
  EXPECT_TRUE(fails_with([&] { run_op(op_node("ConvInteger", 2), {&xf, &w}); }, "expected uint8 or int8"));
  const Tensor xz2 = zp_tensor(DType::kUInt8, {1, 2}, true);
  EXPECT_TRUE(fails_with([&] { run_op(op_node("ConvInteger", 3), {&x, &w, &xz2}); }, "expected a scalar"));
  const Tensor wz_bad = zp_tensor(DType::kInt8, {1, 2}, true);
  const Tensor xz = zp_tensor(DType::kUInt8, {1}, false);
  EXPECT_TRUE(fails_with([&] { run_op(op_node("ConvInteger", 4), {&x, &w, &xz, &wz_bad}); }, "expected a scalar or 3 values"));
  const Tensor wz_type = zp_tensor(DType::kUInt8, {1}, false);
  EXPECT_TRUE(fails_with([&] { run_op(op_node("ConvInteger", 4), {&x, &w, &xz, &wz_type}); }, "has type uint8, expected int8"));
  EXPECT_TRUE(fails_with([&] { run_op(op_node("ConvInteger", 2), {&x, &w}, 9); }, "opset 9 not supported"));
}

// ---- QLinearConv ----

struct QConvSetup {
  Tensor x, xs, xz, w, ws, wz, ys, yz, bias;
};

std::vector<Tensor> run_qconv(const QConvSetup& q, bool with_bias, AttrList attrs = {}) {
  std::vector<const Tensor*> in{&q.x, &q.xs, &q.xz, &q.w, &q.ws, &q.wz, &q.ys, &q.yz};
  if (with_bias) in.push_back(&q.bias);
  return run_checked(op_node("QLinearConv", in.size(), attrs), in);
}

TEST(QLinearConv, PerChannelScalesAgainstNaiveLoops) {
  Rng rng(24);
  for (DType out_type : {DType::kUInt8, DType::kInt8}) {
    QConvSetup q;
    q.x = random_ints<uint8_t>({1, 3, 6, 6}, rng, 0, 255);
    q.xs = Tensor::scalar(0.02f);
    q.xz = zp_tensor(DType::kUInt8, {128}, false);
    q.w = random_ints<int8_t>({4, 3, 3, 3}, rng, -127, 127);
    q.ws = tensor<float>({4}, {0.003f, 0.0045f, 0.001f, 0.006f});
    q.wz = zp_tensor(DType::kInt8, {0, 0, 0, 0}, true);
    q.ys = Tensor::scalar(0.05f);
    q.yz = zp_tensor(out_type, {out_type == DType::kUInt8 ? 120 : -3}, false);
    q.bias = tensor<int32_t>({4}, {1000, -2000, 0, 35});
    const Tensor y = run_qconv(q, true, {{"pads", std::vector<int64_t>{1, 1, 1, 1}}})[0];
    Shape shape;
    const std::vector<double> acc = ref_conv(q.x, q.w, {{1, 1}, {1, 1}, {1, 1}, {1, 1}, 1}, &shape,
                                             Centred{&q.x, 128, &q.w, {0}}, {1000, -2000, 0, 35});
    ASSERT_EQ(y.shape(), shape);
    ASSERT_EQ(y.dtype(), out_type);
    const double lo = out_type == DType::kUInt8 ? 0 : -128, hi = out_type == DType::kUInt8 ? 255 : 127;
    int saturated = 0;
    for (int64_t i = 0; i < y.numel(); ++i) {
      const int64_t m = i / 36 % 4;
      const float mult = 0.02f * q.ws.values<float>()[static_cast<size_t>(m)] / 0.05f;
      const double v = std::nearbyint(static_cast<float>(acc[static_cast<size_t>(i)]) * mult) + q.yz.int_at(0);
      const double expected = std::min(hi, std::max(lo, v));
      saturated += expected == lo || expected == hi;
      ASSERT_EQ(y.real_at(i), expected) << "element " << i;
    }
    EXPECT_LT(saturated, y.numel() / 2);  // the scales keep most values inside the range
  }
}

// Multiplier 0.5: accumulators +-5 and +-7 land on ties, which round to even.
TEST(QLinearConv, RoundsHalfToEvenAndSaturates) {
  QConvSetup q;
  q.x = tensor<uint8_t>({1, 1, 1, 6}, {15, 17, 5, 3, 255, 0});
  q.xs = Tensor::scalar(1.0f);
  q.xz = zp_tensor(DType::kUInt8, {10}, false);
  q.w = tensor<int8_t>({1, 1, 1, 1}, {1});
  q.ws = Tensor::scalar(1.0f);
  q.wz = zp_tensor(DType::kInt8, {0}, false);
  q.ys = Tensor::scalar(2.0f);
  q.yz = zp_tensor(DType::kUInt8, {100}, false);
  // (x - 10) / 2 = 2.5, 3.5, -2.5, -3.5, 122.5, -5 round to 2, 4, -2, -4, 122, -5
  EXPECT_EQ(run_qconv(q, false)[0], tensor<uint8_t>({1, 1, 1, 6}, {102, 104, 98, 96, 222, 95}));
  q.yz = zp_tensor(DType::kUInt8, {200}, false);
  EXPECT_EQ(run_qconv(q, false)[0], tensor<uint8_t>({1, 1, 1, 6}, {202, 204, 198, 196, 255, 195}));
  q.yz = zp_tensor(DType::kInt8, {-126}, false);
  EXPECT_EQ(run_qconv(q, false)[0], tensor<int8_t>({1, 1, 1, 6}, {-124, -122, -128, -128, -4, -128}));
}

TEST(QLinearConv, BadInputsAreClearErrors) {
  QConvSetup q;
  q.x = tensor<uint8_t>({1, 1, 2, 2}, {1, 2, 3, 4});
  q.xs = Tensor::scalar(1.0f);
  q.xz = zp_tensor(DType::kUInt8, {0}, false);
  q.w = tensor<int8_t>({2, 1, 1, 1}, {1, 2});
  q.ws = tensor<float>({3}, {1, 1, 1});
  q.wz = zp_tensor(DType::kInt8, {0}, false);
  q.ys = Tensor::scalar(1.0f);
  q.yz = zp_tensor(DType::kUInt8, {0}, false);
  q.bias = tensor<int32_t>({2}, {0, 0});
  EXPECT_TRUE(fails_with([&] { run_qconv(q, false); }, "w scale) has shape 3, expected a scalar or 2 values"));
  q.ws = tensor<float>({2}, {1, -1});
  EXPECT_TRUE(fails_with([&] { run_qconv(q, false); }, "is not a positive finite number"));
  q.ws = tensor<float>({2}, {1, 1});
  q.bias = tensor<float>({2}, {0, 0});
  EXPECT_TRUE(fails_with([&] { run_qconv(q, true); }, "input 8 has type float32, expected int32"));
  q.bias = tensor<int32_t>({2}, {0, 0});
  q.xz = zp_tensor(DType::kInt8, {0}, false);
  EXPECT_TRUE(fails_with([&] { run_qconv(q, true); }, "has type int8, expected uint8"));
}

}  // namespace
}  // namespace npuforge::model::testing
