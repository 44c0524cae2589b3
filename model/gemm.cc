#include "model/gemm.h"

#include <algorithm>
#include <vector>

namespace npuforge::model {
namespace {

// Register tile (kMr x kNr accumulators) and cache blocks: a kKc x kNc panel of B
// (512 KiB of fp32) stays in L2, a kMc x kKc block of A (64 KiB) in L1/L2. The constant
// trip counts of the tile loops let the compiler keep the tile in vector registers.
constexpr int64_t kMr = 8;
constexpr int64_t kNr = 8;
constexpr int64_t kKc = 256;
constexpr int64_t kMc = 64;
constexpr int64_t kNc = 512;

// acc[kMr][kNr] (+)= Ap * Bp over kc steps of k, for a full tile of C.
template <class T>
void tile_kernel(int64_t kc, const T* ap, const T* bp, T* c, int64_t ldc, bool load_c) {
  T acc[kMr][kNr];
  for (int64_t i = 0; i < kMr; ++i)
    for (int64_t j = 0; j < kNr; ++j) acc[i][j] = load_c ? c[i * ldc + j] : T(0);
  for (int64_t k = 0; k < kc; ++k) {
    const T* a = ap + k * kMr;
    const T* b = bp + k * kNr;
    for (int64_t i = 0; i < kMr; ++i) {
      const T ai = a[i];
      for (int64_t j = 0; j < kNr; ++j) acc[i][j] += ai * b[j];
    }
  }
  for (int64_t i = 0; i < kMr; ++i)
    for (int64_t j = 0; j < kNr; ++j) c[i * ldc + j] = acc[i][j];
}

// A tile at the matrix edge: computed in a full scratch tile, then the valid part copied.
template <class T>
void edge_kernel(int64_t kc, const T* ap, const T* bp, T* c, int64_t ldc, int64_t rows, int64_t cols,
                 bool load_c) {
  T tile[kMr * kNr] = {};
  if (load_c)
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j) tile[i * kNr + j] = c[i * ldc + j];
  tile_kernel(kc, ap, bp, tile, kNr, load_c);
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) c[i * ldc + j] = tile[i * kNr + j];
}

// Packs B[k0 .. k0+kc) x [n0 .. n0+nc) into column panels of kNr, zero-filled past nc.
template <class T>
void pack_b(MatrixView<T> b, int64_t k0, int64_t kc, int64_t n0, int64_t nc, T* out) {
  for (int64_t jp = 0; jp < nc; jp += kNr) {
    const int64_t cols = std::min(kNr, nc - jp);
    for (int64_t k = 0; k < kc; ++k) {
      const T* src = b.data + (k0 + k) * b.row_stride + (n0 + jp) * b.col_stride;
      int64_t j = 0;
      if (b.col_stride == 1)
        for (; j < cols; ++j) out[j] = src[j];
      else
        for (; j < cols; ++j) out[j] = src[j * b.col_stride];
      for (; j < kNr; ++j) out[j] = T(0);
      out += kNr;
    }
  }
}

// Packs A[m0 .. m0+mc) x [k0 .. k0+kc) into row panels of kMr, zero-filled past mc.
template <class T>
void pack_a(MatrixView<T> a, int64_t m0, int64_t mc, int64_t k0, int64_t kc, T* out) {
  for (int64_t ip = 0; ip < mc; ip += kMr) {
    const int64_t rows = std::min(kMr, mc - ip);
    for (int64_t i = 0; i < kMr; ++i) {
      if (i >= rows) {
        for (int64_t k = 0; k < kc; ++k) out[k * kMr + i] = T(0);
        continue;
      }
      const T* src = a.data + (m0 + ip + i) * a.row_stride + k0 * a.col_stride;
      for (int64_t k = 0; k < kc; ++k) out[k * kMr + i] = src[k * a.col_stride];
    }
    out += kc * kMr;
  }
}

int64_t round_up(int64_t x, int64_t unit) { return (x + unit - 1) / unit * unit; }

template <class T>
void blocked_gemm(int64_t m, int64_t n, int64_t k, MatrixView<T> a, MatrixView<T> b, T* c, int64_t ldc,
                  bool accumulate) {
  if (m <= 0 || n <= 0) return;
  if (k <= 0) {
    if (!accumulate)
      for (int64_t i = 0; i < m; ++i) std::fill(c + i * ldc, c + i * ldc + n, T(0));
    return;
  }
  std::vector<T> bpack(static_cast<size_t>(std::min(k, kKc) * round_up(std::min(n, kNc), kNr)));
  std::vector<T> apack(static_cast<size_t>(std::min(k, kKc) * round_up(std::min(m, kMc), kMr)));
  for (int64_t n0 = 0; n0 < n; n0 += kNc) {
    const int64_t nc = std::min(kNc, n - n0);
    for (int64_t k0 = 0; k0 < k; k0 += kKc) {
      const int64_t kc = std::min(kKc, k - k0);
      const bool load_c = accumulate || k0 > 0;
      pack_b(b, k0, kc, n0, nc, bpack.data());
      for (int64_t m0 = 0; m0 < m; m0 += kMc) {
        const int64_t mc = std::min(kMc, m - m0);
        pack_a(a, m0, mc, k0, kc, apack.data());
        for (int64_t jp = 0; jp < nc; jp += kNr) {
          const T* bp = bpack.data() + jp * kc;
          const int64_t cols = std::min(kNr, nc - jp);
          for (int64_t ip = 0; ip < mc; ip += kMr) {
            const T* ap = apack.data() + ip * kc;
            const int64_t rows = std::min(kMr, mc - ip);
            T* ct = c + (m0 + ip) * ldc + n0 + jp;
            if (rows == kMr && cols == kNr) tile_kernel(kc, ap, bp, ct, ldc, load_c);
            else edge_kernel(kc, ap, bp, ct, ldc, rows, cols, load_c);
          }
        }
      }
    }
  }
}

}  // namespace

void gemm(int64_t m, int64_t n, int64_t k, MatrixView<float> a, MatrixView<float> b, float* c, int64_t ldc,
          bool accumulate) {
  blocked_gemm(m, n, k, a, b, c, ldc, accumulate);
}

void gemm(int64_t m, int64_t n, int64_t k, MatrixView<uint32_t> a, MatrixView<uint32_t> b, uint32_t* c,
          int64_t ldc, bool accumulate) {
  blocked_gemm(m, n, k, a, b, c, ldc, accumulate);
}

}  // namespace npuforge::model
