// Op family "elementwise" (see op_families.h): broadcasting arithmetic, the variadic
// Max/Min/Sum/Mean, comparisons, logic and Where. Unary maths and activations live in
// ops_activation.cc, Pow and Cast in ops_pow_cast.cc; all register from here.
#include <cmath>
#include <limits>
#include <type_traits>

#include <fmt/core.h>

#include "model/broadcast.h"
#include "model/dtype_rules.h"
#include "model/elementwise_family.h"
#include "model/op_families.h"
#include "model/wrap_arith.h"

namespace npuforge::model {
namespace {

// Integer division truncates toward zero (C++ and NumPy's np.trunc(a / b) agree; ONNX's
// backend tests and onnxruntime do this); division by zero has no answer.
template <class T>
T divide(const Node& node, T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    if (b == 0) node.fail("integer division by zero");
    if constexpr (std::is_signed_v<T>)
      if (b == -1) return wrap_sub(T{0}, a);  // INT_MIN / -1 wraps instead of trapping
    return static_cast<T>(a / b);
  } else {
    return a / b;
  }
}

enum class Arith { kAdd, kSub, kMul, kDiv };

DTypeSet arith_types(int64_t opset) {
  // Add/Sub/Mul/Div: float, int32, int64 (7); 8-bit integers from 14.
  return types_since(opset, 14, kWideTypes, kNumericTypes);
}

InferResult infer_arith(const InferContext& ctx) {
  const DType t = ctx.input(0).dtype;
  require_dtype(ctx.node, "input A", t, arith_types(ctx.opset), ctx.opset);
  require_same_dtype(ctx.node, "input A", t, "input B", ctx.input(1).dtype);
  return {{broadcast_info(ctx, t)}, {}};
}

template <Arith kOp>
std::vector<Tensor> run_arith(const RunContext& ctx) {
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  require_dtype(ctx.node, "input A", a.dtype(), arith_types(ctx.opset), ctx.opset);
  require_same_dtype(ctx.node, "input A", a.dtype(), "input B", b.dtype());
  const Node& node = ctx.node;
  return {visit_numeric(a.dtype(), [&]<class T>(std::type_identity<T>) {
    return broadcast_binary<T, T, T>(node, a, b, [&](T x, T y) {
      if constexpr (kOp == Arith::kAdd) return wrap_add(x, y);
      else if constexpr (kOp == Arith::kSub) return wrap_sub(x, y);
      else if constexpr (kOp == Arith::kMul) return wrap_mul(x, y);
      else return divide(node, x, y);
    });
  })};
}

// ---- Max, Min, Sum, Mean: one or more inputs, folded left to right ----

enum class Fold { kMax, kMin, kSum, kMean };

template <Fold kOp>
DTypeSet fold_types(int64_t opset) {
  if constexpr (kOp == Fold::kMax || kOp == Fold::kMin) return types_since(opset, 12, kFloatTypes, kNumericTypes);
  return kFloatTypes;
}

template <Fold kOp>
InferResult infer_fold(const InferContext& ctx) {
  if (ctx.input_count() == 0) ctx.node.fail("needs at least one input");
  const DType t = ctx.input(0).dtype;
  require_dtype(ctx.node, "input 0", t, fold_types<kOp>(ctx.opset), ctx.opset);
  for (size_t i = 1; i < ctx.input_count(); ++i)
    require_same_dtype(ctx.node, "input 0", t, fmt::format("input {}", i), ctx.input(i).dtype);
  return {{broadcast_info(ctx, t)}, {}};
}

template <Fold kOp>
std::vector<Tensor> run_fold(const RunContext& ctx) {
  const Node& node = ctx.node;
  if (ctx.inputs.empty()) node.fail("needs at least one input");
  const DType t = ctx.input(0).dtype();
  require_dtype(node, "input 0", t, fold_types<kOp>(ctx.opset), ctx.opset);
  for (size_t i = 1; i < ctx.inputs.size(); ++i)
    require_same_dtype(node, "input 0", t, fmt::format("input {}", i), ctx.input(i).dtype());
  return {visit_numeric(t, [&]<class T>(std::type_identity<T>) {
    Tensor acc = ctx.input(0);
    for (size_t i = 1; i < ctx.inputs.size(); ++i) {
      acc = broadcast_binary<T, T, T>(node, acc, ctx.input(i), [](T x, T y) {
        if constexpr (kOp == Fold::kMax) return x < y ? y : x;
        else if constexpr (kOp == Fold::kMin) return y < x ? y : x;
        else return wrap_add(x, y);
      });
    }
    if constexpr (kOp == Fold::kMean) {
      const T n = static_cast<T>(ctx.inputs.size());
      for (T& v : acc.values<T>()) v /= n;
    }
    return acc;
  })};
}

// ---- comparisons (output bool) ----

enum class Cmp { kEqual, kLess, kGreater, kLessOrEqual, kGreaterOrEqual };

template <Cmp kOp>
DTypeSet cmp_types(int64_t opset) {
  if constexpr (kOp == Cmp::kEqual)  // bool, int32, int64 (7); every type from 11
    return types_since(opset, 11, DTypeSet{DType::kBool, DType::kInt32, DType::kInt64}, kAllTypes);
  else if constexpr (kOp == Cmp::kLess || kOp == Cmp::kGreater)  // float (7); numeric from 9
    return types_since(opset, 9, kFloatTypes, kNumericTypes);
  else
    return kNumericTypes;
}

template <Cmp kOp>
InferResult infer_cmp(const InferContext& ctx) {
  const DType t = ctx.input(0).dtype;
  require_dtype(ctx.node, "input A", t, cmp_types<kOp>(ctx.opset), ctx.opset);
  require_same_dtype(ctx.node, "input A", t, "input B", ctx.input(1).dtype);
  return {{broadcast_info(ctx, DType::kBool)}, {}};
}

template <Cmp kOp>
std::vector<Tensor> run_cmp(const RunContext& ctx) {
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  require_dtype(ctx.node, "input A", a.dtype(), cmp_types<kOp>(ctx.opset), ctx.opset);
  require_same_dtype(ctx.node, "input A", a.dtype(), "input B", b.dtype());
  return {visit_dtype(a.dtype(), [&]<class T>(std::type_identity<T>) {
    return broadcast_binary<T, T, bool>(ctx.node, a, b, [](T x, T y) {
      if constexpr (kOp == Cmp::kEqual) return x == y;
      else if constexpr (kOp == Cmp::kLess) return x < y;
      else if constexpr (kOp == Cmp::kGreater) return x > y;
      else if constexpr (kOp == Cmp::kLessOrEqual) return x <= y;
      else return x >= y;
    });
  })};
}

// ---- logic on bool tensors ----

enum class Logic { kAnd, kOr, kXor };

InferResult infer_logic(const InferContext& ctx) {
  for (size_t i = 0; i < ctx.input_count(); ++i)
    require_dtype(ctx.node, fmt::format("input {}", i), ctx.input(i).dtype, kBoolType, ctx.opset);
  return {{broadcast_info(ctx, DType::kBool)}, {}};
}

template <Logic kOp>
std::vector<Tensor> run_logic(const RunContext& ctx) {
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  require_dtype(ctx.node, "input A", a.dtype(), kBoolType, ctx.opset);
  require_dtype(ctx.node, "input B", b.dtype(), kBoolType, ctx.opset);
  return {broadcast_binary<bool, bool, bool>(ctx.node, a, b, [](bool x, bool y) {
    if constexpr (kOp == Logic::kAnd) return x && y;
    else if constexpr (kOp == Logic::kOr) return x || y;
    else return x != y;
  })};
}

std::vector<Tensor> run_not(const RunContext& ctx) {
  const Tensor& x = ctx.input(0);
  require_dtype(ctx.node, "input X", x.dtype(), kBoolType, ctx.opset);
  Tensor y(DType::kBool, x.shape());
  const auto xv = x.values<bool>();
  const auto yv = y.values<bool>();
  for (size_t i = 0; i < xv.size(); ++i) yv[i] = !xv[i];
  return {y};
}

// ---- Where(condition, X, Y) ----

InferResult infer_where(const InferContext& ctx) {
  require_dtype(ctx.node, "input condition", ctx.input(0).dtype, kBoolType, ctx.opset);
  const DType t = ctx.input(1).dtype;
  require_same_dtype(ctx.node, "input X", t, "input Y", ctx.input(2).dtype);
  return {{broadcast_info(ctx, t)}, {}};
}

std::vector<Tensor> run_where(const RunContext& ctx) {
  const Tensor& c = ctx.input(0);
  const Tensor& x = ctx.input(1);
  const Tensor& y = ctx.input(2);
  require_dtype(ctx.node, "input condition", c.dtype(), kBoolType, ctx.opset);
  require_same_dtype(ctx.node, "input X", x.dtype(), "input Y", y.dtype());
  const Shape shape = broadcast_shapes(ctx.node, broadcast_shapes(ctx.node, c.shape(), x.shape()), y.shape());
  return {visit_dtype(x.dtype(), [&]<class T>(std::type_identity<T>) {
    Tensor out(x.dtype(), shape);
    const auto cv = c.values<bool>();
    const auto xv = x.values<T>();
    const auto yv = y.values<T>();
    const auto ov = out.values<T>();
    for_each_broadcast<3>(shape, {&c.shape(), &x.shape(), &y.shape()},
                          [&](int64_t i, const std::array<int64_t, 3>& j) { ov[i] = cv[j[0]] ? xv[j[1]] : yv[j[2]]; });
    return out;
  })};
}

InferResult infer_not(const InferContext& ctx) {
  require_dtype(ctx.node, "input X", ctx.input(0).dtype, kBoolType, ctx.opset);
  return {{ctx.input(0)}, {}};
}

}  // namespace

