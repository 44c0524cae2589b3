#pragma once
// The matrix product every heavy reference op runs on (Conv via im2col, ConvTranspose,
// Gemm, MatMul and their integer forms): C[M x N] = A[M x K] * B[K x N] (+ C), cache
// blocked and packed, single-threaded.
//
// Accumulation order (documented because fp32 results are compared with onnxruntime):
// each C element is one fp32 accumulator that starts at 0 (or at C's value when
// accumulating) and adds A[i][k] * B[k][j] for k = 0, 1, ..., K-1 in that order, each
// product rounded to fp32 before the add (no fused multiply-add). Blocking only changes
// which elements are computed together, never an element's order, so the result does not
// depend on the block sizes.
//
// The integer form works on uint32 values: two's-complement wrap-around, bit-identical to
// int32 arithmetic that wraps, with no signed overflow (callers pass int32 operands cast
// to uint32 and read the result back as int32).
#include <cstdint>

namespace npuforge::model {

// A read-only matrix view with independent row and column strides (in elements), so a
// transposed operand is a view, not a copy.
template <class T>
struct MatrixView {
  const T* data = nullptr;
  int64_t row_stride = 0;
  int64_t col_stride = 1;

  const T& at(int64_t r, int64_t c) const { return data[r * row_stride + c * col_stride]; }
  // Row-major M x N matrix, and its transpose.
  static MatrixView row_major(const T* p, int64_t cols) { return {p, cols, 1}; }
  static MatrixView transposed(const T* p, int64_t cols_of_stored) { return {p, 1, cols_of_stored}; }
};

// C (row-major, leading dimension ldc) = A * B, or C += A * B when `accumulate`.
void gemm(int64_t m, int64_t n, int64_t k, MatrixView<float> a, MatrixView<float> b, float* c, int64_t ldc,
          bool accumulate);
void gemm(int64_t m, int64_t n, int64_t k, MatrixView<uint32_t> a, MatrixView<uint32_t> b, uint32_t* c,
          int64_t ldc, bool accumulate);

}  // namespace npuforge::model
