// Pad, Tile and Expand (part of the "shape" family, registered by register_shape_ops): the
// data movement ops whose output is larger than their input.
#include <algorithm>
#include <string>

#include <fmt/format.h>

#include "model/dtype_rules.h"
#include "model/shape_family.h"
#include "model/shape_util.h"

namespace npuforge::model {
namespace {

// ---- Pad: pads/value attributes before opset 11; pads, constant_value inputs from 11 ----

enum class PadMode { kConstant, kReflect, kEdge };

PadMode pad_mode(const Node& node) {
  const std::string mode = node.attr_string("mode", "constant");
  if (mode == "constant") return PadMode::kConstant;
  if (mode == "reflect") return PadMode::kReflect;
  if (mode == "edge") return PadMode::kEdge;
  node.fail(fmt::format("mode '{}' is not supported (constant, reflect, edge)", mode));
}

DTypeSet pad_types(int64_t opset) {
  if (opset < 11) return kFloatTypes;
  return types_since(opset, 13, kNumericTypes, kAllTypes);
}

// pads as [x1_begin, x2_begin, ..., x1_end, x2_end, ...], checked against the rank.
IntList pad_amounts(const Node& node, const IntList& pads, size_t rank) {
  if (pads.absent()) node.fail("pads are required");
  if (pads.known() && pads.values.size() != 2 * rank)
    node.fail(fmt::format("pads has {} entries for a tensor of rank {} (needs {})", pads.values.size(), rank, 2 * rank));
  return pads;
}

int64_t padded_dim(const Node& node, int64_t dim, int64_t begin, int64_t end) {
  if (dim < 0) return kUnknownDim;
  const int64_t d = dim + begin + end;
  if (d < 0) node.fail(fmt::format("pads {} and {} crop more than the dimension's {} elements", begin, end, dim));
  return d;
}

InferResult infer_pad(const InferContext& ctx) {
  const ValueInfo& x = ctx.input(0);
  require_dtype(ctx.node, "input data", x.dtype, pad_types(ctx.opset), ctx.opset);
  pad_mode(ctx.node);
  if (!x.has_shape) return {{unknown_shape(x.dtype)}, {}};
  const size_t rank = x.shape.size();
  const IntList pads = pad_amounts(ctx.node, int_list(ctx, 11, "pads", 1), rank);
  if (!pads.known()) return {{unknown_dims(x.dtype, rank)}, {}};
  Shape out(rank);
  for (size_t d = 0; d < rank; ++d) out[d] = padded_dim(ctx.node, x.shape[d], pads.values[d], pads.values[d + rank]);
  return {{known(x.dtype, out)}, {}};
}

// For one axis: the input position each output position reads, -1 for the constant.
// Negative pads crop first; reflect and edge then pad the cropped extent (as onnxruntime).
std::vector<int64_t> pad_axis_map(const Node& node, PadMode mode, int64_t dim, int64_t begin, int64_t end) {
  const int64_t out_dim = padded_dim(node, dim, begin, end);
  const int64_t crop = std::max<int64_t>(0, -begin);
  const int64_t n = dim - crop - std::max<int64_t>(0, -end);  // extent left after cropping
  const int64_t pad_begin = std::max<int64_t>(0, begin), pad_end = std::max<int64_t>(0, end);
  if (n < 0) node.fail(fmt::format("pads {} and {} crop more than the dimension's {} elements", begin, end, dim));
  if (mode == PadMode::kReflect && (pad_begin > n - 1 || pad_end > n - 1) && (pad_begin > 0 || pad_end > 0))
    node.fail(fmt::format("reflect pads {} and {} need a dimension larger than both, it has {}", pad_begin, pad_end, n));
  if (mode == PadMode::kEdge && n == 0 && (pad_begin > 0 || pad_end > 0))
    node.fail("edge padding of an empty dimension");
  std::vector<int64_t> map(static_cast<size_t>(out_dim));
  for (int64_t o = 0; o < out_dim; ++o) {
    int64_t s = o - pad_begin;
    if (s < 0 || s >= n) {
      if (mode == PadMode::kConstant) s = -1 - crop;
      else if (mode == PadMode::kEdge) s = s < 0 ? 0 : n - 1;
      else s = s < 0 ? -s : 2 * (n - 1) - s;
    }
    map[static_cast<size_t>(o)] = s + crop;
  }
  return map;
}

std::vector<Tensor> run_pad(const RunContext& ctx) {
  const Tensor& x = ctx.input(0);
  require_dtype(ctx.node, "input data", x.dtype(), pad_types(ctx.opset), ctx.opset);
  const PadMode mode = pad_mode(ctx.node);
  const size_t rank = x.rank();
  const std::vector<int64_t> pads = pad_amounts(ctx.node, int_list(ctx, 11, "pads", 1), rank).values;
  std::vector<std::vector<int64_t>> maps;
  Shape out_shape;
  for (size_t d = 0; d < rank; ++d) {
    maps.push_back(pad_axis_map(ctx.node, mode, x.shape()[d], pads[d], pads[d + rank]));
    out_shape.push_back(static_cast<int64_t>(maps.back().size()));
  }
  const std::vector<int64_t> strides = strides_of(x.shape());
  Tensor out(x.dtype(), out_shape);
  visit_dtype(x.dtype(), [&]<class T>(std::type_identity<T>) {
    T fill{};
    if (ctx.opset < 11) {
      if constexpr (std::is_same_v<T, float>) fill = ctx.node.attr_float("value", 0.0f);
    } else if (ctx.has_input(2)) {
      const Tensor& v = ctx.input(2);
      require_same_dtype(ctx.node, "input data", x.dtype(), "constant_value", v.dtype());
      if (v.numel() != 1) ctx.node.fail(fmt::format("constant_value must be a scalar, has shape {}", shape_str(v.shape())));
      fill = v.values<T>()[0];
    }
    const auto iv = x.values<T>();
    const auto ov = out.values<T>();
    for_each_index(out_shape, [&](int64_t flat, const std::vector<int64_t>& i) {
      int64_t off = 0;
      for (size_t d = 0; d < rank; ++d) {
        const int64_t s = maps[d][static_cast<size_t>(i[d])];
        if (s < 0) {
          ov[flat] = fill;
          return;
        }
        off += s * strides[d];
      }
      ov[flat] = iv[off];
    });
  });
  return {out};
}

// ---- Tile(input, repeats) ----

InferResult infer_tile(const InferContext& ctx) {
  const ValueInfo& x = ctx.input(0);
  if (!x.has_shape) return {{unknown_shape(x.dtype)}, {}};
  const Tensor* reps = ctx.constant(1);
  if (!reps) return {{unknown_dims(x.dtype, x.shape.size())}, {}};
  require_dtype(ctx.node, "input repeats", reps->dtype(), {DType::kInt64}, ctx.opset);
  const std::vector<int64_t> r = reps->to_int64s();
  if (r.size() != x.shape.size())
    ctx.node.fail(fmt::format("repeats has {} entries for a tensor of rank {}", r.size(), x.shape.size()));
  Shape out(x.shape.size());
  for (size_t d = 0; d < out.size(); ++d) {
    if (r[d] < 0) ctx.node.fail(fmt::format("repeats [{}] has a negative entry", fmt::join(r, ",")));
    out[d] = x.shape[d] < 0 ? kUnknownDim : x.shape[d] * r[d];
  }
  return {{known(x.dtype, out)}, {}};
}

std::vector<Tensor> run_tile(const RunContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& reps = ctx.input(1);
  require_dtype(ctx.node, "input repeats", reps.dtype(), {DType::kInt64}, ctx.opset);
  const std::vector<int64_t> r = reps.to_int64s();
  if (r.size() != x.rank()) ctx.node.fail(fmt::format("repeats has {} entries for a tensor of rank {}", r.size(), x.rank()));
  Shape out_shape(x.rank());
  for (size_t d = 0; d < out_shape.size(); ++d) {
    if (r[d] < 0) ctx.node.fail(fmt::format("repeats [{}] has a negative entry", fmt::join(r, ",")));
    out_shape[d] = x.shape()[d] * r[d];
  }
  Tensor out(x.dtype(), out_shape);
  const std::vector<int64_t> strides = strides_of(x.shape());
  copy_mapped(x, out, [&](const std::vector<int64_t>& i) {
    int64_t off = 0;
    for (size_t d = 0; d < i.size(); ++d) off += (i[d] % x.shape()[d]) * strides[d];
    return off;
  });
  return {out};
}

// ---- Expand(input, shape): broadcast of the input's shape and `shape` ----

InferResult infer_expand(const InferContext& ctx) {
  const ValueInfo& x = ctx.input(0);
  const Tensor* shape = ctx.constant(1);
  if (!shape) {
    const ValueInfo& s = ctx.input(1);
    if (x.has_shape && s.has_shape && s.shape.size() == 1 && s.shape[0] >= 0)
      return {{unknown_dims(x.dtype, std::max(x.shape.size(), static_cast<size_t>(s.shape[0])))}, {}};
    return {{unknown_shape(x.dtype)}, {}};
  }
  require_dtype(ctx.node, "input shape", shape->dtype(), {DType::kInt64}, ctx.opset);
  const Shape target = shape->to_int64s();
  if (!x.has_shape) return {{unknown_dims(x.dtype, target.size())}, {}};
  return {{known(x.dtype, broadcast_shapes(ctx.node, x.shape, target))}, {}};
}

std::vector<Tensor> run_expand(const RunContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& shape = ctx.input(1);
  require_dtype(ctx.node, "input shape", shape.dtype(), {DType::kInt64}, ctx.opset);
  const Shape target = shape.to_int64s();
  for (int64_t d : target)
    if (d < 0) ctx.node.fail(fmt::format("shape [{}] has a negative dimension", fmt::join(target, ",")));
  Tensor out(x.dtype(), broadcast_shapes(ctx.node, x.shape(), target));
  const size_t lead = out.rank() - x.rank();  // output dims the input lacks
  const std::vector<int64_t> strides = strides_of(x.shape());
  copy_mapped(x, out, [&](const std::vector<int64_t>& i) {
    int64_t off = 0;
    for (size_t d = 0; d < x.rank(); ++d)
      if (x.shape()[d] != 1) off += i[d + lead] * strides[d];
    return off;
  });
  return {out};
}

}  // namespace

void register_pad_tile_ops(OpRegistry& r) {
  // min_opset: the version whose semantics is implemented (older ones had legacy attributes).
  r.add({"", "Pad", 2, 17, infer_pad, run_pad});
  r.add({"", "Tile", 6, 17, infer_tile, run_tile});
  r.add({"", "Expand", 8, 17, infer_expand, run_expand});
}

}  // namespace npuforge::model
