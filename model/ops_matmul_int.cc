// Integer matrix products: MatMulInteger (int32 output) and QLinearMatMul (requantized
// 8-bit output), N-D with NumPy broadcasting. Zero points and scales are per tensor, per
// row of A (and of Y) or per column of B, as the ONNX spec allows.
#include <fmt/core.h>

#include "model/conv_setup.h"
#include "model/gemm.h"
#include "model/matmul_setup.h"
#include "model/op_families.h"
#include "model/qlinear_util.h"

namespace npuforge::model {
namespace {

// Rows of A / columns of B as the zero points and scales count them (1-D operands: 1 row
// for A; B's columns are its last axis, or 1 for a vector).
int64_t rows_of(const Shape& a) { return a.size() >= 2 ? a[a.size() - 2] : 1; }
int64_t cols_of(const Shape& b) { return b.size() >= 2 ? b.back() : 1; }

struct IntMatMul {
  MatMulShape shape;
  std::vector<uint32_t> acc;  // int32 bits, [batch..., M, N]
};

IntMatMul int_matmul(const Node& node, const Tensor& a, const Tensor* a_zp, size_t a_zp_index, const Tensor& b,
                     size_t b_index, const Tensor* b_zp, size_t b_zp_index) {
  require_dtype(node, 0, a.dtype(), {DType::kUInt8, DType::kInt8});
  require_dtype(node, b_index, b.dtype(), {DType::kUInt8, DType::kInt8});
  IntMatMul r;
  r.shape = matmul_shape(node, a.shape(), b.shape());
  const auto az = read_zero_point(node, a_zp, fmt::format("input {} (a zero point)", a_zp_index), a.dtype(),
                                  rows_of(a.shape()));
  const auto bz = read_zero_point(node, b_zp, fmt::format("input {} (b zero point)", b_zp_index), b.dtype(),
                                  cols_of(b.shape()));
  const std::vector<uint32_t> as = centred(a, az, r.shape.k);  // zero point per row: K elements each
  const std::vector<uint32_t> bs = centred(b, bz, 1);          // per column: consecutive elements
  const MatMulShape& s = r.shape;
  r.acc.resize(static_cast<size_t>(element_count(s.out)));
  for (size_t i = 0; i < s.a_offset.size(); ++i)
    gemm(s.m, s.n, s.k, MatrixView<uint32_t>::row_major(as.data() + s.a_offset[i], s.k),
         MatrixView<uint32_t>::row_major(bs.data() + s.b_offset[i], s.n),
         r.acc.data() + static_cast<int64_t>(i) * s.m * s.n, s.n, false);
  return r;
}

InferResult infer_matmul_integer(const InferContext& ctx) {
  require_dtype(ctx.node, 0, ctx.input(0).dtype, {DType::kUInt8, DType::kInt8});
  require_dtype(ctx.node, 1, ctx.input(1).dtype, {DType::kUInt8, DType::kInt8});
  return {{matmul_output_info(ctx.node, ctx.input(0), ctx.input(1), DType::kInt32)}, {}};
}

std::vector<Tensor> run_matmul_integer(const RunContext& ctx) {
  const Tensor* a_zp = ctx.has_input(2) ? &ctx.input(2) : nullptr;
  const Tensor* b_zp = ctx.has_input(3) ? &ctx.input(3) : nullptr;
  const IntMatMul mm = int_matmul(ctx.node, ctx.input(0), a_zp, 2, ctx.input(1), 1, b_zp, 3);
  Tensor y(DType::kInt32, mm.shape.out);
  std::span<int32_t> out = y.values<int32_t>();
  for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<int32_t>(mm.acc[i]);
  std::vector<Tensor> r;
  r.push_back(std::move(y));
  return r;
}

// QLinearMatMul inputs: a, a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale, y_zero_point.
InferResult infer_qlinear_matmul(const InferContext& ctx) {
  require_dtype(ctx.node, 0, ctx.input(0).dtype, {DType::kUInt8, DType::kInt8});
  require_dtype(ctx.node, 3, ctx.input(3).dtype, {DType::kUInt8, DType::kInt8});
  const DType out = ctx.input(7).dtype;
  require_dtype(ctx.node, 7, out, {DType::kUInt8, DType::kInt8});
  return {{matmul_output_info(ctx.node, ctx.input(0), ctx.input(3), out)}, {}};
}

std::vector<Tensor> run_qlinear_matmul(const RunContext& ctx) {
  const Node& node = ctx.node;
  const Tensor &a = ctx.input(0), &b = ctx.input(3), &y_zp_t = ctx.input(7);
  require_dtype(node, 7, y_zp_t.dtype(), {DType::kUInt8, DType::kInt8});
  const IntMatMul mm = int_matmul(node, a, &ctx.input(2), 2, b, 3, &ctx.input(5), 5);
  const int64_t rows = rows_of(a.shape()), cols = cols_of(b.shape());
  const PerIndex<float> a_scale = read_scale(node, ctx.input(1), "input 1 (a scale)", rows);
  const PerIndex<float> b_scale = read_scale(node, ctx.input(4), "input 4 (b scale)", cols);
  const PerIndex<float> y_scale = read_scale(node, ctx.input(6), "input 6 (y scale)", rows);
  const PerIndex<int32_t> y_zp = read_zero_point(node, &y_zp_t, "input 7 (y zero point)", y_zp_t.dtype(), rows);
  Tensor y(y_zp_t.dtype(), mm.shape.out);
  const int64_t m = mm.shape.m, n = mm.shape.n;
  for (int64_t i = 0; i < y.numel(); ++i) {
    const int64_t row = i / n % m, col = i % n;
    const float multiplier = a_scale[row] * b_scale[col] / y_scale[row];
    store_8bit(y, i, requantize(static_cast<int32_t>(mm.acc[static_cast<size_t>(i)]), multiplier, y_zp[row], y.dtype()));
  }
  std::vector<Tensor> r;
  r.push_back(std::move(y));
  return r;
}

}  // namespace

void register_matmul_integer_ops(OpRegistry& r) {
  r.add({"", "MatMulInteger", 10, 17, infer_matmul_integer, run_matmul_integer});
  r.add({"", "QLinearMatMul", 10, 17, infer_qlinear_matmul, run_qlinear_matmul});
}

}  // namespace npuforge::model
