// Op family "conv" (float): Conv and ConvTranspose. The integer forms (ConvInteger,
// QLinearConv) are in ops_conv_int.cc; the kernels in conv_kernels.cc.
#include <fmt/core.h>

#include "model/conv_setup.h"
#include "model/op_families.h"

namespace npuforge::model {
namespace {

// Adds bias[m] to every element of output channel m (after the sums, as onnxruntime).
void add_bias(const Node& node, const Tensor& bias, int64_t batch, int64_t channels, Tensor& y) {
  require_dtype(node, 2, bias.dtype(), {DType::kFloat32});
  if (bias.rank() != 1 || bias.shape()[0] != channels)
    node.fail(fmt::format("bias B has shape {}, expected {}", shape_str(bias.shape()), channels));
  std::span<const float> b = bias.values<float>();
  std::span<float> out = y.values<float>();
  const int64_t plane = batch * channels == 0 ? 0 : y.numel() / (batch * channels);
  for (int64_t n = 0; n < batch; ++n)
    for (int64_t m = 0; m < channels; ++m) {
      float* p = out.data() + (n * channels + m) * plane;
      for (int64_t i = 0; i < plane; ++i) p[i] += b[m];
    }
}

InferResult infer_float_conv(const InferContext& ctx, ConvKind kind) {
  require_dtype(ctx.node, 0, ctx.input(0).dtype, {DType::kFloat32});
  require_dtype(ctx.node, 1, ctx.input(1).dtype, {DType::kFloat32});
  if (ctx.has_input(2)) require_dtype(ctx.node, 2, ctx.input(2).dtype, {DType::kFloat32});
  return {{conv_output_info(ctx, 1, DType::kFloat32, kind)}, {}};
}

std::vector<Tensor> run_float_conv(const RunContext& ctx, ConvKind kind) {
  const Tensor& x = ctx.input(0);
  const Tensor& w = ctx.input(1);
  require_dtype(ctx.node, 0, x.dtype(), {DType::kFloat32});
  require_dtype(ctx.node, 1, w.dtype(), {DType::kFloat32});
  const ConvProblem p = conv_problem(ctx.node, x.shape(), w.shape(), kind);
  Tensor y(DType::kFloat32, conv_output_shape(p));
  if (kind == ConvKind::kForward)
    conv_forward(p, x.values<float>().data(), w.values<float>().data(), y.values<float>().data());
  else
    conv_transpose(p, x.values<float>().data(), w.values<float>().data(), y.values<float>().data());
  if (ctx.has_input(2)) add_bias(ctx.node, ctx.input(2), p.batch, p.out_channels, y);
  std::vector<Tensor> out;
  out.push_back(std::move(y));
  return out;
}

InferResult infer_conv(const InferContext& ctx) { return infer_float_conv(ctx, ConvKind::kForward); }
std::vector<Tensor> run_conv(const RunContext& ctx) { return run_float_conv(ctx, ConvKind::kForward); }
InferResult infer_conv_transpose(const InferContext& ctx) { return infer_float_conv(ctx, ConvKind::kTranspose); }
std::vector<Tensor> run_conv_transpose(const RunContext& ctx) { return run_float_conv(ctx, ConvKind::kTranspose); }

}  // namespace

void register_conv_ops(OpRegistry& r) {
  r.add({"", "Conv", 1, 17, infer_conv, run_conv});
  r.add({"", "ConvTranspose", 1, 17, infer_conv_transpose, run_conv_transpose});
}

}  // namespace npuforge::model
