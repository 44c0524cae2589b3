// Conv and ConvTranspose against naive loops; auto_pad, shape inference and error cases.
#include <gtest/gtest.h>

#include "tests/model/conv_reference.h"
#include "tests/model/op_harness.h"

namespace npuforge::model::testing {
namespace {

struct ConvCase {
  const char* name;
  Shape x, w;  // x [N, C, spatial...], w [M, C/group, k...]
  int64_t group;
  std::vector<int64_t> strides, dilations, pads;  // pads: begin..., end...
  bool bias;
};

Node conv_node(const ConvCase& c, size_t inputs) {
  return op_node("Conv", inputs,
                 {{"group", c.group}, {"strides", c.strides}, {"dilations", c.dilations}, {"pads", c.pads}});
}

RefConvAttrs ref_attrs(const ConvCase& c) {
  const size_t r = c.strides.size();
  return {c.strides, c.dilations, std::vector<int64_t>(c.pads.begin(), c.pads.begin() + r),
          std::vector<int64_t>(c.pads.begin() + r, c.pads.end()), c.group};
}

TEST(Conv, MatchesNaiveLoops) {
  const std::vector<ConvCase> cases = {
      {"plain 3x3", {1, 3, 7, 6}, {4, 3, 3, 3}, 1, {1, 1}, {1, 1}, {0, 0, 0, 0}, false},
      {"padded strided", {2, 3, 9, 8}, {5, 3, 3, 3}, 1, {2, 2}, {1, 1}, {1, 1, 1, 1}, true},
      {"asymmetric pads, stride 3x2", {1, 2, 10, 7}, {3, 2, 3, 2}, 1, {3, 2}, {1, 1}, {0, 2, 1, 0}, true},
      {"dilated", {1, 4, 11, 11}, {6, 4, 3, 3}, 1, {1, 1}, {2, 3}, {2, 1, 2, 3}, true},
      {"pointwise 1x1", {2, 16, 5, 6}, {8, 16, 1, 1}, 1, {1, 1}, {1, 1}, {0, 0, 0, 0}, true},
      {"1x1 stride 2", {1, 6, 7, 7}, {4, 6, 1, 1}, 1, {2, 2}, {1, 1}, {0, 0, 0, 0}, false},
      {"grouped", {1, 8, 6, 6}, {6, 4, 3, 3}, 2, {1, 1}, {1, 1}, {1, 1, 1, 1}, true},
      {"depthwise", {2, 5, 9, 7}, {5, 1, 3, 3}, 5, {1, 1}, {1, 1}, {1, 1, 1, 1}, true},
      {"depthwise strided", {1, 4, 9, 9}, {4, 1, 3, 3}, 4, {2, 2}, {1, 1}, {1, 0, 1, 0}, false},
      {"depthwise multiplier 2", {1, 3, 8, 8}, {6, 1, 5, 5}, 3, {1, 2}, {2, 1}, {2, 2, 2, 2}, true},
      {"depthwise pads larger than kernel", {1, 2, 4, 4}, {2, 1, 2, 2}, 2, {1, 1}, {1, 1}, {3, 3, 3, 3}, false},
      // Crosses the GEMM blocks: M > 64, K = 27*12 > 256, N = 24*24 > 512.
      {"large", {1, 12, 26, 26}, {70, 12, 3, 3}, 1, {1, 1}, {1, 1}, {0, 0, 0, 0}, true},
      {"conv1d", {2, 3, 17}, {4, 3, 4}, 1, {2}, {1}, {1, 2}, true},
      {"conv1d grouped dilated", {1, 6, 20}, {9, 2, 3}, 3, {1}, {3}, {0, 0}, false},
      {"conv3d", {1, 2, 5, 6, 7}, {3, 2, 2, 3, 3}, 1, {1, 2, 1}, {1, 1, 2}, {1, 0, 1, 0, 1, 1}, true},
      {"conv3d depthwise", {1, 3, 4, 5, 5}, {3, 1, 3, 3, 3}, 3, {1, 1, 1}, {1, 1, 1}, {1, 1, 1, 1, 1, 1}, true},
  };
  Rng rng(11);
  for (const ConvCase& c : cases) {
    SCOPED_TRACE(c.name);
    const Tensor x = random_floats(c.x, rng), w = random_floats(c.w, rng), b = random_floats({c.w[0]}, rng);
    const Node node = conv_node(c, c.bias ? 3 : 2);
    const std::vector<Tensor> y = run_checked(node, {&x, &w, c.bias ? &b : nullptr});
    Shape expected_shape;
    std::vector<double> bias;
    if (c.bias)
      for (float v : b.values<float>()) bias.push_back(v);
    const std::vector<double> expected = ref_conv(x, w, ref_attrs(c), &expected_shape, real_value, bias);
    ASSERT_EQ(y[0].shape(), expected_shape);
    EXPECT_TRUE(near_all(y[0], expected, 1e-5, 1e-5));
  }
}

// auto_pad gives the same result as the explicit pads the ONNX formulas give.
TEST(Conv, AutoPadEqualsExplicitPads) {
  Rng rng(12);
  const Tensor x = random_floats({1, 2, 5, 8}, rng), w = random_floats({3, 2, 2, 3}, rng);
  auto run = [&](AttrList attrs) { return run_op(op_node("Conv", 2, attrs), {&x, &w})[0]; };
  // H: in 5, k 2, s 2 -> out 3, total pad 1; W: in 8, k 3, s 2 -> out 4, total pad 1.
  const std::vector<int64_t> s{2, 2};
  EXPECT_EQ(run({{"auto_pad", std::string("SAME_UPPER")}, {"strides", s}}),
            run({{"pads", std::vector<int64_t>{0, 0, 1, 1}}, {"strides", s}}));
  EXPECT_EQ(run({{"auto_pad", std::string("SAME_LOWER")}, {"strides", s}}),
            run({{"pads", std::vector<int64_t>{1, 1, 0, 0}}, {"strides", s}}));
  EXPECT_EQ(run({{"auto_pad", std::string("VALID")}, {"strides", s}, {"pads", std::vector<int64_t>{1, 1, 1, 1}}}),
            run({{"strides", s}}));
  EXPECT_EQ(run({{"auto_pad", std::string("SAME_UPPER")}, {"strides", s}}).shape(), (Shape{1, 3, 3, 4}));
  // Dilation enters the SAME padding: in 8, k 3, d 2 (effective 5), s 1 -> total 4.
  EXPECT_EQ(run({{"auto_pad", std::string("SAME_LOWER")}, {"dilations", std::vector<int64_t>{1, 2}}}),
            run({{"dilations", std::vector<int64_t>{1, 2}}, {"pads", std::vector<int64_t>{1, 2, 0, 2}}}));
}

TEST(Conv, InferKeepsUnknownDims) {
  const Node node = op_node("Conv", 2, {{"strides", std::vector<int64_t>{2, 2}}, {"pads", std::vector<int64_t>{1, 1, 1, 1}}});
  ValueInfo x = known(DType::kFloat32, {kUnknownDim, 3, 224, kUnknownDim});
  const InferResult r = infer_op(node, {x, known(DType::kFloat32, {16, 3, 3, 3})});
  EXPECT_EQ(r.outputs[0].shape, (Shape{kUnknownDim, 16, 112, kUnknownDim}));
  const InferResult no_rank = infer_op(node, {ValueInfo{}, ValueInfo{}});
  EXPECT_FALSE(no_rank.outputs[0].has_shape);
  EXPECT_EQ(no_rank.outputs[0].dtype, DType::kFloat32);
}

TEST(Conv, BadInputsAreClearErrors) {
  Rng rng(13);
  const Tensor x = random_floats({1, 4, 5, 5}, rng), w = random_floats({2, 4, 3, 3}, rng);
  const Tensor w_odd = random_floats({3, 2, 3, 3}, rng);
  EXPECT_TRUE(fails_with([&] { run_op(op_node("Conv", 2, {{"group", int64_t{2}}}), {&x, &w}); }, "input channels per group"));
  EXPECT_TRUE(fails_with([&] { run_op(op_node("Conv", 2, {{"group", int64_t{2}}}), {&x, &w_odd}); }, "not divisible by group"));
  EXPECT_TRUE(fails_with([&] { run_op(op_node("Conv", 2, {{"kernel_shape", std::vector<int64_t>{2, 2}}}), {&x, &w}); },
                         "does not match the weights"));
  EXPECT_TRUE(fails_with([&] { run_op(op_node("Conv", 2, {{"auto_pad", std::string("SAME")}}), {&x, &w}); }, "auto_pad 'SAME'"));
  EXPECT_TRUE(fails_with([&] { run_op(op_node("Conv", 2, {{"strides", std::vector<int64_t>{0, 1}}}), {&x, &w}); }, "must be >= 1"));
  EXPECT_TRUE(fails_with([&] { run_op(op_node("Conv", 2, {{"pads", std::vector<int64_t>{1, 1}}}), {&x, &w}); }, "'pads' has 2 values"));
  const Tensor tiny = random_floats({1, 4, 2, 2}, rng);
  EXPECT_TRUE(fails_with([&] { run_op(op_node("Conv", 2), {&tiny, &w}); }, "smaller than the kernel extent"));
  const Tensor flat = random_floats({4, 5}, rng);
  EXPECT_TRUE(fails_with([&] { run_op(op_node("Conv", 2), {&flat, &w}); }, "1 to 3 spatial axes"));
  const Tensor xi = random_ints<int8_t>({1, 4, 5, 5}, rng, -5, 5);
  EXPECT_TRUE(fails_with([&] { run_op(op_node("Conv", 2), {&xi, &w}); }, "input 0 has type int8, expected float32"));
  const Tensor bias = random_floats({3}, rng);
  EXPECT_TRUE(fails_with([&] { run_op(op_node("Conv", 3), {&x, &w, &bias}); }, "bias B has shape 3, expected 2"));
}

// ---- ConvTranspose ----

struct TransposeCase {
  const char* name;
  Shape x, w;  // w [C, M/group, k...]
  int64_t group;
  std::vector<int64_t> strides, dilations, pads, output_padding;
};

// y[n, m, o] = sum over c, i, k with o = i * s - pad_begin + k * d.
std::vector<double> ref_conv_transpose(const Tensor& x, const Tensor& w, const TransposeCase& c, Shape* out_shape) {
  const size_t r = c.strides.size();
  const Shape& xs = x.shape();
  const Shape& ws = w.shape();
  const int64_t mg = ws[1], cg = xs[1] / c.group;
  Shape os{xs[0], mg * c.group};
  for (size_t i = 0; i < r; ++i)
    os.push_back((xs[i + 2] - 1) * c.strides[i] + c.output_padding[i] + (ws[i + 2] - 1) * c.dilations[i] + 1 -
                 c.pads[i] - c.pads[i + r]);
  *out_shape = os;
  std::vector<double> y(static_cast<size_t>(element_count(os)), 0.0);
  for_each_index(xs, [&](const std::vector<int64_t>& xi) {
    const int64_t g = xi[1] / cg;
    for_each_index(Shape(ws.begin() + 1, ws.end()), [&](const std::vector<int64_t>& k) {  // (m in group, taps)
      std::vector<int64_t> yi{xi[0], g * mg + k[0]};
      for (size_t i = 0; i < r; ++i) {
        const int64_t o = xi[i + 2] * c.strides[i] - c.pads[i] + k[i + 1] * c.dilations[i];
        if (o < 0 || o >= os[i + 2]) return;
        yi.push_back(o);
      }
      std::vector<int64_t> wi{xi[1]};
      wi.insert(wi.end(), k.begin(), k.end());
      y[static_cast<size_t>(flat(os, yi))] += x.real_at(flat(xs, xi)) * w.real_at(flat(ws, wi));
    });
  });
  return y;
}

TEST(ConvTranspose, MatchesNaiveLoops) {
  const std::vector<TransposeCase> cases = {
      {"plain", {1, 2, 4, 5}, {2, 3, 3, 3}, 1, {1, 1}, {1, 1}, {0, 0, 0, 0}, {0, 0}},
      {"strided padded", {2, 3, 5, 4}, {3, 2, 3, 3}, 1, {2, 3}, {1, 1}, {1, 0, 1, 2}, {1, 0}},
      {"dilated", {1, 2, 4, 4}, {2, 2, 3, 2}, 1, {1, 2}, {2, 2}, {0, 1, 1, 0}, {0, 1}},
      {"grouped", {1, 4, 3, 3}, {4, 3, 2, 2}, 2, {2, 2}, {1, 1}, {0, 0, 0, 0}, {0, 0}},
      {"depthwise", {1, 3, 5, 5}, {3, 1, 4, 4}, 3, {2, 2}, {1, 1}, {1, 1, 1, 1}, {0, 0}},
      {"1d", {1, 3, 6}, {3, 2, 3}, 1, {3}, {1}, {1, 0}, {2}},
      {"3d", {1, 2, 3, 3, 2}, {2, 2, 2, 3, 2}, 1, {2, 1, 2}, {1, 1, 1}, {0, 1, 0, 1, 0, 0}, {1, 0, 0}},
  };
  Rng rng(14);
  for (const TransposeCase& c : cases) {
    SCOPED_TRACE(c.name);
    const Tensor x = random_floats(c.x, rng), w = random_floats(c.w, rng);
    const Tensor b = random_floats({c.w[1] * c.group}, rng);
    const Node node = op_node("ConvTranspose", 3,
                              {{"group", c.group}, {"strides", c.strides}, {"dilations", c.dilations},
                               {"pads", c.pads}, {"output_padding", c.output_padding}});
    const std::vector<Tensor> y = run_checked(node, {&x, &w, &b});
    Shape expected_shape;
    std::vector<double> expected = ref_conv_transpose(x, w, c, &expected_shape);
    const int64_t plane = element_count(expected_shape) / (expected_shape[0] * expected_shape[1]);
    for (size_t i = 0; i < expected.size(); ++i) expected[i] += b.real_at(static_cast<int64_t>(i) / plane % expected_shape[1]);
    ASSERT_EQ(y[0].shape(), expected_shape);
    EXPECT_TRUE(near_all(y[0], expected, 1e-5, 1e-5));
  }
}

TEST(ConvTranspose, OutputShapeAndAutoPad) {
  Rng rng(15);
  const Tensor x = random_floats({1, 1, 3, 3}, rng), w = random_floats({1, 2, 3, 3}, rng);
  auto run = [&](AttrList attrs) { return run_checked(op_node("ConvTranspose", 2, attrs), {&x, &w})[0]; };
  const std::vector<int64_t> s{2, 2};
  // Full extent (3-1)*2 + 3 = 7; SAME gives 6: total pad 1, at the end for SAME_UPPER.
  const Tensor upper = run({{"auto_pad", std::string("SAME_UPPER")}, {"strides", s}});
  EXPECT_EQ(upper.shape(), (Shape{1, 2, 6, 6}));
  EXPECT_EQ(upper, run({{"strides", s}, {"pads", std::vector<int64_t>{0, 0, 1, 1}}}));
  EXPECT_EQ(run({{"auto_pad", std::string("SAME_LOWER")}, {"strides", s}}),
            run({{"strides", s}, {"pads", std::vector<int64_t>{1, 1, 0, 0}}}));
  // output_shape: pads derived (odd total at the beginning unless SAME_UPPER).
  EXPECT_EQ(run({{"strides", s}, {"output_shape", std::vector<int64_t>{6, 5}}}),
            run({{"strides", s}, {"pads", std::vector<int64_t>{1, 1, 0, 1}}}));
  // An output_shape larger than the full extent leaves the extra cells at zero.
  const Tensor big = run({{"strides", s}, {"output_shape", std::vector<int64_t>{1, 2, 8, 7}}});
  const Tensor full = run({{"strides", s}});
  ASSERT_EQ(big.shape(), (Shape{1, 2, 8, 7}));
  for (int64_t m = 0; m < 2; ++m)
    for (int64_t h = 0; h < 8; ++h)
      for (int64_t ww = 0; ww < 7; ++ww) {
        const double v = big.real_at((m * 8 + h) * 7 + ww);
        EXPECT_EQ(v, h < 7 ? full.real_at((m * 7 + h) * 7 + ww) : 0.0);
      }
}

TEST(ConvTranspose, BadInputsAreClearErrors) {
  Rng rng(16);
  const Tensor x = random_floats({1, 4, 3, 3}, rng), w = random_floats({3, 2, 3, 3}, rng);
  EXPECT_TRUE(fails_with([&] { run_op(op_node("ConvTranspose", 2), {&x, &w}); }, "expects 3 input channels"));
  const Tensor w4 = random_floats({4, 2, 3, 3}, rng);
  EXPECT_TRUE(fails_with([&] { run_op(op_node("ConvTranspose", 2, {{"output_padding", std::vector<int64_t>{1, 1}}}), {&x, &w4}); },
                         "output_padding 1"));
  EXPECT_TRUE(fails_with([&] { run_op(op_node("ConvTranspose", 2, {{"output_shape", std::vector<int64_t>{5}}}), {&x, &w4}); },
                         "output_shape has 1 values"));
}

}  // namespace
}  // namespace npuforge::model::testing
