// Op family "pool": MaxPool (optional Indices), AveragePool, LpPool and the global pools,
// on the window geometry of conv_geometry.h; 1 to 3 spatial axes.
//
// Semantics follow onnxruntime where ONNX is silent: MaxPool keeps the first maximum of a
// window (strict >, NaN never wins) and ignores padding; AveragePool with
// count_include_pad divides by the taps inside input + pads (not the ceil_mode overhang),
// without it by the taps inside the input; a window with no input tap gives 0. Window
// and global sums are accumulated in double and rounded once.
#include <cmath>
#include <limits>

#include <fmt/core.h>

#include "model/conv_geometry.h"
#include "model/conv_setup.h"
#include "model/op_families.h"

namespace npuforge::model {
namespace {

enum class PoolKind { kMax, kAverage, kLp };

// The geometry of a windowed pool node for an input shape [N, C, spatial...].
WindowGeometry pool_geometry(const Node& node, const Shape& x, int64_t opset) {
  if (x.size() < 3 || x.size() > 5)
    node.fail(fmt::format("input shape {} is not N x C x spatial with 1 to 3 spatial axes", shape_str(x)));
  const WindowAttrs attrs = read_window_attrs(node, x.size() - 2, std::nullopt, opset >= 10);
  for (size_t i = 0; i < attrs.spatial_rank(); ++i)
    if (attrs.auto_pad == AutoPad::kNotSet &&
        (attrs.pads[i] >= attrs.kernel[i] || attrs.pads[i + attrs.spatial_rank()] >= attrs.kernel[i]))
      node.fail(fmt::format("pads on spatial axis {} must be smaller than the kernel {} (onnxruntime's rule)", i,
                            attrs.kernel[i]));
  return forward_geometry(node, attrs, Shape(x.begin() + 2, x.end()));
}

Shape pool_output_shape(const Shape& x, const WindowGeometry& g) {
  Shape s{x[0], x[1]};
  for (const AxisGeometry& a : g.axes) s.push_back(a.out);
  return s;
}

// Calls visit(spatial input offset, column-major offset) for each tap of output position
// (od, oh, ow) that lies inside the input.
template <class Visit>
void for_each_tap(const WindowGeometry& g3, const int64_t o[3], Visit&& visit) {
  const AxisGeometry &d = g3.axes[0], &h = g3.axes[1], &w = g3.axes[2];
  for (int64_t kd = 0; kd < d.kernel; ++kd) {
    const int64_t id = o[0] * d.stride - d.pad_begin + kd * d.dilation;
    if (id < 0 || id >= d.in) continue;
    for (int64_t kh = 0; kh < h.kernel; ++kh) {
      const int64_t ih = o[1] * h.stride - h.pad_begin + kh * h.dilation;
      if (ih < 0 || ih >= h.in) continue;
      for (int64_t kw = 0; kw < w.kernel; ++kw) {
        const int64_t iw = o[2] * w.stride - w.pad_begin + kw * w.dilation;
        if (iw < 0 || iw >= w.in) continue;
        visit((id * h.in + ih) * w.in + iw, id + (ih + iw * h.in) * d.in);
      }
    }
  }
}

// Taps of one axis inside [-pad_begin, in + pad_end): count_include_pad's divisor.
int64_t padded_taps(const AxisGeometry& a, int64_t o) {
  const int64_t start = o * a.stride - a.pad_begin;
  const int64_t last = std::min(start + (a.kernel - 1) * a.dilation, a.in + a.pad_end - 1);
  return last < start ? 0 : (last - start) / a.dilation + 1;
}

template <class T>
void max_pool(const WindowGeometry& g3, int64_t planes, const T* x, T* y, int64_t* indices, bool column_major) {
  const int64_t in_count = g3.axes[0].in * g3.axes[1].in * g3.axes[2].in;
  for (int64_t p = 0; p < planes; ++p) {
    const T* xp = x + p * in_count;
    int64_t o[3];
    for (o[0] = 0; o[0] < g3.axes[0].out; ++o[0])
      for (o[1] = 0; o[1] < g3.axes[1].out; ++o[1])
        for (o[2] = 0; o[2] < g3.axes[2].out; ++o[2]) {
          T best = std::numeric_limits<T>::lowest();
          int64_t best_index = -1;
          for_each_tap(g3, o, [&](int64_t off, int64_t col_off) {
            if (xp[off] > best) best = xp[off], best_index = column_major ? col_off : off;
          });
          *y++ = best;
          if (indices) *indices++ = best_index < 0 ? -1 : p * in_count + best_index;
        }
  }
}

void average_or_lp_pool(const WindowGeometry& g3, int64_t planes, const float* x, float* y, PoolKind kind,
                        bool count_include_pad, double p_norm) {
  const int64_t in_count = g3.axes[0].in * g3.axes[1].in * g3.axes[2].in;
  for (int64_t p = 0; p < planes; ++p) {
    const float* xp = x + p * in_count;
    int64_t o[3];
    for (o[0] = 0; o[0] < g3.axes[0].out; ++o[0])
      for (o[1] = 0; o[1] < g3.axes[1].out; ++o[1])
        for (o[2] = 0; o[2] < g3.axes[2].out; ++o[2]) {
          double sum = 0;
          int64_t taps = 0;
          for_each_tap(g3, o, [&](int64_t off, int64_t) {
            sum += kind == PoolKind::kLp ? std::pow(std::fabs(static_cast<double>(xp[off])), p_norm) : xp[off];
            ++taps;
          });
          if (kind == PoolKind::kLp) {
            *y++ = static_cast<float>(std::pow(sum, 1.0 / p_norm));
            continue;
          }
          if (count_include_pad) taps = padded_taps(g3.axes[0], o[0]) * padded_taps(g3.axes[1], o[1]) *
                                        padded_taps(g3.axes[2], o[2]);
          *y++ = taps == 0 ? 0.0f : static_cast<float>(sum / static_cast<double>(taps));
        }
  }
}

std::vector<DType> pool_dtypes(PoolKind kind, int64_t opset) {
  if (kind == PoolKind::kMax && opset >= 12) return {DType::kFloat32, DType::kUInt8, DType::kInt8};
  return {DType::kFloat32};
}

void check_pool_dtype(const Node& node, DType t, PoolKind kind, int64_t opset) {
  for (DType ok : pool_dtypes(kind, opset))
    if (ok == t) return;
  node.fail(fmt::format("input 0 has type {}, expected {}", dtype_name(t),
                        kind == PoolKind::kMax && opset >= 12 ? "float32, uint8 or int8" : "float32"));
}

bool wants_indices(const Node& node) { return node.outputs.size() > 1 && !node.outputs[1].empty(); }

template <PoolKind kKind>
InferResult infer_pool(const InferContext& ctx) {
  const ValueInfo& x = ctx.input(0);
  check_pool_dtype(ctx.node, x.dtype, kKind, ctx.opset);
  ValueInfo y;
  y.dtype = x.dtype;
  if (x.has_shape) y = known(x.dtype, pool_output_shape(x.shape, pool_geometry(ctx.node, x.shape, ctx.opset)));
  InferResult r{{y}, {}};
  if (kKind == PoolKind::kMax && wants_indices(ctx.node)) {
    ValueInfo idx = y;
    idx.dtype = DType::kInt64;
    r.outputs.push_back(idx);
  }
  return r;
}

template <PoolKind kKind>
std::vector<Tensor> run_pool(const RunContext& ctx) {
  const Node& node = ctx.node;
  const Tensor& x = ctx.input(0);
  check_pool_dtype(node, x.dtype(), kKind, ctx.opset);
  const WindowGeometry g = pool_geometry(node, x.shape(), ctx.opset);
  const WindowGeometry g3 = with_leading_unit_axes(g, 3);
  const Shape out_shape = pool_output_shape(x.shape(), g);
  const int64_t planes = x.shape()[0] * x.shape()[1];
  std::vector<Tensor> out;
  out.emplace_back(x.dtype(), out_shape);
  if constexpr (kKind == PoolKind::kMax) {
    const int64_t storage_order = node.attr_int("storage_order", 0);
    if (storage_order != 0 && storage_order != 1) node.fail(fmt::format("storage_order {} is not 0 or 1", storage_order));
    int64_t* indices = nullptr;
    if (wants_indices(node)) {
      out.emplace_back(DType::kInt64, out_shape);
      indices = out[1].values<int64_t>().data();
    }
    const bool column_major = storage_order == 1;
    switch (x.dtype()) {
      case DType::kUInt8:
        max_pool(g3, planes, x.values<uint8_t>().data(), out[0].values<uint8_t>().data(), indices, column_major);
        break;
      case DType::kInt8:
        max_pool(g3, planes, x.values<int8_t>().data(), out[0].values<int8_t>().data(), indices, column_major);
        break;
      default:
        max_pool(g3, planes, x.values<float>().data(), out[0].values<float>().data(), indices, column_major);
    }
  } else {
    const bool include_pad = node.attr_int("count_include_pad", 0) != 0;
    const double p = kKind == PoolKind::kLp ? static_cast<double>(node.attr_int("p", 2)) : 1.0;
    if (p <= 0) node.fail(fmt::format("p {} must be >= 1", p));
    average_or_lp_pool(g3, planes, x.values<float>().data(), out[0].values<float>().data(), kKind, include_pad, p);
  }
  return out;
}

// ---- global pools: one window covering every spatial position ----

template <PoolKind kKind>
InferResult infer_global_pool(const InferContext& ctx) {
  const ValueInfo& x = ctx.input(0);
  require_dtype(ctx.node, 0, x.dtype, {DType::kFloat32});
  ValueInfo y;
  y.dtype = x.dtype;
  if (x.has_shape) {
    if (x.shape.size() < 3) ctx.node.fail(fmt::format("input shape {} has no spatial axis", shape_str(x.shape)));
    Shape s(x.shape.size(), 1);
    s[0] = x.shape[0];
    s[1] = x.shape[1];
    y = known(x.dtype, s);
  }
  return {{y}, {}};
}

template <PoolKind kKind>
std::vector<Tensor> run_global_pool(const RunContext& ctx) {
  const Tensor& x = ctx.input(0);
  require_dtype(ctx.node, 0, x.dtype(), {DType::kFloat32});
  if (x.rank() < 3) ctx.node.fail(fmt::format("input shape {} has no spatial axis", shape_str(x.shape())));
  Shape s(x.rank(), 1);
  s[0] = x.shape()[0];
  s[1] = x.shape()[1];
  Tensor y(DType::kFloat32, s);
  const int64_t planes = s[0] * s[1];
  const int64_t size = planes == 0 ? 0 : x.numel() / planes;
  const double p = kKind == PoolKind::kLp ? static_cast<double>(ctx.node.attr_int("p", 2)) : 1.0;
  const float* xp = x.values<float>().data();
  std::span<float> out = y.values<float>();
  for (int64_t i = 0; i < planes; ++i, xp += size) {
    if (kKind == PoolKind::kMax) {
      float best = std::numeric_limits<float>::lowest();  // as MaxPool: NaN never wins
      for (int64_t j = 0; j < size; ++j) best = xp[j] > best ? xp[j] : best;
      out[i] = best;
      continue;
    }
    double sum = 0;
    for (int64_t j = 0; j < size; ++j) sum += kKind == PoolKind::kLp ? std::pow(std::fabs(double{xp[j]}), p) : xp[j];
    out[i] = static_cast<float>(kKind == PoolKind::kLp ? std::pow(sum, 1.0 / p) : sum / static_cast<double>(size));
  }
  return {y};
}

}  // namespace

void register_pool_ops(OpRegistry& r) {
  r.add({"", "MaxPool", 1, 17, infer_pool<PoolKind::kMax>, run_pool<PoolKind::kMax>});
  r.add({"", "AveragePool", 1, 17, infer_pool<PoolKind::kAverage>, run_pool<PoolKind::kAverage>});
  r.add({"", "LpPool", 1, 17, infer_pool<PoolKind::kLp>, run_pool<PoolKind::kLp>});
  r.add({"", "GlobalMaxPool", 1, 17, infer_global_pool<PoolKind::kMax>, run_global_pool<PoolKind::kMax>});
  r.add({"", "GlobalAveragePool", 1, 17, infer_global_pool<PoolKind::kAverage>, run_global_pool<PoolKind::kAverage>});
  r.add({"", "GlobalLpPool", 1, 17, infer_global_pool<PoolKind::kLp>, run_global_pool<PoolKind::kLp>});
}

}  // namespace npuforge::model
