// GEMM: row-broadcast or transposed-dot order, whichever is estimated cheaper.
#include <algorithm>
#include <climits>
#include <cstring>
#include <memory>
#include <optional>

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#include <immintrin.h>
#endif

#include "sim/kernels_requant.h"

namespace npuforge::sim::kernels {
namespace {

// Four outputs of a GEMM: the dot products of a row of A with four columns of B (y, y + kp,
// y + 2 kp, y + 3 kp), all widened to int16 (columns contiguous, see gemm_dot) and zero-padded
// to kp a multiple of 16, stored as uint32 (the accumulators' wrap-around type). int32 cannot
// overflow: |a * b| <= 2^14 and k <= kMaxDotK, so |sum| < 2^31. A plain int32 reduction over
// int16 inputs is what the compiler turns into 16-bit multiply-adds (pmaddwd). x is loaded
// once for the four, and the call and the vector reductions are shared (most dots are short:
// the call was half their cost).
[[gnu::always_inline]] inline void dot4_i16(const int16_t* x, const int16_t* y, uint64_t kp, uint32_t* out) {
  if (kp % 16 != 0) __builtin_unreachable();  // a precondition (gemm_dot pads): no scalar tail
  const int16_t *y0 = y, *y1 = y + kp, *y2 = y + 2 * kp, *y3 = y + 3 * kp;
  int32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  for (uint64_t p = 0; p < kp; ++p) {
    const int32_t v = x[p];
    s0 += v * y0[p];
    s1 += v * y1[p];
    s2 += v * y2[p];
    s3 += v * y3[p];
  }
  out[0] = static_cast<uint32_t>(s0);
  out[1] = static_cast<uint32_t>(s1);
  out[2] = static_cast<uint32_t>(s2);
  out[3] = static_cast<uint32_t>(s3);
}

// A row's outputs: dot4_i16 for the columns 0 .. n4 of B^T (rows kp apart), in one call
// (a call per four columns, through the clone dispatch, was a tenth of the dots' cost).
NPUFORGE_CLONES void dot_row(const int16_t* x, const int16_t* bt, uint64_t kp, uint64_t n4, uint32_t* out) {
  for (uint64_t j = 0; j < n4; j += 4) dot4_i16(x, bt + j * kp, kp, out + j);
}

#ifdef NPUFORGE_GEMM_AVX2
// dot_row with the horizontal sums shared: GCC reduced each of dot4_i16's four vector sums
// on its own (~7 instructions per output, most of dot_row's cost on short k); here the
// vpmaddwd sums of four or eight columns are reduced together by vphaddd (int32 addition
// modulo 2^32 in another order: the same sums, which cannot overflow, see dot4_i16).
// vphaddd(s0, s1) per 128-bit lane holds pair sums of s0 then s1; again over (s0 s1, s2 s3)
// it holds each column's half-lane sum in column order, the two lanes then added.
__attribute__((target("avx2"))) inline __m256i hadd4(__m256i s0, __m256i s1, __m256i s2, __m256i s3) {
  return _mm256_hadd_epi32(_mm256_hadd_epi32(s0, s1), _mm256_hadd_epi32(s2, s3));
}
// acc += x[p .. p + 16) . y[p .. p + 16) in int32 pair sums (vpmaddwd). The empty asm pins
// each sum to a register where it is formed: without it GCC computed all eight products
// first and moved every accumulator back into place each pass (eight vmovdqa in ~28
// instructions). It emits nothing and changes no value.
#define NPUFORGE_MADD(acc, y) \
  acc = _mm256_add_epi32(acc, _mm256_madd_epi16(xv, _mm256_loadu_si256(reinterpret_cast<const __m256i*>((y) + p)))); \
  asm("" : "+x"(acc))
__attribute__((target("avx2"))) void dot_row_avx2(const int16_t* x, const int16_t* bt, uint64_t kp, uint64_t n4,
                                                   uint32_t* out) {
  uint64_t j = 0;
  for (; j + 8 <= n4; j += 8) {  // eight columns: their sums end in one vector, in order
    const int16_t* y = bt + j * kp;
    __m256i s0 = _mm256_setzero_si256(), s1 = s0, s2 = s0, s3 = s0, s4 = s0, s5 = s0, s6 = s0, s7 = s0;
    for (uint64_t p = 0; p < kp; p += 16) {
      const __m256i xv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + p));
      NPUFORGE_MADD(s0, y);
      NPUFORGE_MADD(s1, y + kp);
      NPUFORGE_MADD(s2, y + 2 * kp);
      NPUFORGE_MADD(s3, y + 3 * kp);
      NPUFORGE_MADD(s4, y + 4 * kp);
      NPUFORGE_MADD(s5, y + 5 * kp);
      NPUFORGE_MADD(s6, y + 6 * kp);
      NPUFORGE_MADD(s7, y + 7 * kp);
    }
    const __m256i lo = hadd4(s0, s1, s2, s3), hi = hadd4(s4, s5, s6, s7);
    const __m256i sums = _mm256_add_epi32(_mm256_permute2x128_si256(lo, hi, 0x20), _mm256_permute2x128_si256(lo, hi, 0x31));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + j), sums);
  }
  if (j < n4) {  // four columns left (n4 is a multiple of 4)
    const int16_t* y = bt + j * kp;
    __m256i s0 = _mm256_setzero_si256(), s1 = s0, s2 = s0, s3 = s0;
    for (uint64_t p = 0; p < kp; p += 16) {
      const __m256i xv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + p));
      NPUFORGE_MADD(s0, y);
      NPUFORGE_MADD(s1, y + kp);
      NPUFORGE_MADD(s2, y + 2 * kp);
      NPUFORGE_MADD(s3, y + 3 * kp);
    }
    const __m256i h = hadd4(s0, s1, s2, s3);
    const __m128i sums = _mm_add_epi32(_mm256_castsi256_si128(h), _mm256_extracti128_si256(h, 1));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + j), sums);
  }
}
#undef NPUFORGE_MADD
#endif

