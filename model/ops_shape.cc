// Op family "shape" (see op_families.h): ops that compute or change shapes without moving
// data (Identity, Dropout, Shape, Size, Reshape, Flatten, Squeeze, Unsqueeze) and the ones
// that make tensors (Constant, ConstantOfShape, Range). Data movement (Gather, Concat,
// Split, Slice, Transpose, Pad, Tile, Expand) is in ops_layout.cc / ops_pad_tile.cc.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "model/dtype_rules.h"
#include "model/op_families.h"
#include "model/shape_family.h"
#include "model/shape_util.h"

namespace npuforge::model {
namespace {

// ---- Identity, Dropout (inference: the identity) ----

InferResult infer_identity(const InferContext& ctx) { return {{ctx.input(0)}, {}}; }

std::vector<Tensor> run_identity(const RunContext& ctx) { return {ctx.input(0)}; }

// Dropout's mask is of the data's type before opset 10 and bool from then on.
DType dropout_mask_type(int64_t opset, DType data) { return opset < 10 ? data : DType::kBool; }

// Training mode (opset 12: the optional input 2) draws random masks: not reproducible,
// so only the inference behaviour (or a ratio of 0) is supported.
void check_dropout_mode(const Node& node, int64_t opset, const Tensor* training, const Tensor* ratio) {
  if (opset < 12 || !training) return;
  if (training->numel() != 1) node.fail("training_mode must be a scalar");
  if (training->int_at(0) == 0) return;
  if (ratio && ratio->numel() == 1 && ratio->real_at(0) == 0.0) return;
  node.fail("training_mode = true (random dropout) is not supported");
}

InferResult infer_dropout(const InferContext& ctx) {
  const ValueInfo& x = ctx.input(0);
  require_dtype(ctx.node, "input data", x.dtype, kFloatTypes, ctx.opset);
  // A training_mode known only at run time is checked then.
  if (ctx.opset >= 12 && ctx.constant(2)) check_dropout_mode(ctx.node, ctx.opset, ctx.constant(2), ctx.constant(1));
  InferResult r{{x}, {}};
  if (ctx.node.outputs.size() > 1) {
    ValueInfo mask = x;
    mask.dtype = dropout_mask_type(ctx.opset, x.dtype);
    r.outputs.push_back(mask);
  }
  return r;
}

std::vector<Tensor> run_dropout(const RunContext& ctx) {
  const Tensor& x = ctx.input(0);
  require_dtype(ctx.node, "input data", x.dtype(), kFloatTypes, ctx.opset);
  check_dropout_mode(ctx.node, ctx.opset, ctx.has_input(2) ? &ctx.input(2) : nullptr,
                     ctx.has_input(1) ? &ctx.input(1) : nullptr);
  std::vector<Tensor> out{x};
  if (ctx.node.outputs.size() > 1) {
    const DType mt = dropout_mask_type(ctx.opset, x.dtype());
    Tensor mask(mt, x.shape());
    if (mt == DType::kBool) std::ranges::fill(mask.values<bool>(), true);
    else std::ranges::fill(mask.values<float>(), 1.0f);
    out.push_back(std::move(mask));
  }
  return out;
}

// ---- Shape (start/end from opset 15), Size ----

// The [start, end) range of dimensions Shape reports, clamped as the spec says.
std::pair<int64_t, int64_t> shape_range(const Node& node, int64_t opset, int64_t rank) {
  int64_t start = 0, end = rank;
  if (opset >= 15) {
    start = node.attr_int("start", 0);
    end = node.attr_int("end", rank);
  }
  const auto clamp = [rank](int64_t v) { return std::clamp(v < 0 ? v + rank : v, int64_t{0}, rank); };
  start = clamp(start);
  end = clamp(end);
  return {start, std::max(start, end)};
}

InferResult infer_shape(const InferContext& ctx) {
  const ValueInfo& x = ctx.input(0);
  if (!x.has_shape) return {{unknown_dims(DType::kInt64, 1)}, {std::nullopt}};
  const auto [start, end] = shape_range(ctx.node, ctx.opset, static_cast<int64_t>(x.shape.size()));
  const Shape dims(x.shape.begin() + start, x.shape.begin() + end);
  const bool all_known = std::ranges::none_of(dims, [](int64_t d) { return d < 0; });
  InferResult r{{known(DType::kInt64, {end - start})}, {std::nullopt}};
  if (all_known) r.values[0] = int64_vector(dims);
  return r;
}

std::vector<Tensor> run_shape(const RunContext& ctx) {
  const Shape& s = ctx.input(0).shape();
  const auto [start, end] = shape_range(ctx.node, ctx.opset, static_cast<int64_t>(s.size()));
  return {int64_vector(Shape(s.begin() + start, s.begin() + end))};
}

InferResult infer_size(const InferContext& ctx) {
  const ValueInfo& x = ctx.input(0);
  InferResult r{{known(DType::kInt64, {})}, {std::nullopt}};
  if (x.shape_known()) r.values[0] = Tensor::scalar<int64_t>(element_count(x.shape));
  return r;
}

std::vector<Tensor> run_size(const RunContext& ctx) { return {Tensor::scalar<int64_t>(ctx.input(0).numel())}; }

// ---- Reshape(data, shape), allowzero from opset 14 ----

// The -1 of a reshape of an input with unknown dims: dims copied by 0 cancel out of both
// sides, so [?, 3, 4] -> [0, -1] still gives 12; otherwise it is unknown.
int64_t minus_one_with_unknowns(const Shape& in, const Shape& out, const std::vector<int64_t>& requested, bool allowzero,
                                size_t at) {
  const auto copied = [&](size_t i) { return !allowzero && i < requested.size() && requested[i] == 0; };
  int64_t in_left = 1, out_left = 1;
  for (size_t i = 0; i < in.size(); ++i)
    if (!copied(i)) in_left = (in_left < 0 || in[i] < 0) ? kUnknownDim : in_left * in[i];
  for (size_t i = 0; i < out.size(); ++i)
    if (!copied(i) && i != at) out_left = (out_left < 0 || out[i] < 0) ? kUnknownDim : out_left * out[i];
  return in_left >= 0 && out_left > 0 && in_left % out_left == 0 ? in_left / out_left : kUnknownDim;
}

// The output shape for `requested`; `in` may hold unknown dims (then so may the result).
Shape reshape_target(const Node& node, int64_t opset, const Shape& in, const std::vector<int64_t>& requested) {
  const bool allowzero = opset >= 14 && node.attr_int("allowzero", 0) != 0;
  Shape out(requested.size());
  int64_t infer_at = -1;
  for (size_t i = 0; i < requested.size(); ++i) {
    const int64_t d = requested[i];
    if (d == -1) {
      if (infer_at >= 0) node.fail("shape has more than one -1");
      infer_at = static_cast<int64_t>(i);
      out[i] = 1;
    } else if (d == 0 && !allowzero) {
      if (i >= in.size()) node.fail(fmt::format("shape[{}] = 0 copies a dimension the input (rank {}) lacks", i, in.size()));
      out[i] = in[i];
    } else if (d < -1) {
      node.fail(fmt::format("shape[{}] = {} is negative", i, d));
    } else {
      out[i] = d;
    }
  }
  if (allowzero && infer_at >= 0 && std::ranges::count(requested, 0) > 0)
    node.fail("allowzero = 1 with both 0 and -1 in the shape");
  const int64_t in_count = dims_product(in, 0, in.size());
  const int64_t rest = dims_product(out, 0, out.size());
  if (infer_at < 0) {
    if (in_count >= 0 && rest >= 0 && in_count != rest)
      node.fail(fmt::format("cannot reshape {} ({} elements) to {}", shape_str(in), in_count, shape_str(out)));
    return out;
  }
  const size_t at = static_cast<size_t>(infer_at);
  if (in_count < 0 || rest < 0) {
    out[at] = minus_one_with_unknowns(in, out, requested, allowzero, at);
  } else {
    if (rest == 0 || in_count % rest != 0)
      node.fail(fmt::format("cannot infer the -1 of shape [{}] for an input of shape {}", fmt::join(requested, ","),
                            shape_str(in)));
    out[at] = in_count / rest;
  }
  return out;
}

InferResult infer_reshape(const InferContext& ctx) {
  const ValueInfo& x = ctx.input(0);
  const IntList shape = int_list(ctx, 5, "shape", 1);
  if (shape.absent()) ctx.node.fail("input 1 (shape) is required");
  if (!shape.known()) {
    const ValueInfo& s = ctx.input(1);
    if (s.has_shape && s.shape.size() == 1 && s.shape[0] >= 0) return {{unknown_dims(x.dtype, static_cast<size_t>(s.shape[0]))}, {}};
    return {{unknown_shape(x.dtype)}, {}};
  }
  if (!x.has_shape) {  // the rank is known; dims only where given explicitly
    Shape out(shape.values.size(), kUnknownDim);
    for (size_t i = 0; i < out.size(); ++i)
      if (shape.values[i] > 0) out[i] = shape.values[i];
    return {{known(x.dtype, out)}, {}};
  }
  return {{known(x.dtype, reshape_target(ctx.node, ctx.opset, x.shape, shape.values))}, {}};
}

std::vector<Tensor> run_reshape(const RunContext& ctx) {
  const Tensor& x = ctx.input(0);
  const IntList shape = int_list(ctx, 5, "shape", 1);
  if (shape.absent()) ctx.node.fail("input 1 (shape) is required");
  return {x.reshaped(reshape_target(ctx.node, ctx.opset, x.shape(), shape.values))};
}

// ---- Flatten(input, axis) ----

Shape flatten_target(const Node& node, const Shape& in) {
  const int64_t rank = static_cast<int64_t>(in.size());
  int64_t axis = node.attr_int("axis", 1);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis > rank) node.fail(fmt::format("axis {} is out of range for rank {}", node.attr_int("axis", 1), rank));
  const size_t a = static_cast<size_t>(axis);
  return {dims_product(in, 0, a), dims_product(in, a, in.size())};
}

InferResult infer_flatten(const InferContext& ctx) {
  const ValueInfo& x = ctx.input(0);
  if (!x.has_shape) return {{unknown_dims(x.dtype, 2)}, {}};
  return {{known(x.dtype, flatten_target(ctx.node, x.shape))}, {}};
}

std::vector<Tensor> run_flatten(const RunContext& ctx) {
  const Tensor& x = ctx.input(0);
  return {x.reshaped(flatten_target(ctx.node, x.shape()))};
}

// ---- Squeeze, Unsqueeze: axes attribute before opset 13, input from 13 ----

Shape squeeze_target(const Node& node, const Shape& in, const IntList& axes) {
  std::vector<bool> drop(in.size(), false);
  if (axes.absent()) {
    for (size_t i = 0; i < in.size(); ++i) drop[i] = in[i] == 1;
  } else {
    for (int64_t a : normalize_axes(node, axes.values, static_cast<int64_t>(in.size()))) {
      const size_t i = static_cast<size_t>(a);
      if (in[i] != 1 && in[i] != kUnknownDim)
        node.fail(fmt::format("cannot squeeze axis {} of size {} (input shape {})", a, in[i], shape_str(in)));
      drop[i] = true;
    }
  }
  Shape out;
  for (size_t i = 0; i < in.size(); ++i)
    if (!drop[i]) out.push_back(in[i]);
  return out;
}

InferResult infer_squeeze(const InferContext& ctx) {
  const ValueInfo& x = ctx.input(0);
  const IntList axes = int_list(ctx, 13, "axes", 1);
  const bool unknown_dim = std::ranges::any_of(x.shape, [](int64_t d) { return d < 0; });
  if (!x.has_shape || !(axes.known() || (axes.absent() && !unknown_dim))) return {{unknown_shape(x.dtype)}, {}};
  return {{known(x.dtype, squeeze_target(ctx.node, x.shape, axes))}, {}};
}

std::vector<Tensor> run_squeeze(const RunContext& ctx) {
  const Tensor& x = ctx.input(0);
  return {x.reshaped(squeeze_target(ctx.node, x.shape(), int_list(ctx, 13, "axes", 1)))};
}

Shape unsqueeze_target(const Node& node, const Shape& in, const IntList& axes) {
  if (axes.absent()) node.fail("axes are required");
  const int64_t out_rank = static_cast<int64_t>(in.size() + axes.values.size());
  std::vector<bool> inserted(static_cast<size_t>(out_rank), false);
  for (int64_t a : normalize_axes(node, axes.values, out_rank)) inserted[static_cast<size_t>(a)] = true;
  Shape out;
  size_t next = 0;
  for (int64_t i = 0; i < out_rank; ++i) out.push_back(inserted[static_cast<size_t>(i)] ? 1 : in[next++]);
  return out;
}

InferResult infer_unsqueeze(const InferContext& ctx) {
  const ValueInfo& x = ctx.input(0);
  const IntList axes = int_list(ctx, 13, "axes", 1);
  if (!x.has_shape || !axes.known()) {
    if (axes.absent()) ctx.node.fail("axes are required");
    return {{unknown_shape(x.dtype)}, {}};
  }
  return {{known(x.dtype, unsqueeze_target(ctx.node, x.shape, axes))}, {}};
}

std::vector<Tensor> run_unsqueeze(const RunContext& ctx) {
  const Tensor& x = ctx.input(0);
  return {x.reshaped(unsqueeze_target(ctx.node, x.shape(), int_list(ctx, 13, "axes", 1)))};
}

// ---- Constant, ConstantOfShape, Range ----

Tensor constant_value(const Node& node) {
  if (node.has_attr("value")) return node.attr_tensor("value");
  if (node.has_attr("value_float")) return Tensor::scalar<float>(node.attr_float("value_float"));
  if (node.has_attr("value_int")) return Tensor::scalar<int64_t>(node.attr_int("value_int"));
  if (node.has_attr("value_floats")) {
    const std::vector<float> v = node.attr_floats("value_floats");
    return Tensor::from<float>({static_cast<int64_t>(v.size())}, v);
  }
  if (node.has_attr("value_ints")) return int64_vector(node.attr_ints("value_ints"));
  for (const char* unsupported : {"sparse_value", "value_string", "value_strings"})
    if (node.has_attr(unsupported)) node.fail(fmt::format("attribute '{}' is not supported", unsupported));
  node.fail("needs one of the attributes value, value_float(s), value_int(s)");
}

InferResult infer_constant(const InferContext& ctx) {
  Tensor v = constant_value(ctx.node);
  return {{known(v.dtype(), v.shape())}, {std::move(v)}};
}

std::vector<Tensor> run_constant(const RunContext& ctx) { return {constant_value(ctx.node)}; }

Tensor constant_of_shape_fill(const Node& node) {
  if (!node.has_attr("value")) return Tensor::scalar<float>(0.0f);
  const Tensor& v = node.attr_tensor("value");
  if (v.numel() != 1) node.fail(fmt::format("attribute 'value' must hold one element, has {}", v.numel()));
  return v;
}

InferResult infer_constant_of_shape(const InferContext& ctx) {
  const DType t = constant_of_shape_fill(ctx.node).dtype();
  require_dtype(ctx.node, "input 0 (shape)", ctx.input(0).dtype, {DType::kInt64}, ctx.opset);
  const Tensor* shape = ctx.constant(0);
  if (!shape) {
    const ValueInfo& s = ctx.input(0);
    if (s.has_shape && s.shape.size() == 1 && s.shape[0] >= 0) return {{unknown_dims(t, static_cast<size_t>(s.shape[0]))}, {}};
    return {{unknown_shape(t)}, {}};
  }
  Shape out = shape->to_int64s();
  for (int64_t d : out)
    if (d < 0) ctx.node.fail(fmt::format("shape [{}] has a negative dimension", fmt::join(out, ",")));
  return {{known(t, out)}, {}};
}

std::vector<Tensor> run_constant_of_shape(const RunContext& ctx) {
  const Tensor fill = constant_of_shape_fill(ctx.node);
  const Tensor& shape_in = ctx.input(0);
  require_dtype(ctx.node, "input 0 (shape)", shape_in.dtype(), {DType::kInt64}, ctx.opset);
  const Shape shape = shape_in.to_int64s();
  for (int64_t d : shape)
    if (d < 0) ctx.node.fail(fmt::format("shape [{}] has a negative dimension", fmt::join(shape, ",")));
  Tensor out(fill.dtype(), shape);
  const size_t es = dtype_size(fill.dtype());
  auto dst = out.bytes();
  for (size_t i = 0; i < dst.size(); i += es) std::copy_n(fill.bytes().begin(), es, dst.begin() + static_cast<ptrdiff_t>(i));
  return {out};
}

constexpr DTypeSet kRangeTypes{DType::kFloat32, DType::kInt32, DType::kInt64};

constexpr int64_t kMaxRangeCount = int64_t{1} << 40;  // a corrupt model, not a real range

// Number of elements of Range(start, limit, delta): max(ceil((limit - start) / delta), 0).
template <class T>
int64_t range_count(const Node& node, T start, T limit, T delta) {
  if (delta == T{0}) node.fail("delta is zero");
  if constexpr (std::is_integral_v<T>) {
    // Exact in 128 bits: limit - start and the count cannot overflow there.
    const __int128 diff = static_cast<__int128>(limit) - start;
    if (diff == 0 || (diff > 0) != (delta > 0)) return 0;
    const __int128 a = diff < 0 ? -diff : diff;
    const __int128 b = delta < 0 ? -static_cast<__int128>(delta) : static_cast<__int128>(delta);
    const __int128 n = (a + b - 1) / b;
    if (n > kMaxRangeCount) node.fail(fmt::format("would make more than {} elements", kMaxRangeCount));
    return static_cast<int64_t>(n);
  } else {
    const double n = std::ceil(static_cast<double>(limit - start) / static_cast<double>(delta));
    if (!(n >= 0)) return 0;
    if (n > static_cast<double>(kMaxRangeCount)) node.fail(fmt::format("would make more than {} elements", kMaxRangeCount));
    return static_cast<int64_t>(n);
  }
}

InferResult infer_range(const InferContext& ctx) {
  const DType t = ctx.input(0).dtype;
  require_dtype(ctx.node, "input start", t, kRangeTypes, ctx.opset);
  require_same_dtype(ctx.node, "input start", t, "input limit", ctx.input(1).dtype);
  require_same_dtype(ctx.node, "input start", t, "input delta", ctx.input(2).dtype);
  if (!ctx.constant(0) || !ctx.constant(1) || !ctx.constant(2)) return {{unknown_dims(t, 1)}, {}};
  const int64_t n = visit_numeric(t, [&]<class T>(std::type_identity<T>) {
    return range_count<T>(ctx.node, ctx.constant(0)->values<T>()[0], ctx.constant(1)->values<T>()[0],
                          ctx.constant(2)->values<T>()[0]);
  });
  return {{known(t, {n})}, {}};
}

std::vector<Tensor> run_range(const RunContext& ctx) {
  const DType t = ctx.input(0).dtype();
  require_dtype(ctx.node, "input start", t, kRangeTypes, ctx.opset);
  for (size_t i = 0; i < 3; ++i) {
    require_same_dtype(ctx.node, "input start", t, fmt::format("input {}", i), ctx.input(i).dtype());
    if (ctx.input(i).numel() != 1) ctx.node.fail(fmt::format("input {} must be a scalar", i));
  }
  return {visit_numeric(t, [&]<class T>(std::type_identity<T>) {
    const T start = ctx.input(0).values<T>()[0];
    const T delta = ctx.input(2).values<T>()[0];
    const int64_t n = range_count<T>(ctx.node, start, ctx.input(1).values<T>()[0], delta);
    Tensor out(t, {n});
    // Accumulated like the spec's function body (a Loop adding delta) and onnxruntime.
    T v = start;
    for (T& o : out.values<T>()) {
      o = v;
      v = static_cast<T>(v + delta);
    }
    return out;
  })};
}

}  // namespace

void register_shape_ops(OpRegistry& r) {
  // min_opset: the version whose semantics is implemented (older ones had legacy attributes).
  r.add({"", "Identity", 1, 17, infer_identity, run_identity});
  r.add({"", "Dropout", 7, 17, infer_dropout, run_dropout});
  r.add({"", "Shape", 1, 17, infer_shape, run_shape});
  r.add({"", "Size", 1, 17, infer_size, run_size});
  r.add({"", "Reshape", 5, 17, infer_reshape, run_reshape});
  r.add({"", "Flatten", 1, 17, infer_flatten, run_flatten});
  r.add({"", "Squeeze", 1, 17, infer_squeeze, run_squeeze});
  r.add({"", "Unsqueeze", 1, 17, infer_unsqueeze, run_unsqueeze});
  r.add({"", "Constant", 1, 17, infer_constant, run_constant});
  r.add({"", "ConstantOfShape", 9, 17, infer_constant_of_shape, run_constant_of_shape});
  r.add({"", "Range", 11, 17, infer_range, run_range});
  register_layout_ops(r);
  register_pad_tile_ops(r);
}

}  // namespace npuforge::model
