// Element-wise unary maths and activations (part of the "elementwise" family, registered
// by register_elementwise_ops): Sqrt, Exp, Log, Neg, Abs, Reciprocal, Floor, Ceil, Tanh,
// Erf, Sigmoid, Relu, LeakyRelu, HardSigmoid, HardSwish, Elu, Selu, Softplus, PRelu, Clip.
// Formulas are the ONNX operator specification's, computed in float32.
#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/core.h>

#include "model/broadcast.h"
#include "model/dtype_rules.h"
#include "model/elementwise_family.h"
#include "model/wrap_arith.h"

namespace npuforge::model {
namespace {

// ---- float-only unary ops ----

enum class Act {
  kSqrt, kExp, kLog, kReciprocal, kFloor, kCeil, kTanh, kErf, kSigmoid,
  kLeakyRelu, kHardSigmoid, kHardSwish, kElu, kSelu, kSoftplus
};

// The two attributes of the parameterised activations, with the spec's defaults.
struct ActParams {
  float alpha = 0;
  float beta = 0;
};

template <Act kAct>
ActParams read_params(const Node& node) {
  if constexpr (kAct == Act::kLeakyRelu) return {node.attr_float("alpha", 0.01f), 0};
  else if constexpr (kAct == Act::kHardSigmoid) return {node.attr_float("alpha", 0.2f), node.attr_float("beta", 0.5f)};
  else if constexpr (kAct == Act::kElu) return {node.attr_float("alpha", 1.0f), 0};
  else if constexpr (kAct == Act::kSelu)  // beta holds gamma
    return {node.attr_float("alpha", 1.67326319217681884765625f), node.attr_float("gamma", 1.05070102214813232421875f)};
  else return {};
}

template <Act kAct>
float activate(float x, const ActParams& p) {
  if constexpr (kAct == Act::kSqrt) return std::sqrt(x);
  else if constexpr (kAct == Act::kExp) return std::exp(x);
  else if constexpr (kAct == Act::kLog) return std::log(x);
  else if constexpr (kAct == Act::kReciprocal) return 1.0f / x;
  else if constexpr (kAct == Act::kFloor) return std::floor(x);
  else if constexpr (kAct == Act::kCeil) return std::ceil(x);
  else if constexpr (kAct == Act::kTanh) return std::tanh(x);
  else if constexpr (kAct == Act::kErf) return std::erf(x);
  else if constexpr (kAct == Act::kSigmoid) {
    // 1 / (1 + e^-x), in the form that cannot overflow for either sign of x.
    if (x >= 0) return 1.0f / (1.0f + std::exp(-x));
    const float e = std::exp(x);
    return e / (1.0f + e);
  } else if constexpr (kAct == Act::kLeakyRelu) {
    return x < 0 ? p.alpha * x : x;
  } else if constexpr (kAct == Act::kHardSigmoid) {
    return std::max(0.0f, std::min(1.0f, p.alpha * x + p.beta));
  } else if constexpr (kAct == Act::kHardSwish) {
    return x * std::max(0.0f, std::min(1.0f, x * (1.0f / 6.0f) + 0.5f));
  } else if constexpr (kAct == Act::kElu) {
    return x < 0 ? p.alpha * (std::exp(x) - 1.0f) : x;
  } else if constexpr (kAct == Act::kSelu) {
    return x <= 0 ? p.beta * (p.alpha * std::exp(x) - p.alpha) : p.beta * x;
  } else {  // Softplus: ln(e^x + 1), without overflowing e^x for large x
    return x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
  }
}

InferResult infer_float_unary(const InferContext& ctx) {
  require_dtype(ctx.node, "input X", ctx.input(0).dtype, kFloatTypes, ctx.opset);
  return {{ctx.input(0)}, {}};
}

template <Act kAct>
std::vector<Tensor> run_float_unary(const RunContext& ctx) {
  const Tensor& x = ctx.input(0);
  require_dtype(ctx.node, "input X", x.dtype(), kFloatTypes, ctx.opset);
  const ActParams p = read_params<kAct>(ctx.node);
  Tensor y(DType::kFloat32, x.shape());
  const auto xv = x.values<float>();
  const auto yv = y.values<float>();
  for (size_t i = 0; i < xv.size(); ++i) yv[i] = activate<kAct>(xv[i], p);
  return {y};
}

// ---- Relu, Neg, Abs: also defined on integers ----

enum class IntAct { kRelu, kNeg, kAbs };

template <IntAct kAct>
DTypeSet int_act_types(int64_t opset) {
  if constexpr (kAct == IntAct::kRelu) return types_since(opset, 14, kFloatTypes, kSignedTypes);
  else if constexpr (kAct == IntAct::kNeg) return kSignedTypes;
  else return kNumericTypes;
}

template <IntAct kAct>
InferResult infer_int_act(const InferContext& ctx) {
  require_dtype(ctx.node, "input X", ctx.input(0).dtype, int_act_types<kAct>(ctx.opset), ctx.opset);
  return {{ctx.input(0)}, {}};
}

template <IntAct kAct>
std::vector<Tensor> run_int_act(const RunContext& ctx) {
  const Tensor& x = ctx.input(0);
  require_dtype(ctx.node, "input X", x.dtype(), int_act_types<kAct>(ctx.opset), ctx.opset);
  return {visit_numeric(x.dtype(), [&]<class T>(std::type_identity<T>) {
    Tensor y(x.dtype(), x.shape());
    const auto xv = x.values<T>();
    const auto yv = y.values<T>();
    for (size_t i = 0; i < xv.size(); ++i) {
      const T v = xv[i];
      if constexpr (kAct == IntAct::kRelu) yv[i] = v < T{0} ? T{0} : v;
      else if constexpr (kAct == IntAct::kNeg) yv[i] = wrap_sub(T{0}, v);  // -INT_MIN wraps
      else yv[i] = v < T{0} ? wrap_sub(T{0}, v) : v;
    }
    return y;
  })};
}

// ---- PRelu(X, slope): slope broadcasts onto X ----

DTypeSet prelu_types(int64_t opset) { return types_since(opset, 9, kFloatTypes, kWideTypes); }

InferResult infer_prelu(const InferContext& ctx) {
  const ValueInfo& x = ctx.input(0);
  require_dtype(ctx.node, "input X", x.dtype, prelu_types(ctx.opset), ctx.opset);
  require_same_dtype(ctx.node, "input X", x.dtype, "input slope", ctx.input(1).dtype);
  return {{x}, {}};
}

std::vector<Tensor> run_prelu(const RunContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& slope = ctx.input(1);
  require_dtype(ctx.node, "input X", x.dtype(), prelu_types(ctx.opset), ctx.opset);
  require_same_dtype(ctx.node, "input X", x.dtype(), "input slope", slope.dtype());
  if (broadcast_shapes(ctx.node, x.shape(), slope.shape()) != x.shape())
    ctx.node.fail(fmt::format("slope of shape {} does not broadcast onto X of shape {}", shape_str(slope.shape()),
                              shape_str(x.shape())));
  return {visit_numeric(x.dtype(), [&]<class T>(std::type_identity<T>) {
    return broadcast_binary<T, T, T>(ctx.node, x, slope,
                                     [](T v, T s) { return v < T{0} ? wrap_mul(s, v) : v; });
  })};
}

// ---- Clip: bounds are attributes before opset 11, optional scalar inputs from 11 ----

DTypeSet clip_types(int64_t opset) { return types_since(opset, 12, kFloatTypes, kNumericTypes); }

InferResult infer_clip(const InferContext& ctx) {
  const ValueInfo& x = ctx.input(0);
  require_dtype(ctx.node, "input X", x.dtype, clip_types(ctx.opset), ctx.opset);
  for (size_t i : {1, 2})
    if (ctx.has_input(i)) require_same_dtype(ctx.node, "input X", x.dtype, i == 1 ? "min" : "max", ctx.input(i).dtype);
  return {{x}, {}};
}

template <class T>
T clip_bound(const RunContext& ctx, size_t input, T fallback) {
  if (!ctx.has_input(input)) return fallback;
  const Tensor& b = ctx.input(input);
  if (b.numel() != 1)
    ctx.node.fail(fmt::format("{} must be a scalar, got shape {}", input == 1 ? "min" : "max", shape_str(b.shape())));
  return b.values<T>()[0];
}

std::vector<Tensor> run_clip(const RunContext& ctx) {
  const Tensor& x = ctx.input(0);
  require_dtype(ctx.node, "input X", x.dtype(), clip_types(ctx.opset), ctx.opset);
  return {visit_numeric(x.dtype(), [&]<class T>(std::type_identity<T>) {
    T lo = std::numeric_limits<T>::lowest();
    T hi = std::numeric_limits<T>::max();
    if (ctx.opset < 11) {
      if constexpr (std::is_same_v<T, float>) {
        lo = ctx.node.attr_float("min", lo);
        hi = ctx.node.attr_float("max", hi);
      }
    } else {
      for (size_t i : {1, 2})
        if (ctx.has_input(i)) require_same_dtype(ctx.node, "input X", x.dtype(), i == 1 ? "min" : "max", ctx.input(i).dtype());
      lo = clip_bound<T>(ctx, 1, lo);
      hi = clip_bound<T>(ctx, 2, hi);
    }
    Tensor y(x.dtype(), x.shape());
    const auto xv = x.values<T>();
    const auto yv = y.values<T>();
    // min(max(x, lo), hi): every value becomes hi when lo > hi, as in onnxruntime and NumPy.
    for (size_t i = 0; i < xv.size(); ++i) yv[i] = std::min(std::max(xv[i], lo), hi);
    return y;
  })};
}

template <Act kAct>
OpDef float_unary(std::string_view name, int64_t since) {
  return {"", name, since, 17, infer_float_unary, run_float_unary<kAct>};
}

}  // namespace

void register_activation_ops(OpRegistry& r) {
  // min_opset: the version whose semantics is implemented (older ones had legacy attributes).
  r.add(float_unary<Act::kSqrt>("Sqrt", 6));
  r.add(float_unary<Act::kExp>("Exp", 6));
  r.add(float_unary<Act::kLog>("Log", 6));
  r.add(float_unary<Act::kReciprocal>("Reciprocal", 6));
  r.add(float_unary<Act::kFloor>("Floor", 6));
  r.add(float_unary<Act::kCeil>("Ceil", 6));
  r.add(float_unary<Act::kTanh>("Tanh", 6));
  r.add(float_unary<Act::kErf>("Erf", 9));
  r.add(float_unary<Act::kSigmoid>("Sigmoid", 6));
  r.add(float_unary<Act::kLeakyRelu>("LeakyRelu", 6));
  r.add(float_unary<Act::kHardSigmoid>("HardSigmoid", 6));
  r.add(float_unary<Act::kHardSwish>("HardSwish", 14));
  r.add(float_unary<Act::kElu>("Elu", 6));
  r.add(float_unary<Act::kSelu>("Selu", 6));
  r.add(float_unary<Act::kSoftplus>("Softplus", 1));
  r.add({"", "Relu", 6, 17, infer_int_act<IntAct::kRelu>, run_int_act<IntAct::kRelu>});
  r.add({"", "Neg", 6, 17, infer_int_act<IntAct::kNeg>, run_int_act<IntAct::kNeg>});
  r.add({"", "Abs", 6, 17, infer_int_act<IntAct::kAbs>, run_int_act<IntAct::kAbs>});
  r.add({"", "PRelu", 6, 17, infer_prelu, run_prelu});
  r.add({"", "Clip", 6, 17, infer_clip, run_clip});
}

}  // namespace npuforge::model
