// Op family "norm": BatchNormalization (inference), InstanceNormalization, LRN, Softmax
// and LogSoftmax. Reductions and ArgMax/ArgMin are in ops_reduce.cc, Resize/Upsample in
// ops_resize.cc. Statistics and normalisers are computed in double and rounded once.
#include <cmath>

#include <fmt/core.h>

#include "model/conv_setup.h"
#include "model/op_families.h"

namespace npuforge::model {
namespace {

std::vector<Tensor> single(Tensor t) {
  std::vector<Tensor> v;
  v.push_back(std::move(t));
  return v;
}

// ---- BatchNormalization: y = (x - mean) / sqrt(var + epsilon) * scale + B ----

void check_inference_mode(const Node& node, int64_t opset) {
  if (opset >= 14 && node.attr_int("training_mode", 0) != 0)
    node.fail("training_mode=1 is not supported (npuforge runs inference only)");
  for (size_t i = 1; i < node.outputs.size(); ++i)
    if (!node.outputs[i].empty())
      node.fail(fmt::format("output {} (running or saved statistics) is a training output; npuforge runs inference only", i));
}

InferResult infer_batch_norm(const InferContext& ctx) {
  check_inference_mode(ctx.node, ctx.opset);
  for (size_t i = 0; i < 5; ++i) require_dtype(ctx.node, i, ctx.input(i).dtype, {DType::kFloat32});
  ValueInfo y = ctx.input(0);
  y.dim_names.clear();
  InferResult r{{y}, {}};
  for (size_t i = 1; i < ctx.node.outputs.size(); ++i) r.outputs.push_back(ValueInfo{});
  return r;
}

std::vector<Tensor> run_batch_norm(const RunContext& ctx) {
  const Node& node = ctx.node;
  check_inference_mode(node, ctx.opset);
  const Tensor& x = ctx.input(0);
  require_dtype(node, 0, x.dtype(), {DType::kFloat32});
  if (x.rank() < 2) node.fail(fmt::format("input shape {} has no channel axis", shape_str(x.shape())));
  const int64_t n = x.shape()[0], c = x.shape()[1];
  const int64_t plane = n * c == 0 ? 0 : x.numel() / (n * c);
  // Opset < 9 with spatial=0: statistics per channel and position ([C, D1, ...]).
  const bool per_position = ctx.opset < 9 && node.attr_int("spatial", 1) == 0;
  const int64_t stats = per_position ? c * plane : c;
  const char* names[] = {"", "scale", "B", "input_mean", "input_var"};
  for (size_t i = 1; i < 5; ++i) {
    const Tensor& t = ctx.input(i);
    require_dtype(node, i, t.dtype(), {DType::kFloat32});
    if (t.numel() != stats)
      node.fail(fmt::format("{} has shape {}, expected {} values", names[i], shape_str(t.shape()), stats));
  }
  const double eps = node.attr_float("epsilon", 1e-5f);
  // Folded per statistic: y = x * a + b.
  std::vector<float> a(static_cast<size_t>(stats)), b(static_cast<size_t>(stats));
  for (int64_t i = 0; i < stats; ++i) {
    const double inv_std = 1.0 / std::sqrt(ctx.input(4).real_at(i) + eps);
    const double s = ctx.input(1).real_at(i) * inv_std;
    a[static_cast<size_t>(i)] = static_cast<float>(s);
    b[static_cast<size_t>(i)] = static_cast<float>(ctx.input(2).real_at(i) - ctx.input(3).real_at(i) * s);
  }
  Tensor y(DType::kFloat32, x.shape());
  const float* xp = x.values<float>().data();
  float* yp = y.values<float>().data();
  for (int64_t s = 0; s < n * c; ++s)
    for (int64_t j = 0; j < plane; ++j) {
      const size_t k = static_cast<size_t>(per_position ? (s % c) * plane + j : s % c);
      yp[s * plane + j] = xp[s * plane + j] * a[k] + b[k];
    }
  return single(std::move(y));
}

// ---- InstanceNormalization: per (n, c) mean and variance over the spatial axes ----

InferResult infer_same_shape_float(const InferContext& ctx) {
  for (size_t i = 0; i < ctx.input_count(); ++i)
    if (ctx.has_input(i)) require_dtype(ctx.node, i, ctx.input(i).dtype, {DType::kFloat32});
  ValueInfo y = ctx.input(0);
  y.dim_names.clear();
  return {{y}, {}};
}

std::vector<Tensor> run_instance_norm(const RunContext& ctx) {
  const Node& node = ctx.node;
  const Tensor &x = ctx.input(0), &scale = ctx.input(1), &bias = ctx.input(2);
  for (size_t i = 0; i < 3; ++i) require_dtype(node, i, ctx.input(i).dtype(), {DType::kFloat32});
  if (x.rank() < 3) node.fail(fmt::format("input shape {} has no spatial axis", shape_str(x.shape())));
  const int64_t n = x.shape()[0], c = x.shape()[1], plane = x.numel() / std::max<int64_t>(n * c, 1);
  if (scale.numel() != c || bias.numel() != c)
    node.fail(fmt::format("scale {} and B {} must have {} values", shape_str(scale.shape()), shape_str(bias.shape()), c));
  const double eps = node.attr_float("epsilon", 1e-5f);
  Tensor y(DType::kFloat32, x.shape());
  const float* xp = x.values<float>().data();
  float* yp = y.values<float>().data();
  for (int64_t s = 0; s < n * c; ++s, xp += plane, yp += plane) {
    double mean = 0, var = 0;
    for (int64_t j = 0; j < plane; ++j) mean += xp[j];
    mean /= static_cast<double>(plane);
    for (int64_t j = 0; j < plane; ++j) var += (xp[j] - mean) * (xp[j] - mean);
    var /= static_cast<double>(plane);
    const double a = scale.real_at(s % c) / std::sqrt(var + eps), b = bias.real_at(s % c);
    for (int64_t j = 0; j < plane; ++j) yp[j] = static_cast<float>((xp[j] - mean) * a + b);
  }
  return single(std::move(y));
}

// ---- LRN: x / (bias + alpha / size * sum of squares over nearby channels)^beta ----

std::vector<Tensor> run_lrn(const RunContext& ctx) {
  const Node& node = ctx.node;
  const Tensor& x = ctx.input(0);
  require_dtype(node, 0, x.dtype(), {DType::kFloat32});
  if (x.rank() < 3) node.fail(fmt::format("input shape {} is not N x C x spatial", shape_str(x.shape())));
  const int64_t size = node.attr_int("size");
  if (size < 1) node.fail(fmt::format("size {} must be >= 1", size));
  const double alpha = node.attr_float("alpha", 1e-4f), beta = node.attr_float("beta", 0.75f),
               bias = node.attr_float("bias", 1.0f);
  const int64_t n = x.shape()[0], c = x.shape()[1], plane = x.numel() / std::max<int64_t>(n * c, 1);
  const int64_t before = (size - 1) / 2, after = size - 1 - before;  // floor and ceil of (size-1)/2
  Tensor y(DType::kFloat32, x.shape());
  const float* xp = x.values<float>().data();
  float* yp = y.values<float>().data();
  for (int64_t b = 0; b < n; ++b)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t j = 0; j < plane; ++j) {
        double sq = 0;
        for (int64_t k = std::max<int64_t>(0, ch - before); k <= std::min(c - 1, ch + after); ++k) {
          const double v = xp[(b * c + k) * plane + j];
          sq += v * v;
        }
        const int64_t i = (b * c + ch) * plane + j;
        yp[i] = static_cast<float>(xp[i] / std::pow(bias + alpha / static_cast<double>(size) * sq, beta));
      }
  return single(std::move(y));
}

// ---- Softmax and LogSoftmax ----

InferResult infer_softmax(const InferContext& ctx) {
  const ValueInfo& x = ctx.input(0);
  if (x.has_shape) {
    if (x.shape.empty()) ctx.node.fail("input is a scalar; softmax needs an axis");
    normalize_axis(ctx.node, ctx.node.attr_int("axis", ctx.opset >= 13 ? -1 : 1), static_cast<int64_t>(x.shape.size()));
  }
  return infer_same_shape_float(ctx);
}

template <bool kLog>
std::vector<Tensor> run_softmax(const RunContext& ctx) {
  const Node& node = ctx.node;
  const Tensor& x = ctx.input(0);
  require_dtype(node, 0, x.dtype(), {DType::kFloat32});
  const int64_t rank = static_cast<int64_t>(x.rank());
  if (rank == 0) node.fail("input is a scalar; softmax needs an axis");
  const int64_t axis = normalize_axis(node, node.attr_int("axis", ctx.opset >= 13 ? -1 : 1), rank);
  // Opset < 13 flattens to 2-D at the axis: the softmax runs over all trailing axes together.
  int64_t outer = 1, len = 1, inner = 1;
  for (int64_t i = 0; i < rank; ++i) {
    const int64_t d = x.shape()[static_cast<size_t>(i)];
    if (i < axis) outer *= d;
    else if (i == axis || ctx.opset < 13) len *= d;
    else inner *= d;
  }
  Tensor y(DType::kFloat32, x.shape());
  const float* xp = x.values<float>().data();
  float* yp = y.values<float>().data();
  std::vector<double> e(static_cast<size_t>(len));
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t in = 0; in < inner; ++in) {
      const int64_t base = o * len * inner + in;
      float mx = -INFINITY;
      for (int64_t k = 0; k < len; ++k) mx = std::max(mx, xp[base + k * inner]);
      double sum = 0;
      for (int64_t k = 0; k < len; ++k) sum += e[static_cast<size_t>(k)] = std::exp(double{xp[base + k * inner]} - mx);
      const double log_sum = std::log(sum);
      for (int64_t k = 0; k < len; ++k)
        yp[base + k * inner] = static_cast<float>(kLog ? double{xp[base + k * inner]} - mx - log_sum
                                                       : e[static_cast<size_t>(k)] / sum);
    }
  return single(std::move(y));
}

}  // namespace

void register_norm_ops(OpRegistry& r) {
  r.add({"", "BatchNormalization", 1, 17, infer_batch_norm, run_batch_norm});
  r.add({"", "InstanceNormalization", 1, 17, infer_same_shape_float, run_instance_norm});
  r.add({"", "LRN", 1, 17, infer_same_shape_float, run_lrn});
  r.add({"", "Softmax", 1, 17, infer_softmax, run_softmax<false>});
  r.add({"", "LogSoftmax", 1, 17, infer_softmax, run_softmax<true>});
}

}  // namespace npuforge::model
