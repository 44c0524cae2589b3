// Reductions (ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceProd, ReduceL1,
// ReduceL2, ReduceLogSum, ReduceLogSumExp, ReduceSumSquare) and ArgMax/ArgMin.
//
// Axes come from the 'axes' attribute or, when present, from input 1 (ReduceSum since
// opset 13, the others since 18). No axes reduce everything unless noop_with_empty_axes
// is set. Float sums are accumulated in double over the elements in row-major order and
// rounded once; integer sums in int64, stored back with int32 wrap-around.
#include <cmath>
#include <limits>

#include <fmt/core.h>

#include "model/conv_setup.h"
#include "model/op_families.h"

namespace npuforge::model {
namespace {

enum class Reduce { kSum, kMean, kMax, kMin, kProd, kL1, kL2, kLogSum, kLogSumExp, kSumSquare };

bool integer_allowed(Reduce r) {
  return r == Reduce::kSum || r == Reduce::kMean || r == Reduce::kMax || r == Reduce::kMin || r == Reduce::kProd;
}

void check_reduce_dtype(const Node& node, DType t, Reduce r) {
  if (t == DType::kFloat32) return;
  if (integer_allowed(r) && (t == DType::kInt32 || t == DType::kInt64)) return;
  if ((r == Reduce::kMax || r == Reduce::kMin) && (t == DType::kInt8 || t == DType::kUInt8)) return;
  node.fail(fmt::format("input 0 has type {}, not supported by this reduction", dtype_name(t)));
}

// The reduced axes (a mask over the input's axes); nullopt when they are only known at run
// time. An empty mask with `identity` set means "return the input unchanged".
struct AxesChoice {
  std::optional<std::vector<bool>> mask;
  bool identity = false;
};

AxesChoice choose_axes(const Node& node, int64_t rank, bool axes_input, const Tensor* axes_value) {
  std::vector<int64_t> axes;
  if (axes_input) {
    if (!axes_value) return {};
    axes = axes_value->to_int64s();
  } else {
    axes = node.attr_ints("axes", std::vector<int64_t>{});
  }
  AxesChoice c;
  c.mask = std::vector<bool>(static_cast<size_t>(rank), axes.empty());
  if (axes.empty()) {
    c.identity = node.attr_int("noop_with_empty_axes", 0) != 0;
    return c;
  }
  for (int64_t a : axes) {
    const int64_t k = normalize_axis(node, a, rank);
    if ((*c.mask)[static_cast<size_t>(k)]) node.fail(fmt::format("axis {} is listed twice", a));
    (*c.mask)[static_cast<size_t>(k)] = true;
  }
  return c;
}

Shape reduced_shape(const Shape& in, const std::vector<bool>& mask, bool keepdims) {
  Shape out;
  for (size_t i = 0; i < in.size(); ++i)
    if (!mask[i]) out.push_back(in[i]);
    else if (keepdims) out.push_back(1);
  return out;
}

bool axes_from_input(const Node& node) { return node.inputs.size() > 1 && !node.inputs[1].empty(); }

template <Reduce kOp>
InferResult infer_reduce(const InferContext& ctx) {
  const ValueInfo& x = ctx.input(0);
  check_reduce_dtype(ctx.node, x.dtype, kOp);
  ValueInfo y;
  y.dtype = x.dtype;
  if (!x.has_shape) return {{y}, {}};
  const bool keepdims = ctx.node.attr_int("keepdims", 1) != 0;
  const int64_t rank = static_cast<int64_t>(x.shape.size());
  const AxesChoice c = choose_axes(ctx.node, rank, axes_from_input(ctx.node), ctx.constant(1));
  if (c.identity) return {{known(x.dtype, x.shape)}, {}};
  if (c.mask) return {{known(x.dtype, reduced_shape(x.shape, *c.mask, keepdims))}, {}};
  if (keepdims) return {{known(x.dtype, Shape(x.shape.size(), kUnknownDim))}, {}};
  return {{y}, {}};
}

// Accumulates every input element into its output cell, then finalises.
template <class T, class Acc>
void reduce_into(const Tensor& x, const std::vector<bool>& mask, Reduce op, Tensor& y) {
  const Shape& in = x.shape();
  const size_t rank = in.size();
  // Output stride of each input axis (0 for a reduced axis).
  std::vector<int64_t> out_stride(rank, 0);
  int64_t stride = 1;
  for (size_t i = rank; i-- > 0;)
    if (!mask[i]) out_stride[i] = stride, stride *= in[i];
  const int64_t cells = y.numel(), count = cells == 0 ? 0 : x.numel() / cells;
  Acc init = 0;
  if (op == Reduce::kProd) init = 1;
  if (op == Reduce::kMax) init = std::numeric_limits<Acc>::lowest();
  if (op == Reduce::kMin) init = std::numeric_limits<Acc>::max();
  std::vector<Acc> acc(static_cast<size_t>(cells), init);
  std::span<const T> xv = x.values<T>();
  std::vector<int64_t> idx(rank, 0);
  int64_t out = 0;
  for (int64_t i = 0; i < x.numel(); ++i) {
    const Acc v = static_cast<Acc>(xv[static_cast<size_t>(i)]);
    Acc& a = acc[static_cast<size_t>(out)];
    switch (op) {
      case Reduce::kMax: a = v > a ? v : a; break;
      case Reduce::kMin: a = v < a ? v : a; break;
      case Reduce::kProd: a *= v; break;
      case Reduce::kL1: a += v < 0 ? -v : v; break;
      case Reduce::kL2:
      case Reduce::kSumSquare: a += v * v; break;
      case Reduce::kLogSumExp: a += static_cast<Acc>(std::exp(static_cast<double>(v))); break;
      default: a += v;
    }
    for (size_t d = rank; d-- > 0;) {  // next row-major index, moving the output offset along
      out += out_stride[d];
      if (++idx[d] < in[d]) break;
      out -= out_stride[d] * in[d];
      idx[d] = 0;
    }
  }
  std::span<T> yv = y.values<T>();
  for (int64_t i = 0; i < cells; ++i) {
    Acc a = acc[static_cast<size_t>(i)];
    switch (op) {
      case Reduce::kMean: a = count == 0 ? a : a / static_cast<Acc>(count); break;
      case Reduce::kL2: a = static_cast<Acc>(std::sqrt(static_cast<double>(a))); break;
      case Reduce::kLogSum:
      case Reduce::kLogSumExp: a = static_cast<Acc>(std::log(static_cast<double>(a))); break;
      default: break;
    }
    if constexpr (std::is_integral_v<T>) yv[static_cast<size_t>(i)] = static_cast<T>(static_cast<uint64_t>(a));
    else yv[static_cast<size_t>(i)] = static_cast<T>(a);
  }
}

template <Reduce kOp>
std::vector<Tensor> run_reduce(const RunContext& ctx) {
  const Node& node = ctx.node;
  const Tensor& x = ctx.input(0);
  check_reduce_dtype(node, x.dtype(), kOp);
  const bool from_input = axes_from_input(node);
  if (from_input) require_dtype(node, 1, ctx.input(1).dtype(), {DType::kInt64});
  const AxesChoice c = choose_axes(node, static_cast<int64_t>(x.rank()), from_input, from_input ? &ctx.input(1) : nullptr);
  std::vector<Tensor> out;
  if (c.identity) {
    out.push_back(x);
    return out;
  }
  Tensor y(x.dtype(), reduced_shape(x.shape(), *c.mask, node.attr_int("keepdims", 1) != 0));
  switch (x.dtype()) {
    case DType::kInt32: reduce_into<int32_t, int64_t>(x, *c.mask, kOp, y); break;
    case DType::kInt64: reduce_into<int64_t, int64_t>(x, *c.mask, kOp, y); break;
    case DType::kInt8: reduce_into<int8_t, int64_t>(x, *c.mask, kOp, y); break;
    case DType::kUInt8: reduce_into<uint8_t, int64_t>(x, *c.mask, kOp, y); break;
    default: reduce_into<float, double>(x, *c.mask, kOp, y);
  }
  out.push_back(std::move(y));
  return out;
}

// ---- ArgMax / ArgMin: int64 index along one axis; ties go to the first index, or the
// last with select_last_index ----

template <bool kMax>
InferResult infer_arg(const InferContext& ctx) {
  const ValueInfo& x = ctx.input(0);
  if (x.dtype == DType::kBool) ctx.node.fail("input 0 has type bool, not supported");
  ValueInfo y;
  y.dtype = DType::kInt64;
  if (!x.has_shape) return {{y}, {}};
  const int64_t rank = static_cast<int64_t>(x.shape.size());
  std::vector<bool> mask(static_cast<size_t>(rank), false);
  mask[static_cast<size_t>(normalize_axis(ctx.node, ctx.node.attr_int("axis", 0), rank))] = true;
  return {{known(DType::kInt64, reduced_shape(x.shape, mask, ctx.node.attr_int("keepdims", 1) != 0))}, {}};
}

template <bool kMax, class T>
void arg_into(const Tensor& x, int64_t axis, bool last, Tensor& y) {
  int64_t outer = 1, len = x.shape()[static_cast<size_t>(axis)], inner = 1;
  for (size_t i = 0; i < x.rank(); ++i)
    if (static_cast<int64_t>(i) < axis) outer *= x.shape()[i];
    else if (static_cast<int64_t>(i) > axis) inner *= x.shape()[i];
  std::span<const T> xv = x.values<T>();
  std::span<int64_t> yv = y.values<int64_t>();
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t in = 0; in < inner; ++in) {
      const T* p = xv.data() + o * len * inner + in;
      int64_t best = 0;
      for (int64_t k = 1; k < len; ++k) {
        const T v = p[k * inner], b = p[best * inner];
        const bool better = kMax ? (v > b || (last && v == b)) : (v < b || (last && v == b));
        if (better) best = k;
      }
      yv[static_cast<size_t>(o * inner + in)] = best;
    }
}

template <bool kMax>
std::vector<Tensor> run_arg(const RunContext& ctx) {
  const Node& node = ctx.node;
  const Tensor& x = ctx.input(0);
  const int64_t rank = static_cast<int64_t>(x.rank());
  if (rank == 0) node.fail("input is a scalar; there is no axis to reduce");
  const int64_t axis = normalize_axis(node, node.attr_int("axis", 0), rank);
  if (x.shape()[static_cast<size_t>(axis)] == 0) node.fail(fmt::format("axis {} is empty", axis));
  std::vector<bool> mask(static_cast<size_t>(rank), false);
  mask[static_cast<size_t>(axis)] = true;
  Tensor y(DType::kInt64, reduced_shape(x.shape(), mask, node.attr_int("keepdims", 1) != 0));
  const bool last = ctx.opset >= 12 && node.attr_int("select_last_index", 0) != 0;
  switch (x.dtype()) {
    case DType::kFloat32: arg_into<kMax, float>(x, axis, last, y); break;
    case DType::kInt32: arg_into<kMax, int32_t>(x, axis, last, y); break;
    case DType::kInt64: arg_into<kMax, int64_t>(x, axis, last, y); break;
    case DType::kInt8: arg_into<kMax, int8_t>(x, axis, last, y); break;
    case DType::kUInt8: arg_into<kMax, uint8_t>(x, axis, last, y); break;
    case DType::kBool: node.fail("input 0 has type bool, not supported");
  }
  std::vector<Tensor> out;
  out.push_back(std::move(y));
  return out;
}

}  // namespace