// The widest k for which dot4_i16's int32 sums provably cannot overflow: k * 2^14 < 2^31.
constexpr uint64_t kMaxDotK = (uint64_t{1} << 17) - 1;

// acc[j] += sum over the rows r < 4 of a[r] * b[r * stride + j] for j < len, with uint32
// wrap-around (the reference's int32 wrap). Each product of two int8 fits int16 (|.| <=
// 2^14), so the compiler multiplies 16 lanes at a time; four rows per pass quarter the
// accumulator traffic.
NPUFORGE_CLONES void axpy4_i8(uint32_t* acc, const uint8_t* b, uint64_t stride, const int16_t* a, uint64_t len) {
  const int16_t a0 = a[0], a1 = a[1], a2 = a[2], a3 = a[3];
  const uint8_t *b0 = b, *b1 = b + stride, *b2 = b + 2 * stride, *b3 = b + 3 * stride;
  for (uint64_t j = 0; j < len; ++j) {
    const auto p0 = static_cast<int16_t>(a0 * static_cast<int16_t>(s8(b0[j])));
    const auto p1 = static_cast<int16_t>(a1 * static_cast<int16_t>(s8(b1[j])));
    const auto p2 = static_cast<int16_t>(a2 * static_cast<int16_t>(s8(b2[j])));
    const auto p3 = static_cast<int16_t>(a3 * static_cast<int16_t>(s8(b3[j])));
    acc[j] += static_cast<uint32_t>(int32_t{p0} + int32_t{p1} + int32_t{p2} + int32_t{p3});
  }
}

