#include "model/matmul_setup.h"

#include <fmt/core.h>

namespace npuforge::model {
namespace {

// Rank >= 2 shapes with the 1-D promotion applied.
Shape promote_a(const Shape& a) { return a.size() == 1 ? Shape{1, a[0]} : a; }
Shape promote_b(const Shape& b) { return b.size() == 1 ? Shape{b[0], 1} : b; }

// The result shape from the promoted operands' shapes and the broadcast batch.
Shape result_shape(const Shape& a, const Shape& b, const Shape& batch, int64_t m, int64_t n) {
  Shape out = batch;
  if (a.size() != 1) out.push_back(m);
  if (b.size() != 1) out.push_back(n);
  return out;
}

void check_ranks(const Node& node, const Shape& a, const Shape& b) {
  if (a.empty() || b.empty())
    node.fail(fmt::format("operands of shapes {} and {}: scalars do not multiply as matrices", shape_str(a),
                          shape_str(b)));
}

}  // namespace

MatMulShape matmul_shape(const Node& node, const Shape& a_in, const Shape& b_in) {
  check_ranks(node, a_in, b_in);
  const Shape a = promote_a(a_in), b = promote_b(b_in);
  MatMulShape s;
  s.m = a[a.size() - 2];
  s.k = a.back();
  s.n = b.back();
  if (b[b.size() - 2] != s.k)
    node.fail(fmt::format("shapes {} and {} do not multiply: inner dimensions {} and {}", shape_str(a_in),
                          shape_str(b_in), s.k, b[b.size() - 2]));
  const Shape a_batch(a.begin(), a.end() - 2), b_batch(b.begin(), b.end() - 2);
  const Shape batch = broadcast_shapes(node, a_batch, b_batch);
  s.out = result_shape(a_in, b_in, batch, s.m, s.n);
  // Offsets of every batch entry, broadcasting size-1 axes.
  const int64_t count = element_count(batch);
  const size_t rank = batch.size();
  for (int64_t idx = 0; idx < count; ++idx) {
    int64_t rest = idx, a_off = 0, b_off = 0, a_stride = s.m * s.k, b_stride = s.k * s.n;
    for (size_t i = rank; i-- > 0;) {
      const int64_t coord = rest % batch[i];
      rest /= batch[i];
      const size_t from_end = rank - 1 - i;  // operands align their batch axes at the end
      if (from_end < a_batch.size()) {
        const int64_t d = a_batch[a_batch.size() - 1 - from_end];
        if (d != 1) a_off += coord * a_stride;
        a_stride *= d;
      }
      if (from_end < b_batch.size()) {
        const int64_t d = b_batch[b_batch.size() - 1 - from_end];
        if (d != 1) b_off += coord * b_stride;
        b_stride *= d;
      }
    }
    s.a_offset.push_back(a_off);
    s.b_offset.push_back(b_off);
  }
  return s;
}

ValueInfo matmul_output_info(const Node& node, const ValueInfo& a, const ValueInfo& b, DType dtype) {
  ValueInfo out;
  out.dtype = dtype;
  if (!a.has_shape || !b.has_shape) return out;
  check_ranks(node, a.shape, b.shape);
  const Shape pa = promote_a(a.shape), pb = promote_b(b.shape);
  const int64_t k_a = pa.back(), k_b = pb[pb.size() - 2];
  if (k_a != kUnknownDim && k_b != kUnknownDim && k_a != k_b)
    node.fail(fmt::format("shapes {} and {} do not multiply: inner dimensions {} and {}", shape_str(a.shape),
                          shape_str(b.shape), k_a, k_b));
  const Shape batch = broadcast_shapes(node, Shape(pa.begin(), pa.end() - 2), Shape(pb.begin(), pb.end() - 2));
  return known(dtype, result_shape(a.shape, b.shape, batch, pa[pa.size() - 2], pb.back()));
}

}  // namespace npuforge::model
