#pragma once
// Iteration over NumPy-style broadcast operands (internal to the element-wise, shape and
// quantization op families). The caller has already checked that the shapes broadcast.
#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "model/op.h"
#include "model/tensor.h"

namespace npuforge::model {

// Calls f(out_index, in_index) for every element of `out`, in row-major order, where
// in_index[k] is the element of input k (of shape in[k]) that broadcasts onto it.
template <size_t K, class F>
void for_each_broadcast(const Shape& out, const std::array<const Shape*, K>& in, F&& f) {
  const size_t rank = out.size();
  const int64_t total = element_count(out);
  if (total == 0) return;
  bool all_same = true;
  for (const Shape* s : in) all_same = all_same && *s == out;
  if (all_same) {  // the common case: no index arithmetic
    std::array<int64_t, K> idx{};
    for (int64_t i = 0; i < total; ++i) {
      idx.fill(i);
      f(i, idx);
    }
    return;
  }
  // strides[k][d]: step of input k's flat index when output dimension d advances (0 where
  // input k has extent 1 or lacks the dimension).
  std::array<std::vector<int64_t>, K> strides;
  for (size_t k = 0; k < K; ++k) {
    const Shape& s = *in[k];
    strides[k].assign(rank, 0);
    int64_t step = 1;
    for (size_t j = s.size(); j-- > 0;) {
      const size_t d = rank - s.size() + j;
      if (s[j] != 1) strides[k][d] = step;
      step *= s[j];
    }
  }
  const int64_t inner = rank == 0 ? 1 : out[rank - 1];
  std::vector<int64_t> counter(rank, 0);
  std::array<int64_t, K> base{};  // flat index of each input at the start of the inner row
  for (int64_t i = 0; i < total; i += inner) {
    std::array<int64_t, K> idx = base;
    for (int64_t j = 0; j < inner; ++j) {
      f(i + j, idx);
      if (rank > 0)
        for (size_t k = 0; k < K; ++k) idx[k] += strides[k][rank - 1];
    }
    // Advance the odometer over the outer dimensions.
    for (size_t d = rank < 2 ? 0 : rank - 1; d-- > 0;) {
      for (size_t k = 0; k < K; ++k) base[k] += strides[k][d];
      if (++counter[d] < out[d]) break;
      for (size_t k = 0; k < K; ++k) base[k] -= strides[k][d] * out[d];
      counter[d] = 0;
    }
  }
}

// c[i] = f(a[.], b[.]) over the broadcast of a's and b's shapes.
template <class TA, class TB, class TOut, class F>
Tensor broadcast_binary(const Node& node, const Tensor& a, const Tensor& b, F&& f) {
  Tensor out(dtype_of<TOut>(), broadcast_shapes(node, a.shape(), b.shape()));
  const auto av = a.values<TA>();
  const auto bv = b.values<TB>();
  const auto ov = out.values<TOut>();
  for_each_broadcast<2>(out.shape(), {&a.shape(), &b.shape()},
                        [&](int64_t i, const std::array<int64_t, 2>& j) { ov[i] = f(av[j[0]], bv[j[1]]); });
  return out;
}

// The output info of an element-wise op: the broadcast of every present input's shape
// (unknown when one input's rank is unknown), with element type `dtype`.
inline ValueInfo broadcast_info(const InferContext& ctx, DType dtype) {
  ValueInfo out;
  out.dtype = dtype;
  out.has_shape = true;
  for (size_t i = 0; i < ctx.input_count(); ++i) {
    if (!ctx.has_input(i)) continue;
    const ValueInfo& in = ctx.input(i);
    if (!in.has_shape) return ValueInfo{dtype, false, {}, {}};
    out.shape = broadcast_shapes(ctx.node, out.shape, in.shape);
  }
  return out;
}

}  // namespace npuforge::model
