// Pow and Cast (part of the "elementwise" family, registered by register_elementwise_ops):
// the two element-wise ops whose input and output element types differ.
#include <cmath>
#include <limits>
#include <type_traits>

#include <fmt/core.h>

#include "model/broadcast.h"
#include "model/dtype_rules.h"
#include "model/elementwise_family.h"
#include "model/wrap_arith.h"

namespace npuforge::model {
namespace {

// Float to integer conversion truncates toward zero; the ONNX Cast spec leaves values
// outside the target's range undefined (and C++ too), so those are an error, never garbage.
template <class To>
To float_to_int(const Node& node, double v) {
  const double t = std::trunc(v);
  const double lowest = static_cast<double>(std::numeric_limits<To>::lowest());
  const double past_max = std::ldexp(1.0, std::numeric_limits<To>::digits);  // max + 1, exact
  if (!(t >= lowest && t < past_max))
    node.fail(fmt::format("value {} is out of the range of {} (ONNX leaves this conversion undefined)", v,
                          dtype_name(dtype_of<To>())));
  return static_cast<To>(t);
}

// ---- Pow(X, Y): base type T, exponent type T1 ----

DTypeSet pow_base_types(int64_t opset) { return types_since(opset, 12, kFloatTypes, kWideTypes); }
DTypeSet pow_exponent_types(int64_t opset) { return types_since(opset, 12, kFloatTypes, kNumericTypes); }

void check_pow_types(const Node& node, int64_t opset, DType base, DType exponent) {
  require_dtype(node, "input X", base, pow_base_types(opset), opset);
  require_dtype(node, "input Y", exponent, pow_exponent_types(opset), opset);
}

InferResult infer_pow(const InferContext& ctx) {
  check_pow_types(ctx.node, ctx.opset, ctx.input(0).dtype, ctx.input(1).dtype);
  return {{broadcast_info(ctx, ctx.input(0).dtype)}, {}};
}

// Integer power by squaring, wrapping like the other integer ops; negative exponents give
// the truncated reciprocal (0 unless |x| == 1), 0 to a negative power has no answer.
template <class T>
T int_pow(const Node& node, T x, int64_t e) {
  if (e < 0) {
    if (x == 0) node.fail("0 raised to a negative integer power");
    if (x == 1) return 1;
    if constexpr (std::is_signed_v<T>)
      if (x == -1) return (e % 2 == 0) ? T{1} : T{-1};
    return 0;
  }
  T result = 1;
  T base = x;
  while (e > 0) {
    if (e & 1) result = wrap_mul(result, base);
    base = wrap_mul(base, base);
    e >>= 1;
  }
  return result;
}

template <class T, class E>
T pow_one(const Node& node, T x, E y) {
  if constexpr (std::is_same_v<T, float>) {
    if constexpr (std::is_same_v<E, float>) return std::pow(x, y);
    else return static_cast<float>(std::pow(static_cast<double>(x), static_cast<double>(y)));
  } else if constexpr (std::is_same_v<E, float>) {
    return float_to_int<T>(node, std::pow(static_cast<double>(x), static_cast<double>(y)));
  } else {
    return int_pow<T>(node, x, static_cast<int64_t>(y));
  }
}

std::vector<Tensor> run_pow(const RunContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& y = ctx.input(1);
  check_pow_types(ctx.node, ctx.opset, x.dtype(), y.dtype());
  return {visit_numeric(x.dtype(), [&]<class T>(std::type_identity<T>) {
    return visit_numeric(y.dtype(), [&]<class E>(std::type_identity<E>) {
      return broadcast_binary<T, E, T>(ctx.node, x, y, [&](T b, E e) { return pow_one<T, E>(ctx.node, b, e); });
    });
  })};
}

// ---- Cast(input, to) ----

// TensorProto.DataType numbers of the ONNX protobuf schema.
DType cast_target(const Node& node) {
  const int64_t to = node.attr_int("to");
  switch (to) {
    case 1: return DType::kFloat32;
    case 2: return DType::kUInt8;
    case 3: return DType::kInt8;
    case 6: return DType::kInt32;
    case 7: return DType::kInt64;
    case 9: return DType::kBool;
    default: break;
  }
  static constexpr const char* kOnnxNames[] = {"UNDEFINED", "FLOAT", "UINT8",  "INT8",      "UINT16",    "INT16",
                                               "INT32",     "INT64", "STRING", "BOOL",      "FLOAT16",   "DOUBLE",
                                               "UINT32",    "UINT64", "COMPLEX64", "COMPLEX128", "BFLOAT16"};
  const std::string name = to >= 0 && to < 17 ? kOnnxNames[to] : "unknown";
  node.fail(fmt::format("attribute 'to' = {} ({}): element type not supported (supported: {})", to, name,
                        kAllTypes.str()));
}

template <class From, class To>
To convert(const Node& node, From v) {
  if constexpr (std::is_same_v<To, bool>) return v != From{0};  // NaN is nonzero: true
  else if constexpr (std::is_same_v<From, bool>) return static_cast<To>(v ? 1 : 0);
  else if constexpr (std::is_same_v<From, float> && std::is_integral_v<To>) return float_to_int<To>(node, v);
  else return static_cast<To>(v);  // integer narrowing wraps (two's complement, C++20)
}

InferResult infer_cast(const InferContext& ctx) {
  ValueInfo out = ctx.input(0);
  out.dtype = cast_target(ctx.node);
  return {{out}, {}};
}

std::vector<Tensor> run_cast(const RunContext& ctx) {
  const Tensor& x = ctx.input(0);
  const DType to = cast_target(ctx.node);
  if (to == x.dtype()) return {x};
  return {visit_dtype(x.dtype(), [&]<class From>(std::type_identity<From>) {
    return visit_dtype(to, [&]<class To>(std::type_identity<To>) {
      Tensor y(to, x.shape());
      const auto xv = x.values<From>();
      const auto yv = y.values<To>();
      for (size_t i = 0; i < xv.size(); ++i) yv[i] = convert<From, To>(ctx.node, xv[i]);
      return y;
    });
  })};
}

}  // namespace

void register_pow_cast_ops(OpRegistry& r) {
  // min_opset: the version whose semantics is implemented (older ones had legacy attributes).
  r.add({"", "Pow", 7, 17, infer_pow, run_pow});
  r.add({"", "Cast", 6, 17, infer_cast, run_cast});
}

}  // namespace npuforge::model