void register_reduce_ops(OpRegistry& r) {
  r.add({"", "ReduceSum", 1, 17, infer_reduce<Reduce::kSum>, run_reduce<Reduce::kSum>});
  r.add({"", "ReduceMean", 1, 17, infer_reduce<Reduce::kMean>, run_reduce<Reduce::kMean>});
  r.add({"", "ReduceMax", 1, 17, infer_reduce<Reduce::kMax>, run_reduce<Reduce::kMax>});
  r.add({"", "ReduceMin", 1, 17, infer_reduce<Reduce::kMin>, run_reduce<Reduce::kMin>});
  r.add({"", "ReduceProd", 1, 17, infer_reduce<Reduce::kProd>, run_reduce<Reduce::kProd>});
  r.add({"", "ReduceL1", 1, 17, infer_reduce<Reduce::kL1>, run_reduce<Reduce::kL1>});
  r.add({"", "ReduceL2", 1, 17, infer_reduce<Reduce::kL2>, run_reduce<Reduce::kL2>});
  r.add({"", "ReduceLogSum", 1, 17, infer_reduce<Reduce::kLogSum>, run_reduce<Reduce::kLogSum>});
  r.add({"", "ReduceLogSumExp", 1, 17, infer_reduce<Reduce::kLogSumExp>, run_reduce<Reduce::kLogSumExp>});
  r.add({"", "ReduceSumSquare", 1, 17, infer_reduce<Reduce::kSumSquare>, run_reduce<Reduce::kSumSquare>});
  r.add({"", "ArgMax", 1, 17, infer_arg<true>, run_arg<true>});
  r.add({"", "ArgMin", 1, 17, infer_arg<false>, run_arg<false>});
}

}  // namespace npuforge::model
