// The int8 reference against naive formulas written here (ONNX indexing, int64 arithmetic
// wrapped to int32 once, the ISA's requant written out).
#include "compiler/qref.h"

#include <gtest/gtest.h>

#include "compiler/convert.h"
#include "test_util.h"

namespace npuforge::compiler {
namespace {

using testing::random_int8;

// The ISA's requant, written out independently: clamp((x * scale + 2^(shift-1)) >> shift).
int8_t naive_requant(int64_t x, uint32_t scale, uint32_t shift, bool relu) {
  const int64_t prod = x * static_cast<int64_t>(scale);
  int64_t v = shift == 0 ? prod : (prod + (int64_t{1} << (shift - 1))) >> shift;
  if (v > 127) v = 127;
  if (v < -128) v = -128;
  if (relu && v < 0) v = 0;
  return static_cast<int8_t>(v);
}

int32_t wrap32(int64_t v) { return static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(v))); }

QTensor hwc(const std::string& name, int64_t c, int64_t h, int64_t w, float scale = 0.1f) {
  return QTensor{name, {1, c, h, w}, Layout::kHWC, model::DType::kInt8, scale};
}

struct ConvCase {
  int64_t cin, h, w, cout, groups;
  Window win;
};

TEST(Qref, ConvMatchesTheNaiveFormula) {
  Rng rng(7);
  for (const ConvCase& c : {ConvCase{3, 7, 9, 4, 1, {3, 3, 1, 1, 1, 1, 1, 1, 1, 1}},
                            ConvCase{4, 8, 6, 6, 2, {3, 2, 2, 1, 1, 1, 0, 2, 1, 0}},
                            ConvCase{5, 9, 9, 5, 5, {3, 3, 2, 2, 2, 3, 2, 0, 1, 3}},  // depthwise, dilated
                            ConvCase{2, 5, 5, 3, 1, {5, 1, 1, 3, 1, 1, 2, 0, 2, 0}},
                            // Channel counts past the 16-wide blocks of multiply_accumulate, with tails.
                            ConvCase{20, 5, 6, 37, 1, {3, 3, 1, 1, 1, 1, 1, 1, 1, 1}},
                            ConvCase{35, 6, 5, 35, 35, {3, 3, 2, 1, 1, 1, 1, 1, 1, 1}},  // depthwise
                            ConvCase{4, 5, 5, 36, 2, {1, 1, 1, 1, 1, 1, 0, 0, 0, 0}}}) {
    const int64_t cin_pg = c.cin / c.groups, cout_pg = c.cout / c.groups;
    const Window& wn = c.win;
    const int64_t eh = (wn.kernel_h - 1) * wn.dilation_h + 1, ew = (wn.kernel_w - 1) * wn.dilation_w + 1;
    const int64_t oh = (c.h + wn.pad_top + wn.pad_bottom - eh) / wn.stride_h + 1;
    const int64_t ow = (c.w + wn.pad_left + wn.pad_right - ew) / wn.stride_w + 1;
    // ONNX-layout operands: x[c][y][x], w[co][ci][ky][kx].
    const model::Tensor x_onnx = random_int8({1, c.cin, c.h, c.w}, rng.next());
    const model::Tensor w_onnx = random_int8({c.cout, cin_pg, wn.kernel_h, wn.kernel_w}, rng.next());
    ConvOp op;
    op.window = wn;
    op.groups = c.groups;
    op.cin_per_group = cin_pg;
    op.cout = c.cout;
    op.relu = c.groups == 2;
    op.weights.resize(static_cast<size_t>(op.k() * c.cout));
    for (int64_t co = 0; co < c.cout; ++co)
      for (int64_t ci = 0; ci < cin_pg; ++ci)
        for (int64_t ky = 0; ky < wn.kernel_h; ++ky)
          for (int64_t kx = 0; kx < wn.kernel_w; ++kx)
            op.weights[static_cast<size_t>(((ky * wn.kernel_w + kx) * cin_pg + ci) * c.cout + co)] =
                w_onnx.values<int8_t>()[((co * cin_pg + ci) * wn.kernel_h + ky) * wn.kernel_w + kx];
    for (int64_t co = 0; co < c.cout; ++co) {
      // One huge bias makes the int32 sum wrap around.
      op.bias.push_back(co == 0 ? INT32_MAX - 5 : static_cast<int32_t>(rng.range(-5000, 5000)));
      op.requant.push_back({static_cast<uint32_t>(rng.range(1, 1 << 20)), static_cast<uint32_t>(rng.range(10, 30)), op.relu});
      op.weight_scales.push_back(1);
    }
    const QTensor in_t = hwc("in", c.cin, c.h, c.w), out_t = hwc("out", c.cout, oh, ow);
    const model::Tensor got = ref_conv(op, to_storage(x_onnx, in_t), out_t);
    ASSERT_EQ(got.shape(), (model::Shape{oh, ow, c.cout}));
    for (int64_t co = 0; co < c.cout; ++co)
      for (int64_t y = 0; y < oh; ++y)
        for (int64_t xx = 0; xx < ow; ++xx) {
          const int64_t g = co / cout_pg;
          int64_t sum = op.bias[co];
          for (int64_t ci = 0; ci < cin_pg; ++ci)
            for (int64_t ky = 0; ky < wn.kernel_h; ++ky)
              for (int64_t kx = 0; kx < wn.kernel_w; ++kx) {
                const int64_t iy = y * wn.stride_h - wn.pad_top + ky * wn.dilation_h;
                const int64_t ix = xx * wn.stride_w - wn.pad_left + kx * wn.dilation_w;
                if (iy < 0 || iy >= c.h || ix < 0 || ix >= c.w) continue;
                sum += int64_t{x_onnx.values<int8_t>()[((g * cin_pg + ci) * c.h + iy) * c.w + ix]} *
                       w_onnx.values<int8_t>()[((co * cin_pg + ci) * wn.kernel_h + ky) * wn.kernel_w + kx];
              }
          const auto& p = op.requant[co];
          ASSERT_EQ(got.values<int8_t>()[(y * ow + xx) * c.cout + co], naive_requant(wrap32(sum), p.scale, p.shift, p.relu))
              << "co " << co << " y " << y << " x " << xx;
        }
  }
}