#ifdef NPUFORGE_GEMM_AVX2
// axpy4_i8 with AVX2's 16-bit multiply-add: vpmaddwd takes two rows' int16 values
// interleaved (b0[j], b1[j]) against (a0, a1) and gives a0 b0[j] + a1 b1[j] in int32 (exact:
// each product is at most 2^14), the same sums the portable loop forms, in half its
// instructions (which widened every int16 product to int32 on its own). Does 16 columns per
// pass and returns how many it did (len rounded down to 16).
__attribute__((target("avx2"))) uint64_t axpy4_i8_avx2(uint32_t* acc, const uint8_t* b, uint64_t stride,
                                                        const int16_t* a, uint64_t len) {
  // (a0, a1) and (a2, a3) as int16 pairs in every 32-bit lane.
  const __m256i a01 = _mm256_set1_epi32(static_cast<int32_t>(uint32_t{static_cast<uint16_t>(a[0])} |
                                                             uint32_t{static_cast<uint16_t>(a[1])} << 16));
  const __m256i a23 = _mm256_set1_epi32(static_cast<int32_t>(uint32_t{static_cast<uint16_t>(a[2])} |
                                                             uint32_t{static_cast<uint16_t>(a[3])} << 16));
  const uint8_t *b0 = b, *b1 = b + stride, *b2 = b + 2 * stride, *b3 = b + 3 * stride;
  uint64_t j = 0;
  for (; j + 16 <= len; j += 16) {
    const __m256i r0 = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b0 + j)));
    const __m256i r1 = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b1 + j)));
    const __m256i r2 = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b2 + j)));
    const __m256i r3 = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b3 + j)));
    // Per 128-bit lane, unpacklo holds columns 0-3 (8-11), unpackhi 4-7 (12-15).
    const __m256i lo = _mm256_add_epi32(_mm256_madd_epi16(_mm256_unpacklo_epi16(r0, r1), a01),
                                        _mm256_madd_epi16(_mm256_unpacklo_epi16(r2, r3), a23));
    const __m256i hi = _mm256_add_epi32(_mm256_madd_epi16(_mm256_unpackhi_epi16(r0, r1), a01),
                                        _mm256_madd_epi16(_mm256_unpackhi_epi16(r2, r3), a23));
    auto* out = reinterpret_cast<__m256i*>(acc + j);
    _mm256_storeu_si256(out, _mm256_add_epi32(_mm256_loadu_si256(out), _mm256_permute2x128_si256(lo, hi, 0x20)));
    _mm256_storeu_si256(out + 1, _mm256_add_epi32(_mm256_loadu_si256(out + 1), _mm256_permute2x128_si256(lo, hi, 0x31)));
  }
  return j;
}
#endif

// axpy4_i8, by AVX2 where the CPU has it (the portable loop takes the rest, or all).
void axpy4(uint32_t* acc, const uint8_t* b, uint64_t stride, const int16_t* a, uint64_t len, bool avx2) {
  uint64_t j = 0;
#ifdef NPUFORGE_GEMM_AVX2
  if (avx2) j = axpy4_i8_avx2(acc, b, stride, a, len);
#endif
  if (j < len) axpy4_i8(acc + j, b + j, stride, a, len - j);
}

NPUFORGE_CLONES void axpy_i8(uint32_t* acc, const uint8_t* b0, int16_t a0, uint64_t len) {
  for (uint64_t j = 0; j < len; ++j) acc[j] += static_cast<uint32_t>(int32_t{static_cast<int16_t>(a0 * static_cast<int16_t>(s8(b0[j])))});
}

// n rounded up to whole 16-lane vectors: the kernels run their loops over padded lengths
// (zeros, or ignored lanes) so that no call ends in a scalar tail.
uint64_t padded16(uint64_t n) { return (n + 15) & ~uint64_t{15}; }

// Widens n int8 to int16.
NPUFORGE_CLONES void widen_i8(int16_t* to, const uint8_t* from, uint64_t n) {
  for (uint64_t p = 0; p < n; ++p) to[p] = s8(from[p]);
}

// Row-broadcast order: acc row i = bias + sum_p a[i][p] * B row p, B read as it lies (no
// transpose). Cheapest when m is small: its cost is m * k passes over n values. The passes
// run over n rounded up to 16 lanes where B has the bytes (the extra lanes read the next
// row and are never stored); the last rows, whose padding would pass B's end, run exact.
void gemm_rows(const GemmRows& g) {
  const uint64_t n = g.n, k = g.k, np = padded16(n), block = g.block_rows();
  // A block's rows lie n apart: row i's padded lanes (up to 15 past n) run into row i + 1,
  // which is set after row i is done, and past the last row into 16 spare values.
  Scratch<uint32_t, GemmRows::kBlockValues + 16> acc_buf(block * n + 16);
  const uint8_t* b = g.b.data();
  for (uint64_t i0 = 0; i0 < g.m; i0 += block) {
    const uint64_t rows = std::min(block, g.m - i0);
    for (uint64_t r = 0; r < rows; ++r) {
      uint32_t* acc = acc_buf.data() + r * n;
      g.set_bias(acc);
      std::fill(acc + n, acc + np, 0u);  // ignored, but never read uninitialized
      const uint8_t* arow = g.a.data() + (i0 + r) * k;
      uint64_t p = 0;
      for (; p + 4 <= k; p += 4) {
        const int16_t a4[4] = {s8(arow[p]), s8(arow[p + 1]), s8(arow[p + 2]), s8(arow[p + 3])};
        const bool pad = (p + 3) * n + np <= k * n;  // the padded lanes stay inside B
        axpy4(acc, b + p * n, n, a4, pad ? np : n, g.avx2);
      }
      for (; p < k; ++p) axpy_i8(acc, b + p * n, s8(arow[p]), (p * n + np <= k * n) ? np : n);
    }
    g.finish_rows(i0, rows, acc_buf.data());
  }
}

