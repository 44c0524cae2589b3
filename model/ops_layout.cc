// Data movement ops (part of the "shape" family, registered by register_shape_ops): Gather,
// GatherElements, Concat, Split, Slice and Transpose. None computes on values, so every
// element type is accepted.
#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "model/dtype_rules.h"
#include "model/shape_family.h"
#include "model/shape_util.h"

namespace npuforge::model {
namespace {

// Copies `count` elements of `es` bytes.
void copy_elems(std::byte* dst, const std::byte* src, int64_t count, size_t es) {
  if (count > 0) std::memcpy(dst, src, static_cast<size_t>(count) * es);
}

// An index into a dimension of size `dim`: negative counts from the end; out of range fails.
int64_t resolve_index(const Node& node, int64_t i, int64_t dim) {
  const int64_t r = i < 0 ? i + dim : i;
  if (r < 0 || r >= dim) node.fail(fmt::format("index {} is out of range for a dimension of size {}", i, dim));
  return r;
}

// ---- Gather(data, indices, axis) ----

InferResult infer_gather(const InferContext& ctx) {
  const ValueInfo& data = ctx.input(0);
  const ValueInfo& idx = ctx.input(1);
  require_dtype(ctx.node, "input indices", idx.dtype, kIndexTypes, ctx.opset);
  if (!data.has_shape || !idx.has_shape) return {{unknown_shape(data.dtype)}, {}};
  const int64_t axis = normalize_axis(ctx.node, ctx.node.attr_int("axis", 0), static_cast<int64_t>(data.shape.size()));
  Shape out(data.shape.begin(), data.shape.begin() + axis);
  out.insert(out.end(), idx.shape.begin(), idx.shape.end());
  out.insert(out.end(), data.shape.begin() + axis + 1, data.shape.end());
  return {{known(data.dtype, out)}, {}};
}

std::vector<Tensor> run_gather(const RunContext& ctx) {
  const Tensor& data = ctx.input(0);
  const Tensor& idx = ctx.input(1);
  require_dtype(ctx.node, "input indices", idx.dtype(), kIndexTypes, ctx.opset);
  const Shape& ds = data.shape();
  const int64_t axis = normalize_axis(ctx.node, ctx.node.attr_int("axis", 0), static_cast<int64_t>(ds.size()));
  const size_t a = static_cast<size_t>(axis);
  Shape out_shape(ds.begin(), ds.begin() + axis);
  out_shape.insert(out_shape.end(), idx.shape().begin(), idx.shape().end());
  out_shape.insert(out_shape.end(), ds.begin() + axis + 1, ds.end());
  Tensor out(data.dtype(), out_shape);
  const int64_t outer = dims_product(ds, 0, a), dim = ds[a], inner = dims_product(ds, a + 1, ds.size());
  const int64_t count = idx.numel();
  const size_t es = dtype_size(data.dtype());
  std::vector<int64_t> picks(static_cast<size_t>(count));
  for (int64_t k = 0; k < count; ++k) picks[static_cast<size_t>(k)] = resolve_index(ctx.node, idx.int_at(k), dim);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t k = 0; k < count; ++k)
      copy_elems(out.bytes().data() + static_cast<size_t>((o * count + k) * inner) * es,
                 data.bytes().data() + static_cast<size_t>((o * dim + picks[static_cast<size_t>(k)]) * inner) * es,
                 inner, es);
  return {out};
}

// ---- GatherElements(data, indices, axis): output shaped like indices ----

InferResult infer_gather_elements(const InferContext& ctx) {
  const ValueInfo& data = ctx.input(0);
  const ValueInfo& idx = ctx.input(1);
  require_dtype(ctx.node, "input indices", idx.dtype, kIndexTypes, ctx.opset);
  ValueInfo out = idx;
  out.dtype = data.dtype;
  return {{out}, {}};
}

std::vector<Tensor> run_gather_elements(const RunContext& ctx) {
  const Tensor& data = ctx.input(0);
  const Tensor& idx = ctx.input(1);
  require_dtype(ctx.node, "input indices", idx.dtype(), kIndexTypes, ctx.opset);
  const Shape& ds = data.shape();
  if (idx.rank() != ds.size() || ds.empty())
    ctx.node.fail(fmt::format("indices of shape {} must have the rank of data ({}), at least 1", shape_str(idx.shape()),
                              shape_str(ds)));
  const size_t axis = static_cast<size_t>(normalize_axis(ctx.node, ctx.node.attr_int("axis", 0), static_cast<int64_t>(ds.size())));
  for (size_t d = 0; d < ds.size(); ++d)
    if (d != axis && idx.shape()[d] > ds[d])
      ctx.node.fail(fmt::format("indices of shape {} exceed data of shape {} in dimension {}", shape_str(idx.shape()),
                                shape_str(ds), d));
  const std::vector<int64_t> picks = idx.to_int64s();
  const std::vector<int64_t> strides = strides_of(ds);
  Tensor out(data.dtype(), idx.shape());
  int64_t flat = 0;
  copy_mapped(data, out, [&](const std::vector<int64_t>& i) {
    int64_t off = 0;
    for (size_t d = 0; d < ds.size(); ++d)
      off += (d == axis ? resolve_index(ctx.node, picks[static_cast<size_t>(flat)], ds[d]) : i[d]) * strides[d];
    ++flat;
    return off;
  });
  return {out};
}

// ---- Concat(inputs..., axis) ----

InferResult infer_concat(const InferContext& ctx) {
  if (ctx.input_count() == 0) ctx.node.fail("needs at least one input");
  const DType t = ctx.input(0).dtype;
  const ValueInfo* shaped = nullptr;
  for (size_t i = 0; i < ctx.input_count(); ++i) {
    require_same_dtype(ctx.node, "input 0", t, fmt::format("input {}", i), ctx.input(i).dtype);
    if (ctx.input(i).has_shape && !shaped) shaped = &ctx.input(i);
  }
  if (!shaped) return {{unknown_shape(t)}, {}};
  const int64_t rank = static_cast<int64_t>(shaped->shape.size());
  const size_t axis = static_cast<size_t>(normalize_axis(ctx.node, ctx.node.attr_int("axis"), rank));
  Shape out(static_cast<size_t>(rank), kUnknownDim);
  int64_t axis_sum = 0;
  for (size_t i = 0; i < ctx.input_count(); ++i) {
    const ValueInfo& in = ctx.input(i);
    if (!in.has_shape) {
      axis_sum = kUnknownDim;
      continue;
    }
    if (static_cast<int64_t>(in.shape.size()) != rank)
      ctx.node.fail(fmt::format("input {} has rank {}, input 0 rank {}", i, in.shape.size(), rank));
    for (size_t d = 0; d < in.shape.size(); ++d) {
      if (d == axis) continue;
      if (out[d] >= 0 && in.shape[d] >= 0 && out[d] != in.shape[d])
        ctx.node.fail(fmt::format("input {} of shape {} does not match the others in dimension {}", i, shape_str(in.shape), d));
      if (in.shape[d] >= 0) out[d] = in.shape[d];
    }
    axis_sum = (axis_sum < 0 || in.shape[axis] < 0) ? kUnknownDim : axis_sum + in.shape[axis];
  }
  out[axis] = axis_sum;
  return {{known(t, out)}, {}};
}

std::vector<Tensor> run_concat(const RunContext& ctx) {
  if (ctx.inputs.empty()) ctx.node.fail("needs at least one input");
  const Tensor& first = ctx.input(0);
  const int64_t rank = static_cast<int64_t>(first.rank());
  const size_t axis = static_cast<size_t>(normalize_axis(ctx.node, ctx.node.attr_int("axis"), rank));
  Shape out_shape = first.shape();
  out_shape[axis] = 0;
  for (size_t i = 0; i < ctx.inputs.size(); ++i) {
    const Tensor& in = ctx.input(i);
    require_same_dtype(ctx.node, "input 0", first.dtype(), fmt::format("input {}", i), in.dtype());
    for (size_t d = 0; d < out_shape.size(); ++d)
      if (in.rank() != first.rank() || (d != axis && in.shape()[d] != first.shape()[d]))
        ctx.node.fail(fmt::format("input {} of shape {} does not fit input 0 of shape {} on axis {}", i,
                                  shape_str(in.shape()), shape_str(first.shape()), axis));
    out_shape[axis] += in.shape()[axis];
  }
  Tensor out(first.dtype(), out_shape);
  const size_t es = dtype_size(first.dtype());
  const int64_t outer = dims_product(out_shape, 0, axis), inner = dims_product(out_shape, axis + 1, out_shape.size());
  std::byte* dst = out.bytes().data();
  for (int64_t o = 0; o < outer; ++o) {
    for (const Tensor* in : ctx.inputs) {
      const int64_t chunk = in->shape()[axis] * inner;
      copy_elems(dst, in->bytes().data() + static_cast<size_t>(o * chunk) * es, chunk, es);
      dst += static_cast<size_t>(chunk) * es;
    }
  }
  return {out};
}

// ---- Split(input, split, axis): split an attribute before opset 13, an input from 13 ----

// The sizes of the parts of a dimension of size `dim` (kUnknownDim when unknown).
std::vector<int64_t> split_sizes(const Node& node, const IntList& split, int64_t dim) {
  const size_t n = node.outputs.size();
  if (n == 0) node.fail("has no outputs");
  if (split.known()) {
    if (split.values.size() != n)
      node.fail(fmt::format("split has {} entries for {} outputs", split.values.size(), n));
    int64_t sum = 0;
    for (int64_t s : split.values) {
      if (s < 0) node.fail(fmt::format("split [{}] has a negative size", fmt::join(split.values, ",")));
      sum += s;
    }
    if (dim >= 0 && sum != dim) node.fail(fmt::format("split [{}] sums to {}, not the axis size {}", fmt::join(split.values, ","), sum, dim));
    return split.values;
  }
  if (split.state == IntList::State::kUnknown || dim < 0) return std::vector<int64_t>(n, kUnknownDim);
  if (dim % static_cast<int64_t>(n) != 0)
    node.fail(fmt::format("axis size {} does not split into {} equal parts", dim, n));
  return std::vector<int64_t>(n, dim / static_cast<int64_t>(n));
}

InferResult infer_split(const InferContext& ctx) {
  const ValueInfo& x = ctx.input(0);
  const IntList split = int_list(ctx, 13, "split", 1);
  if (!x.has_shape) return {std::vector<ValueInfo>(ctx.node.outputs.size(), unknown_shape(x.dtype)), {}};
  const size_t axis = static_cast<size_t>(normalize_axis(ctx.node, ctx.node.attr_int("axis", 0), static_cast<int64_t>(x.shape.size())));
  InferResult r;
  for (int64_t s : split_sizes(ctx.node, split, x.shape[axis])) {
    ValueInfo part = known(x.dtype, x.shape);
    part.shape[axis] = s;
    r.outputs.push_back(part);
  }
  return r;
}

std::vector<Tensor> run_split(const RunContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Shape& xs = x.shape();
  const size_t axis = static_cast<size_t>(normalize_axis(ctx.node, ctx.node.attr_int("axis", 0), static_cast<int64_t>(xs.size())));
  const std::vector<int64_t> sizes = split_sizes(ctx.node, int_list(ctx, 13, "split", 1), xs[axis]);
  const size_t es = dtype_size(x.dtype());
  const int64_t outer = dims_product(xs, 0, axis), inner = dims_product(xs, axis + 1, xs.size());
  std::vector<Tensor> outs;
  int64_t offset = 0;  // along the axis
  for (int64_t s : sizes) {
    Shape shape = xs;
    shape[axis] = s;
    Tensor part(x.dtype(), shape);
    for (int64_t o = 0; o < outer; ++o)
      copy_elems(part.bytes().data() + static_cast<size_t>(o * s * inner) * es,
                 x.bytes().data() + static_cast<size_t>((o * xs[axis] + offset) * inner) * es, s * inner, es);
    offset += s;
    outs.push_back(std::move(part));
  }
  return outs;
}

// ---- Slice: starts/ends/axes attributes before opset 10; starts, ends, axes, steps inputs from 10 ----

struct AxisSlice {
  int64_t start = 0;
  int64_t step = 1;
  int64_t count = 0;
};

// Clamps start/end into the dimension as the spec says and counts the elements taken.
AxisSlice clamp_slice(int64_t start, int64_t end, int64_t step, int64_t dim) {
  if (dim == 0) return {0, step, 0};
  if (start < 0) start += dim;
  if (end < 0) end += dim;
  if (step > 0) {
    start = std::clamp<int64_t>(start, 0, dim);
    end = std::clamp<int64_t>(end, 0, dim);
  } else {
    start = std::clamp<int64_t>(start, 0, dim - 1);
    end = std::clamp<int64_t>(end, -1, dim - 1);
  }
  const int64_t span = end - start;
  int64_t count = 0;  // ceil(span / step) when positive, in a form that cannot overflow
  if (step > 0 && span > 0) count = 1 + (span - 1) / step;
  if (step < 0 && span < 0) count = 1 + (span + 1) / step;
  return {start, step, count};
}

struct SliceArgs {
  bool known = false;  // false: starts/ends/axes/steps only known at run time
  std::vector<int64_t> starts, ends, axes, steps;
};

SliceArgs slice_args(const Node& node, IntList starts, IntList ends, IntList axes, IntList steps,
                     size_t rank) {
  if (starts.absent() || ends.absent()) node.fail("starts and ends are required");
  SliceArgs a;
  if (!starts.known() || !ends.known() || axes.state == IntList::State::kUnknown ||
      steps.state == IntList::State::kUnknown)
    return a;
  a.known = true;
  a.starts = starts.values;
  a.ends = ends.values;
  const size_t n = a.starts.size();
  if (a.ends.size() != n) node.fail(fmt::format("starts has {} entries, ends {}", n, a.ends.size()));
  if (axes.known()) {
    a.axes = normalize_axes(node, axes.values, static_cast<int64_t>(rank));
  } else {
    if (n > rank) node.fail(fmt::format("{} starts for a tensor of rank {}", n, rank));
    for (size_t i = 0; i < n; ++i) a.axes.push_back(static_cast<int64_t>(i));
  }
  a.steps = steps.known() ? steps.values : std::vector<int64_t>(n, 1);
  if (a.axes.size() != n || a.steps.size() != n)
    node.fail(fmt::format("starts, ends, axes and steps must have the same length ({}, {}, {}, {})", n, a.ends.size(),
                          a.axes.size(), a.steps.size()));
  for (int64_t s : a.steps)
    if (s == 0) node.fail("a step is 0");
  return a;
}

// Per-dimension slices of `shape`; dims with unknown size get count kUnknownDim.
std::vector<AxisSlice> plan_slices(const SliceArgs& a, const Shape& shape) {
  std::vector<AxisSlice> out(shape.size());
  for (size_t d = 0; d < shape.size(); ++d) out[d] = {0, 1, shape[d]};
  for (size_t i = 0; i < a.axes.size(); ++i) {
    const size_t d = static_cast<size_t>(a.axes[i]);
    out[d] = shape[d] < 0 ? AxisSlice{0, 1, kUnknownDim} : clamp_slice(a.starts[i], a.ends[i], a.steps[i], shape[d]);
  }
  return out;
}

InferResult infer_slice(const InferContext& ctx) {
  const ValueInfo& x = ctx.input(0);
  if (!x.has_shape) return {{unknown_shape(x.dtype)}, {}};
  const SliceArgs a = slice_args(ctx.node, int_list(ctx, 10, "starts", 1), int_list(ctx, 10, "ends", 2),
                                 int_list(ctx, 10, "axes", 3), int_list(ctx, 10, "steps", 4), x.shape.size());
  if (!a.known) return {{unknown_dims(x.dtype, x.shape.size())}, {}};
  Shape out;
  for (const AxisSlice& s : plan_slices(a, x.shape)) out.push_back(s.count);
  return {{known(x.dtype, out)}, {}};
}

std::vector<Tensor> run_slice(const RunContext& ctx) {
  const Tensor& x = ctx.input(0);
  const SliceArgs a = slice_args(ctx.node, int_list(ctx, 10, "starts", 1), int_list(ctx, 10, "ends", 2),
                                 int_list(ctx, 10, "axes", 3), int_list(ctx, 10, "steps", 4), x.rank());
  const std::vector<AxisSlice> plan = plan_slices(a, x.shape());
  Shape out_shape;
  for (const AxisSlice& s : plan) out_shape.push_back(s.count);
  Tensor out(x.dtype(), out_shape);
  const std::vector<int64_t> strides = strides_of(x.shape());
  copy_mapped(x, out, [&](const std::vector<int64_t>& i) {
    int64_t off = 0;
    for (size_t d = 0; d < plan.size(); ++d) off += (plan[d].start + i[d] * plan[d].step) * strides[d];
    return off;
  });
  return {out};
}

// ---- Transpose(data, perm): perm defaults to reversing the dimensions ----

std::vector<int64_t> transpose_perm(const Node& node, size_t rank) {
  std::vector<int64_t> perm;
  if (node.has_attr("perm")) {
    perm = node.attr_ints("perm");
    if (perm.size() != rank) node.fail(fmt::format("perm has {} entries for a tensor of rank {}", perm.size(), rank));
    std::vector<bool> seen(rank, false);
    for (int64_t p : perm) {
      if (p < 0 || p >= static_cast<int64_t>(rank) || seen[static_cast<size_t>(p)])
        node.fail(fmt::format("perm [{}] is not a permutation of 0..{}", fmt::join(perm, ","), rank - 1));
      seen[static_cast<size_t>(p)] = true;
    }
  } else {
    for (size_t i = rank; i-- > 0;) perm.push_back(static_cast<int64_t>(i));
  }
  return perm;
}

InferResult infer_transpose(const InferContext& ctx) {
  const ValueInfo& x = ctx.input(0);
  if (!x.has_shape) return {{unknown_shape(x.dtype)}, {}};
  ValueInfo out = known(x.dtype, {});
  const bool named = x.dim_names.size() == x.shape.size();
  for (int64_t p : transpose_perm(ctx.node, x.shape.size())) {
    out.shape.push_back(x.shape[static_cast<size_t>(p)]);
    if (named) out.dim_names.push_back(x.dim_names[static_cast<size_t>(p)]);
  }
  return {{out}, {}};
}

std::vector<Tensor> run_transpose(const RunContext& ctx) {
  const Tensor& x = ctx.input(0);
  const std::vector<int64_t> perm = transpose_perm(ctx.node, x.rank());
  Shape out_shape;
  for (int64_t p : perm) out_shape.push_back(x.shape()[static_cast<size_t>(p)]);
  Tensor out(x.dtype(), out_shape);
  const std::vector<int64_t> in_strides = strides_of(x.shape());
  std::vector<int64_t> strides;  // input stride of each output dimension
  for (int64_t p : perm) strides.push_back(in_strides[static_cast<size_t>(p)]);
  copy_mapped(x, out, [&](const std::vector<int64_t>& i) {
    int64_t off = 0;
    for (size_t d = 0; d < strides.size(); ++d) off += i[d] * strides[d];
    return off;
  });
  return {out};
}

}  // namespace

void register_layout_ops(OpRegistry& r) {
  // min_opset: the version whose semantics is implemented (older ones had legacy attributes).
  r.add({"", "Gather", 1, 17, infer_gather, run_gather});
  r.add({"", "GatherElements", 11, 17, infer_gather_elements, run_gather_elements});
  r.add({"", "Concat", 4, 17, infer_concat, run_concat});
  r.add({"", "Split", 2, 17, infer_split, run_split});
  r.add({"", "Slice", 1, 17, infer_slice, run_slice});
  r.add({"", "Transpose", 1, 17, infer_transpose, run_transpose});
}

}  // namespace npuforge::model
