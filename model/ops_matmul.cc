// Op family "matmul" (float): Gemm and MatMul on the blocked GEMM of gemm.h. The integer
// forms (MatMulInteger, QLinearMatMul) are in ops_matmul_int.cc.
#include <fmt/core.h>

#include "model/conv_setup.h"
#include "model/gemm.h"
#include "model/matmul_setup.h"
#include "model/op_families.h"

namespace npuforge::model {
namespace {

// ---- Gemm: Y = alpha * op(A) * op(B) + beta * C, C broadcast to [M, N] ----

struct GemmDims {
  int64_t m = 0, k = 0, n = 0;
};

GemmDims gemm_dims(const Node& node, const Shape& a, const Shape& b, bool allow_unknown) {
  if (a.size() != 2 || b.size() != 2)
    node.fail(fmt::format("A {} and B {} must both be 2-D", shape_str(a), shape_str(b)));
  const bool ta = node.attr_int("transA", 0) != 0, tb = node.attr_int("transB", 0) != 0;
  GemmDims d{ta ? a[1] : a[0], ta ? a[0] : a[1], tb ? b[0] : b[1]};
  const int64_t kb = tb ? b[1] : b[0];
  const bool unknown = d.k == kUnknownDim || kb == kUnknownDim;
  if (d.k != kb && !(allow_unknown && unknown))
    node.fail(fmt::format("op(A) {} and op(B) {} do not multiply (transA={}, transB={}): inner dimensions {} and {}",
                          shape_str(a), shape_str(b), ta, tb, d.k, kb));
  return d;
}

// C must broadcast unidirectionally to [M, N].
void check_gemm_c(const Node& node, const Shape& c, const GemmDims& d) {
  if (c.size() > 2) node.fail(fmt::format("C {} has more than 2 dimensions", shape_str(c)));
  const Shape target{d.m, d.n};
  for (size_t i = 0; i < c.size(); ++i) {
    const int64_t t = target[2 - c.size() + i];
    if (c[i] != 1 && c[i] != t && c[i] != kUnknownDim && t != kUnknownDim)
      node.fail(fmt::format("C {} does not broadcast to {}x{}", shape_str(c), d.m, d.n));
  }
}

InferResult infer_gemm(const InferContext& ctx) {
  for (size_t i = 0; i < 3; ++i)
    if (i < 2 || ctx.has_input(i)) require_dtype(ctx.node, i, ctx.input(i).dtype, {DType::kFloat32});
  const ValueInfo &a = ctx.input(0), &b = ctx.input(1);
  ValueInfo out;
  if (a.has_shape && b.has_shape) {
    const GemmDims d = gemm_dims(ctx.node, a.shape, b.shape, true);
    if (ctx.has_input(2) && ctx.input(2).has_shape) check_gemm_c(ctx.node, ctx.input(2).shape, d);
    out = known(DType::kFloat32, {d.m, d.n});
  }
  return {{out}, {}};
}

std::vector<Tensor> run_gemm(const RunContext& ctx) {
  const Node& node = ctx.node;
  const Tensor &a = ctx.input(0), &b = ctx.input(1);
  require_dtype(node, 0, a.dtype(), {DType::kFloat32});
  require_dtype(node, 1, b.dtype(), {DType::kFloat32});
  const GemmDims d = gemm_dims(node, a.shape(), b.shape(), false);
  const bool ta = node.attr_int("transA", 0) != 0, tb = node.attr_int("transB", 0) != 0;
  const float alpha = node.attr_float("alpha", 1.0f), beta = node.attr_float("beta", 1.0f);
  Tensor y(DType::kFloat32, {d.m, d.n});
  const float* ap = a.values<float>().data();
  const float* bp = b.values<float>().data();
  gemm(d.m, d.n, d.k, ta ? MatrixView<float>::transposed(ap, d.m) : MatrixView<float>::row_major(ap, d.k),
       tb ? MatrixView<float>::transposed(bp, d.k) : MatrixView<float>::row_major(bp, d.n), y.values<float>().data(),
       d.n, false);
  std::span<float> out = y.values<float>();
  if (alpha != 1.0f)
    for (float& v : out) v *= alpha;
  if (ctx.has_input(2) && beta != 0.0f) {
    const Tensor& c = ctx.input(2);
    require_dtype(node, 2, c.dtype(), {DType::kFloat32});
    check_gemm_c(node, c.shape(), d);
    const std::span<const float> cv = c.values<float>();
    // Broadcast strides of C over [M, N] (0 along a size-1 or absent axis).
    const int64_t rows = c.rank() == 2 ? c.shape()[0] : 1, cols = c.rank() >= 1 ? c.shape().back() : 1;
    const int64_t row_step = rows == 1 ? 0 : cols, col_step = cols == 1 ? 0 : 1;
    for (int64_t i = 0; i < d.m; ++i)
      for (int64_t j = 0; j < d.n; ++j) out[i * d.n + j] += beta * cv[i * row_step + j * col_step];
  }
  std::vector<Tensor> r;
  r.push_back(std::move(y));
  return r;
}

// ---- MatMul ----

InferResult infer_matmul(const InferContext& ctx) {
  require_dtype(ctx.node, 0, ctx.input(0).dtype, {DType::kFloat32});
  require_dtype(ctx.node, 1, ctx.input(1).dtype, {DType::kFloat32});
  return {{matmul_output_info(ctx.node, ctx.input(0), ctx.input(1), DType::kFloat32)}, {}};
}

std::vector<Tensor> run_matmul(const RunContext& ctx) {
  const Tensor &a = ctx.input(0), &b = ctx.input(1);
  require_dtype(ctx.node, 0, a.dtype(), {DType::kFloat32});
  require_dtype(ctx.node, 1, b.dtype(), {DType::kFloat32});
  const MatMulShape s = matmul_shape(ctx.node, a.shape(), b.shape());
  Tensor y(DType::kFloat32, s.out);
  float* yp = y.values<float>().data();
  for (size_t i = 0; i < s.a_offset.size(); ++i)
    gemm(s.m, s.n, s.k, MatrixView<float>::row_major(a.values<float>().data() + s.a_offset[i], s.k),
         MatrixView<float>::row_major(b.values<float>().data() + s.b_offset[i], s.n),
         yp + static_cast<int64_t>(i) * s.m * s.n, s.n, false);
  std::vector<Tensor> r;
  r.push_back(std::move(y));
  return r;
}

}  // namespace

void register_matmul_ops(OpRegistry& r) {
  r.add({"", "Gemm", 1, 17, infer_gemm, run_gemm});
  r.add({"", "MatMul", 1, 17, infer_matmul, run_matmul});
}

}  // namespace npuforge::model