// B^T's 8 x 8 blocks in 16-byte vectors (GCC/clang generic vectors: SSE2 unpacks on the
// baseline): eight rows of 8 int8 of B (`stride` apart) widened, then interleaved in three
// stages (16-, 32-, 64-bit units) so that vector j holds column j; stored `to_stride` apart.
// The scalar transpose was a store per element (a tenth of GEMM's cost).
using I8x8 = int8_t __attribute__((vector_size(8)));
using I16x8 = int16_t __attribute__((vector_size(16)));

// The transpose of eight widened rows: col[j] holds column j.
[[gnu::always_inline]] inline void transpose8(const I16x8 (&r)[8], I16x8 (&col)[8]) {
  I16x8 t[8], u[8];
  for (int i = 0; i < 8; i += 2) {  // (r_i, r_i+1) pairs per column
    t[i] = __builtin_shufflevector(r[i], r[i + 1], 0, 8, 1, 9, 2, 10, 3, 11);
    t[i + 1] = __builtin_shufflevector(r[i], r[i + 1], 4, 12, 5, 13, 6, 14, 7, 15);
  }
  for (int i = 0; i < 8; i += 4) {  // four rows per column: t[i], t[i+2] hold rows i..i+3
    u[i] = __builtin_shufflevector(t[i], t[i + 2], 0, 1, 8, 9, 2, 3, 10, 11);       // columns 0, 1
    u[i + 1] = __builtin_shufflevector(t[i], t[i + 2], 4, 5, 12, 13, 6, 7, 14, 15);  // 2, 3
    u[i + 2] = __builtin_shufflevector(t[i + 1], t[i + 3], 0, 1, 8, 9, 2, 3, 10, 11);  // 4, 5
    u[i + 3] = __builtin_shufflevector(t[i + 1], t[i + 3], 4, 5, 12, 13, 6, 7, 14, 15);  // 6, 7
  }
  for (int q = 0; q < 4; ++q) {  // rows 0..3 from u[q], rows 4..7 from u[q + 4]: columns 2q, 2q+1
    col[2 * q] = __builtin_shufflevector(u[q], u[q + 4], 0, 1, 2, 3, 8, 9, 10, 11);
    col[2 * q + 1] = __builtin_shufflevector(u[q], u[q + 4], 4, 5, 6, 7, 12, 13, 14, 15);
  }
}

[[gnu::always_inline]] inline void transpose8_widen(const uint8_t* from, uint64_t stride, int16_t* to, uint64_t to_stride) {
  I16x8 r[8], col[8];
  for (int i = 0; i < 8; ++i) {
    I8x8 b;
    std::memcpy(&b, from + i * stride, sizeof b);
    r[i] = __builtin_convertvector(b, I16x8);
  }
  transpose8(r, col);
  for (int j = 0; j < 8; ++j) std::memcpy(to + j * to_stride, &col[j], sizeof col[j]);
}

// transpose8_widen of the partial block at B's edge: `rows` x `cols` values (either may be
// below 8). Rows past `rows` are zeros and are stored (B^T's k padding, which is zero);
// columns past `cols` are not stored (they would pass B^T's end), so a row is one whole
// 8-byte load wherever B has the bytes (`avail`: bytes of B from `from` on); column c of the
// result depends on row bytes c only. When every row has its 8 bytes (all but B's last
// block), the rows are loaded straight into registers, the missing ones from a zero row;
// otherwise through a zeroed 8 x 8 tile (a tile for every edge block took about 1.5x a
// whole block's instructions).
[[gnu::always_inline]] inline void transpose8_widen_edge(const uint8_t* from, uint64_t stride, uint64_t rows, uint64_t cols, uint64_t avail,
                           int16_t* to, uint64_t to_stride) {
  static constexpr uint8_t kZeroRow[8] = {};
  alignas(16) uint8_t tile[64];
  const uint8_t* row[8];
  if ((rows - 1) * stride + 8 <= avail) {
    for (uint64_t i = 0; i < 8; ++i) row[i] = i < rows ? from + i * stride : kZeroRow;
  } else {
    std::memset(tile, 0, sizeof tile);
    for (uint64_t r = 0; r < rows; ++r) {
      std::memcpy(tile + 8 * r, from + r * stride, r * stride + 8 <= avail ? 8 : cols);
    }
    for (uint64_t i = 0; i < 8; ++i) row[i] = tile + 8 * i;
  }
  I16x8 r[8], col[8];
  for (int i = 0; i < 8; ++i) {
    I8x8 b;
    std::memcpy(&b, row[i], sizeof b);
    r[i] = __builtin_convertvector(b, I16x8);
  }
  transpose8(r, col);
  for (uint64_t j = 0; j < 8; ++j) {
    if (j < cols) std::memcpy(to + j * to_stride, &col[j], sizeof col[j]);
  }
}