TEST(Qref, GemmMatchesTheNaiveFormula) {
  Rng rng(3);
  for (const int64_t n : {5, 40}) {  // 40: two 16-wide blocks of multiply_accumulate and a tail
    GemmOp op;
    op.k = 37;
    op.n = n;
    const model::Tensor x = random_int8({3, 37}, 11);
    const model::Tensor w = random_int8({37, n}, 12);
    op.weights.assign(w.values<int8_t>().begin(), w.values<int8_t>().end());
    for (int64_t j = 0; j < op.n; ++j) {
      op.bias.push_back(static_cast<int32_t>(rng.range(-100000, 100000)));
      op.requant.push_back({static_cast<uint32_t>(rng.range(1, 1 << 30)), static_cast<uint32_t>(rng.range(20, 40)), false});
    }
    const QTensor out{"out", {3, n}, Layout::kRowMajor, model::DType::kInt8, 1};
    const model::Tensor got = ref_gemm(op, x, out);
    for (int64_t r = 0; r < 3; ++r)
      for (int64_t j = 0; j < n; ++j) {
        int64_t sum = op.bias[j];
        for (int64_t k = 0; k < 37; ++k) sum += int64_t{x.values<int8_t>()[r * 37 + k]} * w.values<int8_t>()[k * n + j];
        EXPECT_EQ(got.values<int8_t>()[r * n + j], naive_requant(wrap32(sum), op.requant[j].scale, op.requant[j].shift, false));
      }
  }
}

TEST(Qref, PoolsIgnoreOrCountPadding) {
  const model::Tensor x = random_int8({1, 3, 5, 6}, 4);
  const QTensor in = hwc("in", 3, 5, 6);
  const Window win{3, 2, 2, 2, 1, 1, 1, 0, 1, 1};  // 3x2 window, stride 2, pads t1 l0 b1 r1
  const int64_t oh = (5 + 2 - 3) / 2 + 1, ow = (6 + 1 - 2) / 2 + 1;
  for (PoolOp::Kind kind : {PoolOp::Kind::kMax, PoolOp::Kind::kAvg})
    for (bool count_pad : {false, true}) {
      PoolOp op;
      op.kind = kind;
      op.window = win;
      op.count_pad = count_pad;
      const model::Tensor got = ref_pool(op, to_storage(x, in), hwc("out", 3, oh, ow));
      for (int64_t c = 0; c < 3; ++c)
        for (int64_t y = 0; y < oh; ++y)
          for (int64_t xx = 0; xx < ow; ++xx) {
            int64_t best = -1000, sum = 0, n = 0;
            for (int64_t ky = 0; ky < 3; ++ky)
              for (int64_t kx = 0; kx < 2; ++kx) {
                const int64_t iy = y * 2 - 1 + ky, ix = xx * 2 + kx;
                if (iy < 0 || iy >= 5 || ix < 0 || ix >= 6) continue;
                const int8_t v = x.values<int8_t>()[(c * 5 + iy) * 6 + ix];
                best = std::max<int64_t>(best, v);
                sum += v;
                ++n;
              }
            const double div = count_pad ? 6.0 : static_cast<double>(n);
            const double avg = static_cast<double>(sum) / div;
            const int64_t want = kind == PoolOp::Kind::kMax ? best
                                 : avg >= 0                 ? static_cast<int64_t>(std::floor(avg + 0.5))
                                                            : -static_cast<int64_t>(std::floor(-avg + 0.5));
            EXPECT_EQ(got.values<int8_t>()[(y * ow + xx) * 3 + c], want) << "c " << c << " y " << y << " x " << xx;
          }
    }
}

