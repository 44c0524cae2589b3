// Op family "quant" (see op_families.h): QuantizeLinear, DequantizeLinear,
// DynamicQuantizeLinear and the element-wise com.microsoft QLinearAdd / QLinearMul.
// (QLinearConv, QLinearMatMul, ConvInteger and MatMulInteger are in ops_conv/ops_matmul.)
//
// Rounding is the ONNX rule: round half to even, then saturate to the 8-bit range. The
// arithmetic is float32 in the order onnxruntime's reference (non-SIMD) kernels use, so
// results match it bit for bit; its SIMD kernels for QLinearAdd/QLinearMul use fixed-point
// or reassociated float arithmetic and may differ by one step in rare cases.
#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/core.h>

#include "model/broadcast.h"
#include "model/dtype_rules.h"
#include "model/op_families.h"

namespace npuforge::model {
namespace {

constexpr DTypeSet kQuantTypes{DType::kUInt8, DType::kInt8};

// Calls f(std::type_identity<Q>{}) for the 8-bit type `t` (the caller has checked it is one).
template <class F>
decltype(auto) visit_quant(DType t, F&& f) {
  if (t == DType::kUInt8) return f(std::type_identity<uint8_t>{});
  return f(std::type_identity<int8_t>{});
}

// round(v) + zero_point saturated to Q; v = x / scale computed by the caller.
template <class Q>
Q saturate_round(float v, int32_t zero_point) {
  constexpr int32_t qmin = std::numeric_limits<Q>::min(), qmax = std::numeric_limits<Q>::max();
  // Clamping before rounding is exact (the bounds are integers) and keeps the cast defined.
  v = std::clamp(v, static_cast<float>(qmin - zero_point), static_cast<float>(qmax - zero_point));
  return static_cast<Q>(static_cast<int32_t>(std::nearbyint(v)) + zero_point);
}

// Scales and zero points of a (De)QuantizeLinear: one pair per tensor, or (opset 13) one
// per slice of the `axis` dimension.
struct QuantParams {
  std::vector<float> scales;
  std::vector<int32_t> zero_points;
  int64_t channels = 1;  // 1: per tensor
  int64_t inner = 1;     // elements per step of the axis
  size_t channel(int64_t i) const { return channels == 1 ? 0 : static_cast<size_t>((i / inner) % channels); }
};

QuantParams quant_params(const Node& node, int64_t opset, const Shape& x, const Tensor& scale, const Tensor* zero_point) {
  require_dtype(node, "scale", scale.dtype(), kFloatTypes, opset);
  QuantParams p;
  if (scale.numel() != 1 || scale.rank() > 1) {
    if (opset < 13 || scale.rank() != 1)
      node.fail(fmt::format("scale of shape {} must be a scalar{}", shape_str(scale.shape()),
                            opset < 13 ? " before opset 13" : " or 1-D (per axis)"));
    const int64_t axis = normalize_axis(node, node.attr_int("axis", 1), static_cast<int64_t>(x.size()));
    if (scale.numel() != x[static_cast<size_t>(axis)])
      node.fail(fmt::format("{} scales for axis {} of size {}", scale.numel(), axis, x[static_cast<size_t>(axis)]));
    p.channels = scale.numel();
    for (size_t d = static_cast<size_t>(axis) + 1; d < x.size(); ++d) p.inner *= x[d];
  }
  for (float s : scale.values<float>()) {
    if (!(s > 0) || !std::isfinite(s)) node.fail(fmt::format("scale {} is not a positive finite number", s));
    p.scales.push_back(s);
  }
  p.zero_points.assign(p.scales.size(), 0);
  if (zero_point) {
    if (zero_point->numel() != scale.numel())
      node.fail(fmt::format("zero point of shape {} does not match scale of shape {}", shape_str(zero_point->shape()),
                            shape_str(scale.shape())));
    for (size_t i = 0; i < p.zero_points.size(); ++i) p.zero_points[i] = static_cast<int32_t>(zero_point->int_at(static_cast<int64_t>(i)));
  }
  return p;
}

const Tensor* optional_input(const RunContext& ctx, size_t i) { return ctx.has_input(i) ? &ctx.input(i) : nullptr; }

// ---- QuantizeLinear(x, y_scale, y_zero_point): y = saturate(round(x / y_scale) + y_zero_point) ----

constexpr DTypeSet kQuantizeInputTypes{DType::kFloat32, DType::kInt32};

InferResult infer_quantize(const InferContext& ctx) {
  ValueInfo y = ctx.input(0);
  require_dtype(ctx.node, "input x", y.dtype, kQuantizeInputTypes, ctx.opset);
  y.dtype = DType::kUInt8;
  if (ctx.has_input(2)) {
    y.dtype = ctx.input(2).dtype;
    require_dtype(ctx.node, "y_zero_point", y.dtype, kQuantTypes, ctx.opset);
  }
  return {{y}, {}};
}

std::vector<Tensor> run_quantize(const RunContext& ctx) {
  const Tensor& x = ctx.input(0);
  require_dtype(ctx.node, "input x", x.dtype(), kQuantizeInputTypes, ctx.opset);
  const Tensor* zp = optional_input(ctx, 2);
  const DType qtype = zp ? zp->dtype() : DType::kUInt8;
  require_dtype(ctx.node, "y_zero_point", qtype, kQuantTypes, ctx.opset);
  const QuantParams p = quant_params(ctx.node, ctx.opset, x.shape(), ctx.input(1), zp);
  Tensor y(qtype, x.shape());
  visit_quant(qtype, [&]<class Q>(std::type_identity<Q>) {
    const auto yv = y.values<Q>();
    for (int64_t i = 0; i < x.numel(); ++i) {
      const float v = x.dtype() == DType::kFloat32 ? x.values<float>()[static_cast<size_t>(i)] : static_cast<float>(x.int_at(i));
      if (std::isnan(v)) ctx.node.fail("cannot quantize NaN");
      const size_t c = p.channel(i);
      yv[static_cast<size_t>(i)] = saturate_round<Q>(v / p.scales[c], p.zero_points[c]);
    }
  });
  return {y};
}

// ---- DequantizeLinear(x, x_scale, x_zero_point): y = (x - x_zero_point) * x_scale ----

constexpr DTypeSet kDequantizeInputTypes{DType::kUInt8, DType::kInt8, DType::kInt32};

InferResult infer_dequantize(const InferContext& ctx) {
  ValueInfo y = ctx.input(0);
  require_dtype(ctx.node, "input x", y.dtype, kDequantizeInputTypes, ctx.opset);
  if (ctx.has_input(2)) require_same_dtype(ctx.node, "input x", y.dtype, "x_zero_point", ctx.input(2).dtype);
  y.dtype = DType::kFloat32;
  return {{y}, {}};
}

std::vector<Tensor> run_dequantize(const RunContext& ctx) {
  const Tensor& x = ctx.input(0);
  require_dtype(ctx.node, "input x", x.dtype(), kDequantizeInputTypes, ctx.opset);
  const Tensor* zp = optional_input(ctx, 2);
  if (zp) require_same_dtype(ctx.node, "input x", x.dtype(), "x_zero_point", zp->dtype());
  const QuantParams p = quant_params(ctx.node, ctx.opset, x.shape(), ctx.input(1), zp);
  Tensor y(DType::kFloat32, x.shape());
  const auto yv = y.values<float>();
  for (int64_t i = 0; i < x.numel(); ++i) {
    const size_t c = p.channel(i);
    yv[static_cast<size_t>(i)] = static_cast<float>(x.int_at(i) - p.zero_points[c]) * p.scales[c];
  }
  return {y};
}

// ---- DynamicQuantizeLinear(x) -> (y uint8, y_scale, y_zero_point) ----

InferResult infer_dynamic_quantize(const InferContext& ctx) {
  ValueInfo y = ctx.input(0);
  require_dtype(ctx.node, "input x", y.dtype, kFloatTypes, ctx.opset);
  y.dtype = DType::kUInt8;
  return {{y, known(DType::kFloat32, {}), known(DType::kUInt8, {})}, {}};
}

std::vector<Tensor> run_dynamic_quantize(const RunContext& ctx) {
  const Tensor& x = ctx.input(0);
  require_dtype(ctx.node, "input x", x.dtype(), kFloatTypes, ctx.opset);
  // The range always includes 0, so that 0 is exact. An all-zero input would give scale 0
  // in the spec's formula; onnxruntime uses 1 then, and so do we.
  float lo = 0, hi = 0;
  for (float v : x.values<float>()) {
    if (std::isnan(v)) ctx.node.fail("cannot quantize NaN");
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  const float scale = hi == lo ? 1.0f : (hi - lo) / 255.0f;
  if (!std::isfinite(scale)) ctx.node.fail("the input's range is not finite");
  const float zp_float = std::clamp(0.0f - lo / scale, 0.0f, 255.0f);
  const int32_t zp = static_cast<int32_t>(std::nearbyint(zp_float));
  Tensor y(DType::kUInt8, x.shape());
  const auto xv = x.values<float>();
  const auto yv = y.values<uint8_t>();
  for (size_t i = 0; i < xv.size(); ++i) yv[i] = saturate_round<uint8_t>(xv[i] / scale, zp);
  return {y, Tensor::scalar<float>(scale), Tensor::scalar<uint8_t>(static_cast<uint8_t>(zp))};
}

// ---- com.microsoft QLinearAdd / QLinearMul(A, A_scale, A_zp, B, B_scale, B_zp, C_scale, C_zp) ----

enum class QOp { kAdd, kMul };

InferResult infer_qlinear_binary(const InferContext& ctx) {
  const ValueInfo& a = ctx.input(0);
  const ValueInfo& b = ctx.input(3);
  require_dtype(ctx.node, "input A", a.dtype, kQuantTypes, ctx.opset);
  require_same_dtype(ctx.node, "input A", a.dtype, "input B", b.dtype);
  ctx.input(6);  // C_scale is required
  if (!a.has_shape || !b.has_shape) return {{ValueInfo{a.dtype, false, {}, {}}}, {}};
  return {{known(a.dtype, broadcast_shapes(ctx.node, a.shape, b.shape))}, {}};
}

// A per-tensor scale and zero point given as inputs `scale_at` and `scale_at + 1`.
std::pair<float, int32_t> scalar_quant(const RunContext& ctx, size_t scale_at, DType qtype) {
  const Tensor& s = ctx.input(scale_at);
  require_dtype(ctx.node, fmt::format("input {} (scale)", scale_at), s.dtype(), kFloatTypes, ctx.opset);
  if (s.numel() != 1) ctx.node.fail(fmt::format("input {} (scale) must be a scalar, has shape {}", scale_at, shape_str(s.shape())));
  const float scale = s.values<float>()[0];
  if (!(scale > 0) || !std::isfinite(scale)) ctx.node.fail(fmt::format("scale {} is not a positive finite number", scale));
  int32_t zp = 0;
  if (const Tensor* z = optional_input(ctx, scale_at + 1)) {
    require_same_dtype(ctx.node, "input A", qtype, fmt::format("input {} (zero point)", scale_at + 1), z->dtype());
    if (z->numel() != 1) ctx.node.fail(fmt::format("input {} (zero point) must be a scalar", scale_at + 1));
    zp = static_cast<int32_t>(z->int_at(0));
  }
  return {scale, zp};
}

template <QOp kOp>
std::vector<Tensor> run_qlinear_binary(const RunContext& ctx) {
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(3);
  require_dtype(ctx.node, "input A", a.dtype(), kQuantTypes, ctx.opset);
  require_same_dtype(ctx.node, "input A", a.dtype(), "input B", b.dtype());
  const auto [sa, za] = scalar_quant(ctx, 1, a.dtype());
  const auto [sb, zb] = scalar_quant(ctx, 4, a.dtype());
  const auto [sc, zc] = scalar_quant(ctx, 6, a.dtype());
  return {visit_quant(a.dtype(), [&]<class Q>(std::type_identity<Q>) {
    return broadcast_binary<Q, Q, Q>(ctx.node, a, b, [&](Q x, Q y) {
      const float va = sa * static_cast<float>(int32_t{x} - za);  // dequantize both operands
      const float vb = sb * static_cast<float>(int32_t{y} - zb);
      const float vc = (kOp == QOp::kAdd ? va + vb : va * vb) / sc;
      return saturate_round<Q>(vc, zc);
    });
  })};
}

}  // namespace

void register_quant_ops(OpRegistry& r) {
  r.add({"", "QuantizeLinear", 10, 17, infer_quantize, run_quantize});
  r.add({"", "DequantizeLinear", 10, 17, infer_dequantize, run_dequantize});
  r.add({"", "DynamicQuantizeLinear", 11, 17, infer_dynamic_quantize, run_dynamic_quantize});
  r.add({"com.microsoft", "QLinearAdd", 1, 1, infer_qlinear_binary, run_qlinear_binary<QOp::kAdd>});
  r.add({"com.microsoft", "QLinearMul", 1, 1, infer_qlinear_binary, run_qlinear_binary<QOp::kMul>});
}

}  // namespace npuforge::model