// B (k x n) as B^T widened to int16, rows kp apart, by 8 x 8 blocks. Cloned for AVX2 (the
// blocks' generic vector code then sign-extends and shuffles in VEX form, with fewer moves):
// it ran on the SSE2 baseline inside gemm, a quarter of gemm's own instructions.
NPUFORGE_CLONES void transpose_widen(const uint8_t* b, uint64_t k, uint64_t n, int16_t* bt, uint64_t kp) {
  for (uint64_t j = 0; j < n; j += 8) {
    const uint64_t cols = std::min<uint64_t>(8, n - j);
    for (uint64_t p = 0; p < k; p += 8) {
      const uint64_t rows = std::min<uint64_t>(8, k - p);
      if (rows == 8 && cols == 8) {
        transpose8_widen(b + p * n + j, n, bt + j * kp + p, kp);
      } else {
        transpose8_widen_edge(b + p * n + j, n, rows, cols, k * n - (p * n + j), bt + j * kp + p, kp);
      }
    }
  }
}

// Dot order: B (k x n, row-major) is transposed and widened once per instruction so that
// every output is one contiguous dot product (dot4_i16); the products and their int32 sum
// are exact, so adding them to the bias with uint32 wrap-around gives the reference result
// bit for bit. Cheapest when m is large: the transpose is paid once for m rows. Rows are
// zero-padded to whole 16-lane vectors (zeros add nothing): no dot ends in a scalar tail.
// B^T has n rounded up to 4 rows (the extra ones zero): every column is in a dot4_i16. A is
// widened whole, once: row i's dot reads kp values from row i's start, the ones past k
// (the next row's, or the zeros after the last row) meet B^T's zero padding and add nothing.
void gemm_dot(const GemmRows& g) {
  const uint64_t n = g.n, k = g.k, kp = padded16(k), n4 = (n + 3) & ~uint64_t{3};
  Scratch<int16_t, 2048> bt_buf(n4 * kp);
  Scratch<int16_t, 4096> a_buf(g.m * k + kp);
  const uint64_t block = g.block_rows();
  // A block's rows lie n apart: row i's columns n .. n4 run into row i + 1, which is
  // written after row i is done, and past the last row into 4 spare values.
  Scratch<uint32_t, GemmRows::kBlockValues + 4> acc_buf(block * n + 4);
  int16_t* bt = bt_buf.data();
  int16_t* a16 = a_buf.data();
  transpose_widen(g.b.data(), k, n, bt, kp);
  // The k padding past the last (possibly partial) block of 8, and the zero rows n .. n4.
  const uint64_t k8up = (k + 7) & ~uint64_t{7};
  if (k8up < kp) {
    for (uint64_t j = 0; j < n; ++j) std::fill(bt + j * kp + k8up, bt + (j + 1) * kp, int16_t{0});
  }
  std::fill(bt + n * kp, bt + n4 * kp, int16_t{0});
  widen_i8(a16, g.a.data(), g.m * k);
  std::fill(a16 + g.m * k, a16 + g.m * k + kp, int16_t{0});
  for (uint64_t i0 = 0; i0 < g.m; i0 += block) {
    const uint64_t rows = std::min(block, g.m - i0);
    for (uint64_t r = 0; r < rows; ++r) {
      const int16_t* arow = a16 + (i0 + r) * k;
      uint32_t* acc = acc_buf.data() + r * n;
#ifdef NPUFORGE_GEMM_AVX2
      if (g.avx2) {
        dot_row_avx2(arow, bt, kp, n4, acc);
      } else {
        dot_row(arow, bt, kp, n4, acc);
      }
#else
      dot_row(arow, bt, kp, n4, acc);
#endif
      g.add_bias(acc);
    }
    g.finish_rows(i0, rows, acc_buf.data());
  }
}