TEST(Qref, EltwiseLutClamp) {
  const model::Tensor a = random_int8({1, 50}, 1), b = random_int8({1, 50}, 2);
  EltwiseOp add{{}, EltwiseOp::Kind::kAdd, {}, {}, {}, {40000, 16, false}};
  EltwiseOp mul{{}, EltwiseOp::Kind::kMul, {}, {}, {}, {300, 15, false}};
  const model::Tensor s = ref_eltwise(add, a, b), p = ref_eltwise(mul, a, b);
  LutOp lut;
  for (int i = 0; i < 256; ++i) lut.table[static_cast<size_t>(i)] = static_cast<int8_t>(127 - i);
  const model::Tensor l = ref_lut(lut, a);
  const model::Tensor c = ref_clamp(ClampOp{{}, {}, {}, -3, 9}, a);
  for (int i = 0; i < 50; ++i) {
    const int64_t x = a.values<int8_t>()[i], y = b.values<int8_t>()[i];
    EXPECT_EQ(s.values<int8_t>()[i], naive_requant(x + y, 40000, 16, false));
    EXPECT_EQ(p.values<int8_t>()[i], naive_requant(x * y, 300, 15, false));
    EXPECT_EQ(l.values<int8_t>()[i], static_cast<int8_t>(127 - (x + 128)));
    EXPECT_EQ(c.values<int8_t>()[i], std::clamp<int64_t>(x, -3, 9));
  }
}

// A hand-made graph: input -> conv -> concat(with a clamp of it) -> alias -> CPU Softmax.
TEST(Qref, RunsAGraphWithConcatAliasAndACpuStep) {
  QGraph g;
  g.source = "hand-made";
  const TensorId x = g.add_tensor(hwc("x", 2, 1, 1, 0.05f));
  const TensorId c = g.add_tensor(hwc("c", 2, 1, 1, 0.05f));
  const TensorId r = g.add_tensor(hwc("r", 2, 1, 1, 0.05f));
  const TensorId cat = g.add_tensor(hwc("cat", 4, 1, 1, 0.05f));
  const TensorId flat = g.add_tensor({"flat", {1, 4}, Layout::kRowMajor, model::DType::kInt8, 0.05f});
  const TensorId y = g.add_tensor({"y", {1, 4}, Layout::kOnnx, model::DType::kFloat32, 0});
  g.inputs = {{"x", x}};
  ConvOp conv;
  conv.input = x;
  conv.output = c;
  conv.cin_per_group = 2;
  conv.cout = 2;
  conv.weights = {1, 0, 0, -1};  // c = (x0, -x1)
  conv.bias = {0, 0};
  conv.weight_scales = {1, 1};
  conv.requant = {{1, 0, false}, {1, 0, false}};
  g.ops.push_back(conv);
  g.ops.push_back(ClampOp{{}, c, r, 0, 127});
  g.ops.push_back(ConcatOp{{}, {c, r}, cat, 1});
  g.ops.push_back(AliasOp{{}, cat, flat});
  CpuStepOp soft;
  soft.graph.opset = 13;
  soft.graph.inputs = {"flat"};
  soft.graph.outputs = {"y"};
  soft.graph.values["flat"] = model::ValueInfo{model::DType::kFloat32, true, {1, 4}, {}};
  model::Node n{"softmax", "Softmax", "", {"flat"}, {"y"}, {}};
  soft.graph.nodes.push_back(n);
  soft.inputs = {flat};
  soft.outputs = {y};
  g.ops.push_back(soft);
  g.outputs = {{"y", y}};
  validate(g);
  model::TensorMap in;
  in["x"] = model::Tensor::from<float>({1, 2, 1, 1}, std::vector<float>{0.5f, 0.25f});
  const QrefResult res = run_qref(g, in);
  // x -> (10, 5); c = (10, -5); r = (10, 0); cat = (10, -5, 10, 0).
  const auto cat_v = res.values[cat.value].values<int8_t>();
  EXPECT_EQ(std::vector<int8_t>(cat_v.begin(), cat_v.end()), (std::vector<int8_t>{10, -5, 10, 0}));
  const std::vector<double> logits{0.5, -0.25, 0.5, 0};
  double z = 0;
  for (double v : logits) z += std::exp(v);
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(res.outputs.at("y").values<float>()[i], std::exp(logits[i]) / z, 1e-6);
}

TEST(Qref, MissingInputIsAnError) {
  QGraph g;
  g.source = "hand-made";
  g.inputs = {{"x", g.add_tensor(hwc("x", 1, 1, 1))}};
  EXPECT_THROW(run_qref(g, {}), Error);
}

}  // namespace
}  // namespace npuforge::compiler