void register_elementwise_ops(OpRegistry& r) {
  // min_opset: the version whose semantics is implemented (older ones had legacy attributes).
  r.add({"", "Add", 7, 17, infer_arith, run_arith<Arith::kAdd>});
  r.add({"", "Sub", 7, 17, infer_arith, run_arith<Arith::kSub>});
  r.add({"", "Mul", 7, 17, infer_arith, run_arith<Arith::kMul>});
  r.add({"", "Div", 7, 17, infer_arith, run_arith<Arith::kDiv>});
  r.add({"", "Max", 6, 17, infer_fold<Fold::kMax>, run_fold<Fold::kMax>});
  r.add({"", "Min", 6, 17, infer_fold<Fold::kMin>, run_fold<Fold::kMin>});
  r.add({"", "Sum", 6, 17, infer_fold<Fold::kSum>, run_fold<Fold::kSum>});
  r.add({"", "Mean", 6, 17, infer_fold<Fold::kMean>, run_fold<Fold::kMean>});
  r.add({"", "Equal", 7, 17, infer_cmp<Cmp::kEqual>, run_cmp<Cmp::kEqual>});
  r.add({"", "Less", 7, 17, infer_cmp<Cmp::kLess>, run_cmp<Cmp::kLess>});
  r.add({"", "Greater", 7, 17, infer_cmp<Cmp::kGreater>, run_cmp<Cmp::kGreater>});
  r.add({"", "LessOrEqual", 12, 17, infer_cmp<Cmp::kLessOrEqual>, run_cmp<Cmp::kLessOrEqual>});
  r.add({"", "GreaterOrEqual", 12, 17, infer_cmp<Cmp::kGreaterOrEqual>, run_cmp<Cmp::kGreaterOrEqual>});
  r.add({"", "And", 7, 17, infer_logic, run_logic<Logic::kAnd>});
  r.add({"", "Or", 7, 17, infer_logic, run_logic<Logic::kOr>});
  r.add({"", "Xor", 7, 17, infer_logic, run_logic<Logic::kXor>});
  r.add({"", "Not", 1, 17, infer_not, run_not});
  r.add({"", "Where", 9, 17, infer_where, run_where});
  register_activation_ops(r);
  register_pow_cast_ops(r);
}

}  // namespace npuforge::model