// Estimated cost (instructions, x8) of each order, from the kernels' vector widths: gemm_rows
// pays per (row, p) pass; gemm_dot per transposed B value and per output. Either order gives
// the same bytes, so this only picks the faster one.
bool rows_cheaper(uint64_t m, uint64_t n, uint64_t k) {
  const uint64_t rows = m * k * (64 + 3 * n);
  const uint64_t dot = 20 * n * k + m * n * (3 * k / 2 + 96);
  return rows <= dot;
}

}  // namespace

void gemm(const isa::Instruction& instr, const Semantics::GemmSlots& s, In in, std::span<uint8_t> out) {
#ifdef NPUFORGE_GEMM_AVX2
  gemm(instr, s, in, out, __builtin_cpu_supports("avx2"));
#else
  gemm(instr, s, in, out, false);
#endif
}

void gemm(const isa::Instruction& instr, const Semantics::GemmSlots& s, In in, std::span<uint8_t> out, bool avx2) {
  GemmRows g{};
  g.m = instr.get(s.m);
  g.n = instr.get(s.n);
  g.k = instr.get(s.k);
  g.a = operand(instr, in, s.a);
  g.b = operand(instr, in, s.b);
  if (instr.get(s.has_bias) != 0) g.bias = operand(instr, in, s.bias);
  g.rq = RequantParams{instr.get(s.scale), instr.get(s.shift), instr.get(s.relu) != 0};
  g.per_channel = instr.get(s.per_channel) != 0;
  g.out = out.data();
  g.avx2 = avx2;
  if (g.m == 0 || g.n == 0) return;
  // The epilogue's parameters, once per GEMM (see Rq32).
  const uint64_t sets = g.per_channel ? g.n : 1;
  if (g.per_channel) g.qp = operand(instr, in, s.qp);
  Scratch<RqWide, 128> wide(sets);
  Scratch<int32_t, 5 * 128> cols32(g.per_channel ? 5 * g.n : 0);
  Scratch<uint32_t, 128> slow(g.per_channel ? g.n : 0);
  for (uint64_t j = 0; j < sets; ++j) wide.data()[j] = rq_wide(g.rq_of(j));
  g.wide = wide.data();
  if (!g.per_channel) {
    g.one32 = rq32(g.rq);
  } else {
    int32_t* c = cols32.data();
    g.cols32 = {c, c + g.n, c + 2 * g.n, c + 3 * g.n, c + 4 * g.n};
    g.slow = slow.data();
    for (uint64_t j = 0; j < g.n; ++j) {
      const auto fits = rq32(g.rq_of(j));
      if (!fits) slow.data()[g.slow_count++] = static_cast<uint32_t>(j);
      const Rq32 q = fits.value_or(Rq32{0, 0, 0, 0, 0});  // a slow column's lanes: a harmless zero
      c[j] = q.xlo, c[g.n + j] = q.xhi, c[2 * g.n + j] = q.scale, c[3 * g.n + j] = q.round, c[4 * g.n + j] = q.shift;
    }
  }
  // Many slow columns (each ~20 instructions alone, against ~6 for four wide lanes and ~1.5
  // for an int32 one): every column by the wide lanes.
  Scratch<int64_t, 4 * 128> wide_cols(g.per_channel && g.avx2 && 4 * g.slow_count > g.n ? 4 * g.n : 0);
  if (g.per_channel && g.avx2 && 4 * g.slow_count > g.n) {
    int64_t* w = wide_cols.data();
    for (uint64_t j = 0; j < g.n; ++j) {
      w[j] = g.wide[j].scale, w[g.n + j] = g.wide[j].shift, w[2 * g.n + j] = g.wide[j].half_shift;
      w[3 * g.n + j] = g.wide[j].half_mask;
    }
    g.wide_cols = {w, w + g.n, w + 2 * g.n, w + 3 * g.n};
  }
  if (g.k > kMaxDotK || rows_cheaper(g.m, g.n, g.k)) {
    gemm_rows(g);
  } else {
    gemm_dot(g);
  }
}

}  // namespace npuforge::sim::kernels
