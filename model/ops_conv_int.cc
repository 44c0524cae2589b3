// Integer convolutions: ConvInteger (int32 output) and QLinearConv (requantized 8-bit
// output). Both run the exact int32 convolution of the zero-point-centred operands
// (conv_kernels.h, wrap-around arithmetic as int32 hardware does), so results are exact.
#include <fmt/core.h>

#include "model/conv_setup.h"
#include "model/op_families.h"
#include "model/qlinear_util.h"

namespace npuforge::model {
namespace {

// The exact int32 convolution of (x - x_zp) and (w - w_zp[m]).
struct IntConv {
  ConvProblem problem;
  std::vector<uint32_t> acc;  // [N, M, out...], int32 bits
};

IntConv int_conv(const Node& node, const Tensor& x, const Tensor* x_zp, size_t x_zp_index, const Tensor& w,
                 size_t w_index, const Tensor* w_zp, size_t w_zp_index) {
  require_dtype(node, 0, x.dtype(), {DType::kUInt8, DType::kInt8});
  require_dtype(node, w_index, w.dtype(), {DType::kUInt8, DType::kInt8});
  IntConv c;
  c.problem = conv_problem(node, x.shape(), w.shape(), ConvKind::kForward);
  const int64_t m = c.problem.out_channels;
  const auto xz = read_zero_point(node, x_zp, fmt::format("input {} (x zero point)", x_zp_index), x.dtype(), 0);
  const auto wz = read_zero_point(node, w_zp, fmt::format("input {} (w zero point)", w_zp_index), w.dtype(), m);
  const std::vector<uint32_t> xs = centred(x, xz, 1);
  const std::vector<uint32_t> ws = centred(w, wz, m == 0 ? 1 : w.numel() / m);
  c.acc.resize(static_cast<size_t>(element_count(conv_output_shape(c.problem))));
  conv_forward(c.problem, xs.data(), ws.data(), c.acc.data());
  return c;
}

InferResult infer_conv_integer(const InferContext& ctx) {
  require_dtype(ctx.node, 0, ctx.input(0).dtype, {DType::kUInt8, DType::kInt8});
  require_dtype(ctx.node, 1, ctx.input(1).dtype, {DType::kUInt8, DType::kInt8});
  return {{conv_output_info(ctx, 1, DType::kInt32, ConvKind::kForward)}, {}};
}

std::vector<Tensor> run_conv_integer(const RunContext& ctx) {
  const Tensor* x_zp = ctx.has_input(2) ? &ctx.input(2) : nullptr;
  const Tensor* w_zp = ctx.has_input(3) ? &ctx.input(3) : nullptr;
  IntConv c = int_conv(ctx.node, ctx.input(0), x_zp, 2, ctx.input(1), 1, w_zp, 3);
  Tensor y(DType::kInt32, conv_output_shape(c.problem));
  std::span<int32_t> out = y.values<int32_t>();
  for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<int32_t>(c.acc[i]);
  std::vector<Tensor> r;
  r.push_back(std::move(y));
  return r;
}

// QLinearConv inputs: x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale,
// y_zero_point, optional int32 bias B.
InferResult infer_qlinear_conv(const InferContext& ctx) {
  require_dtype(ctx.node, 0, ctx.input(0).dtype, {DType::kUInt8, DType::kInt8});
  require_dtype(ctx.node, 3, ctx.input(3).dtype, {DType::kUInt8, DType::kInt8});
  const DType out = ctx.input(7).dtype;
  require_dtype(ctx.node, 7, out, {DType::kUInt8, DType::kInt8});
  if (ctx.has_input(8)) require_dtype(ctx.node, 8, ctx.input(8).dtype, {DType::kInt32});
  return {{conv_output_info(ctx, 3, out, ConvKind::kForward)}, {}};
}

std::vector<Tensor> run_qlinear_conv(const RunContext& ctx) {
  const Node& node = ctx.node;
  IntConv c = int_conv(node, ctx.input(0), &ctx.input(2), 2, ctx.input(3), 3, &ctx.input(5), 5);
  const int64_t m = c.problem.out_channels;
  const Tensor& y_zp_t = ctx.input(7);
  require_dtype(node, 7, y_zp_t.dtype(), {DType::kUInt8, DType::kInt8});
  const float x_scale = read_scale(node, ctx.input(1), "input 1 (x scale)", 0)[0];
  const PerIndex<float> w_scale = read_scale(node, ctx.input(4), "input 4 (w scale)", m);
  const float y_scale = read_scale(node, ctx.input(6), "input 6 (y scale)", 0)[0];
  const int32_t y_zp = read_zero_point(node, &y_zp_t, "input 7 (y zero point)", y_zp_t.dtype(), 0)[0];
  std::vector<int32_t> bias(static_cast<size_t>(m), 0);
  if (ctx.has_input(8)) {
    const Tensor& b = ctx.input(8);
    require_dtype(node, 8, b.dtype(), {DType::kInt32});
    if (b.rank() != 1 || b.numel() != m)
      node.fail(fmt::format("bias B has shape {}, expected {}", shape_str(b.shape()), m));
    std::copy(b.values<int32_t>().begin(), b.values<int32_t>().end(), bias.begin());
  }
  std::vector<float> multiplier(static_cast<size_t>(m));
  for (int64_t i = 0; i < m; ++i) multiplier[static_cast<size_t>(i)] = x_scale * w_scale[i] / y_scale;
  Tensor y(y_zp_t.dtype(), conv_output_shape(c.problem));
  const int64_t plane = c.problem.geometry.out_count();
  for (int64_t i = 0; i < y.numel(); ++i) {
    const size_t ch = static_cast<size_t>(i / plane % m);
    const int32_t acc = static_cast<int32_t>(c.acc[static_cast<size_t>(i)] + static_cast<uint32_t>(bias[ch]));
    store_8bit(y, i, requantize(acc, multiplier[ch], y_zp, y.dtype()));
  }
  std::vector<Tensor> r;
  r.push_back(std::move(y));
  return r;
}

}  // namespace

void register_conv_integer_ops(OpRegistry& r) {
  r.add({"", "ConvInteger", 10, 17, infer_conv_integer, run_conv_integer});
  r.add({"", "QLinearConv", 10, 17, infer_qlinear_conv, run_qlinear_conv});
}

}  // namespace npuforge::model
