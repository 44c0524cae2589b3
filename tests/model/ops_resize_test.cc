// Resize and Upsample: values from the ONNX operator documentation, nearest rounding modes
// worked out by hand, cubic against the Keys kernel written out, opset variants, errors.
#include <cmath>

#include <gtest/gtest.h>

#include "tests/model/op_harness.h"

namespace npuforge::model::testing {
namespace {

// Resize-13 with scales (roi and sizes omitted).
Tensor resize_scales(const Tensor& x, std::vector<float> scales, AttrList attrs, int64_t opset = 13) {
  const Tensor s = tensor<float>({static_cast<int64_t>(scales.size())}, scales);
  return run_checked(op_node("Resize", 3, attrs), {&x, nullptr, &s}, opset)[0];
}

Tensor resize_sizes(const Tensor& x, std::vector<int64_t> sizes, AttrList attrs, const Tensor* roi = nullptr) {
  const Tensor s = tensor<int64_t>({static_cast<int64_t>(sizes.size())}, sizes);
  return run_checked(op_node("Resize", 4, attrs), {&x, roi, nullptr, &s}, 13)[0];
}

const Tensor k2x2 = tensor<float>({1, 1, 2, 2}, {1, 2, 3, 4});

TEST(Resize, LinearValuesFromTheOnnxDocs) {
  EXPECT_TRUE(near_all(resize_scales(k2x2, {1, 1, 2, 2}, {{"mode", std::string("linear")}}),
                       {1, 1.25, 1.75, 2, 1.5, 1.75, 2.25, 2.5, 2.5, 2.75, 3.25, 3.5, 3, 3.25, 3.75, 4}));
  const double t = 1.0 / 3;
  EXPECT_TRUE(near_all(resize_scales(k2x2, {1, 1, 2, 2}, {{"mode", std::string("linear")}, {"coordinate_transformation_mode", std::string("align_corners")}}),
                       {1, 1 + t, 2 - t, 2, 2 - t, 2, 2 + t, 3 - t, 2 + t, 3 - t, 3, 3 + t, 3, 3 + t, 4 - t, 4}));
  // asymmetric: x / 2 -> 0, 0.5, 1, 1.5 (clamped to 1).
  EXPECT_TRUE(near_all(resize_scales(k2x2, {1, 1, 1, 2}, {{"mode", std::string("linear")}, {"coordinate_transformation_mode", std::string("asymmetric")}}),
                       {1, 1.5, 2, 2, 3, 3.5, 4, 4}));
  // pytorch_half_pixel maps an output extent of 1 to coordinate 0.
  const Tensor row = tensor<float>({1, 1, 1, 4}, {1, 2, 3, 4});
  EXPECT_TRUE(near_all(resize_sizes(row, {1, 1, 1, 1}, {{"mode", std::string("linear")}, {"coordinate_transformation_mode", std::string("pytorch_half_pixel")}}), {1}));
  EXPECT_TRUE(near_all(resize_sizes(row, {1, 1, 1, 1}, {{"mode", std::string("linear")}}), {2.5}));  // half_pixel: 1.5
}

TEST(Resize, NearestModes) {
  const Tensor x = tensor<float>({1, 1, 1, 4}, {10, 11, 12, 13});
  auto up = [&](const char* mode) {
    return resize_scales(x, {1, 1, 1, 2}, {{"coordinate_transformation_mode", std::string("asymmetric")}, {"nearest_mode", std::string(mode)}});
  };
  // Coordinates x / 2 = 0, .5, 1, 1.5, 2, 2.5, 3, 3.5; index 4 clamps to 3.
  EXPECT_TRUE(near_all(up("round_prefer_floor"), {10, 10, 11, 11, 12, 12, 13, 13}));
  EXPECT_TRUE(near_all(up("round_prefer_ceil"), {10, 11, 11, 12, 12, 13, 13, 13}));
  EXPECT_TRUE(near_all(up("floor"), {10, 10, 11, 11, 12, 12, 13, 13}));
  EXPECT_TRUE(near_all(up("ceil"), {10, 11, 11, 12, 12, 13, 13, 13}));
  // ONNX docs (resize_upsample_scales_nearest): half_pixel, round_prefer_floor, scales 2x3.
  EXPECT_TRUE(near_all(resize_scales(k2x2, {1, 1, 2, 3}, {}), {1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4, 3, 3, 3, 4, 4, 4}));
  // Opset 10: asymmetric, truncation when upsampling, ceil when downsampling.
  const Tensor s2 = tensor<float>({4}, {1, 1, 1, 2});
  EXPECT_TRUE(near_all(run_checked(op_node("Resize", 2), {&x, &s2}, 10)[0], {10, 10, 11, 11, 12, 12, 13, 13}));
  const Tensor x8 = tensor<float>({1, 1, 1, 8}, {0, 1, 2, 3, 4, 5, 6, 7});
  const Tensor s06 = tensor<float>({4}, {1, 1, 1, 0.6f});  // 8 * 0.6 = 4.8 -> 4; x / 0.6 = 0, 1.67, 3.33, 5
  EXPECT_TRUE(near_all(run_checked(op_node("Resize", 2), {&x8, &s06}, 10)[0], {0, 2, 4, 5}));
  // Nearest copies any element type.
  const Tensor q = tensor<uint8_t>({1, 1, 2, 2}, {1, 200, 3, 255});
  EXPECT_EQ(resize_scales(q, {1, 1, 1, 2}, {{"coordinate_transformation_mode", std::string("asymmetric")}}),
            tensor<uint8_t>({1, 1, 2, 4}, {1, 1, 200, 200, 3, 3, 255, 255}));
}

TEST(Resize, SizesEqualScalesAndUpsampleEqualsOpset10) {
  Rng rng(71);
  const Tensor x = random_floats({1, 2, 3, 5}, rng);
  for (const char* mode : {"nearest", "linear"}) {
    EXPECT_EQ(resize_scales(x, {1, 1, 2, 2}, {{"mode", std::string(mode)}}), resize_sizes(x, {1, 2, 6, 10}, {{"mode", std::string(mode)}}));
    const Tensor s = tensor<float>({4}, {1, 1, 2, 1.5f});
    const Tensor r10 = run_checked(op_node("Resize", 2, {{"mode", std::string(mode)}}), {&x, &s}, 10)[0];
    EXPECT_EQ(run_checked(op_node("Upsample", 2, {{"mode", std::string(mode)}}), {&x, &s}, 9)[0], r10);
    EXPECT_EQ(run_checked(op_node("Upsample", 1, {{"mode", std::string(mode)}, {"scales", std::vector<float>{1, 1, 2, 1.5f}}}), {&x}, 7)[0], r10);
    EXPECT_EQ(r10.shape(), (Shape{1, 2, 6, 7}));  // floor(5 * 1.5)
  }
}

// Keys cubic kernel written out term by term.
double keys(double t, double a) {
  t = std::fabs(t);
  if (t <= 1) return (a + 2) * t * t * t - (a + 3) * t * t + 1;
  if (t < 2) return a * t * t * t - 5 * a * t * t + 8 * a * t - 4 * a;
  return 0;
}

TEST(Resize, CubicMatchesTheKeysKernel) {
  const std::vector<float> v = {0.5f, -1, 2, 3.5f, 0, 1};
  const Tensor x = tensor<float>({1, 1, 1, 6}, v);
  for (const bool exclude : {false, true}) {
    const double a = -0.5;
    const Tensor y = resize_scales(x, {1, 1, 1, 2}, {{"mode", std::string("cubic")}, {"cubic_coeff_a", -0.5f}, {"exclude_outside", int64_t{exclude}}});
    std::vector<double> e;
    for (int64_t o = 0; o < 12; ++o) {
      const double c = (o + 0.5) / 2 - 0.5, base = std::floor(c);
      double sum = 0, wsum = 0;
      for (int k = -1; k <= 2; ++k) {
        const int64_t i = static_cast<int64_t>(base) + k;
        double w = keys(c - static_cast<double>(i), a);
        if (exclude && (i < 0 || i > 5)) w = 0;
        sum += w * v[static_cast<size_t>(std::clamp<int64_t>(i, 0, 5))];
        wsum += w;
      }
      e.push_back(exclude ? sum / wsum : sum);
    }
    EXPECT_TRUE(near_all(y, e, 1e-5, 1e-6)) << "exclude_outside " << exclude;
  }
}

TEST(Resize, TfCropAndResizeExtrapolates) {
  const Tensor x = tensor<float>({1, 1, 1, 4}, {1, 2, 4, 8});
  const Tensor roi = tensor<float>({8}, {0, 0, 0, -0.5f, 1, 1, 1, 1.5f});
  // Coordinates -1.5 + 2x: -1.5 (outside), 0.5, 2.5, 4.5 (outside).
  const Tensor y = resize_sizes(x, {1, 1, 1, 4}, {{"mode", std::string("linear")}, {"coordinate_transformation_mode", std::string("tf_crop_and_resize")},
                                                  {"extrapolation_value", 10.0f}}, &roi);
  EXPECT_TRUE(near_all(y, {10, 1.5, 6, 10}));
}

TEST(Resize, InferAndErrors) {
  const Tensor s = tensor<float>({4}, {1, 1, 2, 2});
  const Node node = op_node("Resize", 3);
  EXPECT_EQ(infer_op(node, {known(DType::kFloat32, {1, 3, kUnknownDim, 8}), std::nullopt, info_of(s)}, 13, {nullptr, nullptr, &s}).outputs[0].shape,
            (Shape{1, 3, kUnknownDim, 16}));
  EXPECT_EQ(infer_op(node, {known(DType::kFloat32, {1, 3, 4, 8}), std::nullopt, info_of(s)}, 13).outputs[0].shape,
            (Shape{kUnknownDim, kUnknownDim, kUnknownDim, kUnknownDim}));
  const Tensor sizes = tensor<int64_t>({4}, {1, 1, 4, 4});
  EXPECT_TRUE(fails_with([&] { run_op(op_node("Resize", 4), {&k2x2, nullptr, &s, &sizes}, 13); }, "scales and sizes are both given"));
  EXPECT_TRUE(fails_with([&] { run_op(op_node("Resize", 1), {&k2x2}, 13); }, "neither scales nor sizes"));
  EXPECT_TRUE(fails_with([&] { run_op(op_node("Resize", 2, {{"mode", std::string("cubic")}}), {&k2x2, &s}, 10); }, "needs Resize from opset 11"));
  EXPECT_TRUE(fails_with([&] { resize_scales(k2x2, {1, 1, 2, 2}, {{"mode", std::string("area")}}); }, "mode 'area' is not supported"));
  EXPECT_TRUE(fails_with([&] { resize_scales(k2x2, {1, 2, 2}, {}); }, "scales has 3 values for a rank-4 input"));
  EXPECT_TRUE(fails_with([&] { resize_scales(k2x2, {1, 1, 0, 2}, {}); }, "must be positive"));
  const Tensor q = tensor<uint8_t>({1, 1, 2, 2}, {1, 2, 3, 4});
  EXPECT_TRUE(fails_with([&] { resize_scales(q, {1, 1, 2, 2}, {{"mode", std::string("linear")}}); }, "type uint8, expected float32"));
}

}  // namespace
}  // namespace npuforge::model::testing
