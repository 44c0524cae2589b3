#pragma once
// Helpers of the shape and layout op families (internal): integer-list operands that moved
// from attributes to inputs at some opset, row-major strides and index iteration.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/core.h>

#include "model/dtype_rules.h"
#include "model/op.h"

namespace npuforge::model {

// An integer list operand (axes, pads, starts, shape, ...) as far as it is known.
struct IntList {
  enum class State { kAbsent, kUnknown, kKnown };
  State state = State::kAbsent;
  std::vector<int64_t> values;
  bool absent() const { return state == State::kAbsent; }
  bool known() const { return state == State::kKnown; }
};

// The list comes from attribute `attr` before opset `input_since` and from input `input`
// from then on. `value` is the input's value (nullptr when only known at run time).
inline IntList int_list(const Node& node, int64_t opset, int64_t input_since, std::string_view attr,
                        size_t input, bool has_input, const Tensor* value) {
  if (opset < input_since) {
    if (!node.has_attr(attr)) return {};
    return {IntList::State::kKnown, node.attr_ints(attr)};
  }
  if (!has_input) return {};
  if (!value) return {IntList::State::kUnknown, {}};
  require_dtype(node, fmt::format("input {} ({})", input, attr), value->dtype(), kIndexTypes, opset);
  if (value->rank() > 1) node.fail(fmt::format("input {} ({}) must be 1-D, got shape {}", input, attr, shape_str(value->shape())));
  return {IntList::State::kKnown, value->to_int64s()};
}

inline IntList int_list(const InferContext& ctx, int64_t input_since, std::string_view attr, size_t input) {
  return int_list(ctx.node, ctx.opset, input_since, attr, input, ctx.has_input(input), ctx.constant(input));
}

inline IntList int_list(const RunContext& ctx, int64_t input_since, std::string_view attr, size_t input) {
  return int_list(ctx.node, ctx.opset, input_since, attr, input, ctx.has_input(input),
                  ctx.has_input(input) ? &ctx.input(input) : nullptr);
}

// Normalises every axis against `rank` and rejects duplicates.
inline std::vector<int64_t> normalize_axes(const Node& node, const std::vector<int64_t>& axes, int64_t rank) {
  std::vector<int64_t> out;
  std::vector<bool> seen(static_cast<size_t>(rank), false);
  for (int64_t a : axes) {
    const int64_t n = normalize_axis(node, a, rank);
    if (seen[static_cast<size_t>(n)]) node.fail(fmt::format("axis {} appears twice", a));
    seen[static_cast<size_t>(n)] = true;
    out.push_back(n);
  }
  return out;
}

// Row-major element strides of `shape`.
inline std::vector<int64_t> strides_of(const Shape& shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;) s[i - 1] = s[i] * shape[i];
  return s;
}

// Calls f(flat, index) for every multi-index of `shape` in row-major order.
template <class F>
void for_each_index(const Shape& shape, F&& f) {
  const int64_t total = element_count(shape);
  std::vector<int64_t> idx(shape.size(), 0);
  for (int64_t flat = 0; flat < total; ++flat) {
    f(flat, static_cast<const std::vector<int64_t>&>(idx));
    for (size_t d = shape.size(); d-- > 0;) {
      if (++idx[d] < shape[d]) break;
      idx[d] = 0;
    }
  }
}

// out[i] = in[src(index of i)] for every element of `out` (same element type as `in`).
template <class F>
void copy_mapped(const Tensor& in, Tensor& out, F&& src) {
  visit_dtype(in.dtype(), [&]<class T>(std::type_identity<T>) {
    const auto iv = in.values<T>();
    const auto ov = out.values<T>();
    for_each_index(out.shape(), [&](int64_t flat, const std::vector<int64_t>& idx) { ov[flat] = iv[src(idx)]; });
  });
}

// A 1-D int64 tensor (Shape's output, shape values).
inline Tensor int64_vector(const std::vector<int64_t>& v) {
  return Tensor::from<int64_t>({static_cast<int64_t>(v.size())}, v);
}

// Product of dims [begin, end) of `shape`, kUnknownDim when one of them is unknown.
inline int64_t dims_product(const Shape& shape, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t i = begin; i < end; ++i) {
    if (shape[i] < 0) return kUnknownDim;
    p *= shape[i];
  }
  return p;
}

// Info of an output whose rank is known but none of its dimensions.
inline ValueInfo unknown_dims(DType dtype, size_t rank) { return known(dtype, Shape(rank, kUnknownDim)); }

inline ValueInfo unknown_shape(DType dtype) {
  ValueInfo v;
  v.dtype = dtype;
  return v;
}

}  // namespace npuforge::model
