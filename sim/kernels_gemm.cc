// GEMM: row-broadcast or transposed-dot order, whichever is estimated cheaper.
#include <algorithm>
#include <climits>
#include <cstring>
#include <memory>
#include <optional>

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#include <immintrin.h>
#endif

#include "sim/kernels_shared.h"

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

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define NPUFORGE_GEMM_AVX2 1
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

// GEMM's epilogue, requant(int32 acc) per output, in one of two exact forms per GEMM:
//  - Rq32 (int32 lanes, 8 per AVX2 vector, the per-column shifts in vpsravd): x is first
//    clamped to [xlo, xhi]. requant is monotone in x (scale >= 0) and already gives -128 at
//    xlo and 127 at xhi, so the clamp changes no output; inside it x * scale + round stays
//    below 2^31 in magnitude when rq32 accepts the parameters (scales and shifts of real
//    models; a 32-bit per-channel scale or a shift of 31 or more does not fit).
//  - RqWide (int64, any parameters): with scale < 2^32 and |x| <= 2^31, x * scale is exact
//    in int64 (|.| < 2^63), and (x * scale + 2^(s-1)) >> s = (p >> s) + bit s-1 of p (p =
//    x * scale: adding half rounds up exactly when that bit is set), so the rounding term
//    is never added and nothing overflows. Shifts above 63 act as 63 (isa/numerics.h).
// (requant_fast's range checks per output, and isa::requant's 128-bit path for the columns
// whose scale passes INT32_MAX, were a tenth of GEMM's time.)
struct Rq32 {
  int32_t xlo, xhi, scale, round, shift;
};
struct RqWide {
  int64_t scale, shift, half_shift, half_mask;  // half_*: bit s-1 of p, none when s = 0
};

RqWide rq_wide(const RequantParams& p) {
  const int64_t s = std::min<uint32_t>(p.shift, 63);
  return {int64_t{p.scale}, s, s > 0 ? s - 1 : 0, s > 0 ? 1 : 0};
}

std::optional<Rq32> rq32(const RequantParams& p) {
  const int64_t s = std::min<uint32_t>(p.shift, 63);
  if (s >= 31 || p.scale > uint32_t{INT32_MAX}) return std::nullopt;
  const int64_t scale = p.scale, S = int64_t{1} << s, round = s > 0 ? S / 2 : 0;
  if (scale == 0) return Rq32{0, 0, 0, 0, 0};  // every x gives round >> s = 0
  // xhi: the least x with x * scale + round >= 127 S; xlo: the greatest with
  // x * scale + round <= -127 S - 1 (then (.) >> s <= -128). Both below 2^62 in magnitude.
  const int64_t xhi = std::min<int64_t>((127 * S - round + scale - 1) / scale, INT32_MAX);
  const int64_t xlo = std::max<int64_t>(-((127 * S + 1 + round + scale - 1) / scale), INT32_MIN);
  const int64_t top = xhi * scale + round, bottom = xlo * scale + round;  // |.| < 2^31 * 2^31 + 2^30
  if (top > INT32_MAX || bottom < INT32_MIN) return std::nullopt;
  return Rq32{static_cast<int32_t>(xlo), static_cast<int32_t>(xhi), static_cast<int32_t>(scale),
              static_cast<int32_t>(round), static_cast<int32_t>(s)};
}

// `lo` is 0 with relu (max(0, clamp(v, -128, 127)) = clamp(v, 0, 127)), else -128.
NPUFORGE_CLONES void requant_row32(uint8_t* out, const uint32_t* acc, uint64_t n, Rq32 q, int32_t lo) {
  for (uint64_t j = 0; j < n; ++j) {
    int32_t x = static_cast<int32_t>(acc[j]);
    x = x < q.xlo ? q.xlo : x > q.xhi ? q.xhi : x;
    int32_t v = (x * q.scale + q.round) >> q.shift;
    v = v < lo ? lo : v > 127 ? 127 : v;
    out[j] = static_cast<uint8_t>(v);
  }
}

// Column j's own Rq32 (per_channel), as five arrays of n (vector lanes load them directly).
struct Rq32Cols {
  const int32_t *xlo, *xhi, *scale, *round, *shift;
};
NPUFORGE_CLONES void requant_cols32(uint8_t* out, const uint32_t* acc, uint64_t n, Rq32Cols q, int32_t lo) {
  for (uint64_t j = 0; j < n; ++j) {
    int32_t x = static_cast<int32_t>(acc[j]);
    x = x < q.xlo[j] ? q.xlo[j] : x > q.xhi[j] ? q.xhi[j] : x;
    int32_t v = (x * q.scale[j] + q.round[j]) >> q.shift[j];
    v = v < lo ? lo : v > 127 ? 127 : v;
    out[j] = static_cast<uint8_t>(v);
  }
}

int64_t requant_wide(uint32_t acc, const RqWide& q, int64_t lo) {
  const int64_t p = int64_t{static_cast<int32_t>(acc)} * q.scale;
  const int64_t v = (p >> q.shift) + ((p >> q.half_shift) & q.half_mask);
  return v < lo ? lo : v > 127 ? 127 : v;
}

// RqWide of columns j .. j + 4 side by side (per_channel), for requant_cols_wide_avx2.
struct RqWideCols {
  const int64_t *scale, *shift, *half_shift, *half_mask;
};

#ifdef NPUFORGE_GEMM_AVX2
// requant_wide over a row's columns, four int64 lanes at a time (columns whose scale passes
// INT32_MAX or whose shift is 31 or more; one at a time they took ~20 instructions each).
// x * scale: vpmuldq multiplies x by the scale's low 32 bits taken as signed, which lacks
// 2^32 x when scale >= 2^31; that is added (modulo 2^64, exact: the product fits). AVX2
// has no 64-bit arithmetic shift: p >> s is ((p ^ m) >>> s) ^ m with m = p < 0 ? -1 : 0.
// Returns the columns done (n rounded down to 4).
__attribute__((target("avx2"))) uint64_t requant_cols_wide_avx2(uint8_t* out, const uint32_t* acc, uint64_t n,
                                                                 RqWideCols q, int64_t lo) {
  const __m256i zero = _mm256_setzero_si256(), low = _mm256_set1_epi64x(lo), high = _mm256_set1_epi64x(127);
  // Each lane's low byte (bytes 0 and 8 of each 128-bit half) to bytes 0, 1 of that half.
  const __m256i low_bytes = _mm256_setr_epi8(0, 8, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,  //
                                             0, 8, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1);
  uint64_t j = 0;
  for (; j + 4 <= n; j += 4) {
    const __m256i x = _mm256_cvtepi32_epi64(_mm_loadu_si128(reinterpret_cast<const __m128i*>(acc + j)));
    const __m256i scale = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q.scale + j));
    const __m256i big = _mm256_sub_epi64(zero, _mm256_srli_epi64(scale, 31));  // all ones where scale >= 2^31
    const __m256i p = _mm256_add_epi64(_mm256_mul_epi32(x, scale), _mm256_and_si256(_mm256_slli_epi64(x, 32), big));
    const __m256i neg = _mm256_cmpgt_epi64(zero, p);
    const __m256i shift = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q.shift + j));
    const __m256i floor = _mm256_xor_si256(_mm256_srlv_epi64(_mm256_xor_si256(p, neg), shift), neg);
    const __m256i half_shift = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q.half_shift + j));
    const __m256i half_mask = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q.half_mask + j));
    __m256i v = _mm256_add_epi64(floor, _mm256_and_si256(_mm256_srlv_epi64(p, half_shift), half_mask));
    v = _mm256_blendv_epi8(v, low, _mm256_cmpgt_epi64(low, v));
    v = _mm256_blendv_epi8(v, high, _mm256_cmpgt_epi64(v, high));
    const __m256i bytes = _mm256_shuffle_epi8(v, low_bytes);
    const auto b01 = static_cast<uint16_t>(_mm256_extract_epi16(bytes, 0));
    const auto b23 = static_cast<uint16_t>(_mm256_extract_epi16(bytes, 8));
    std::memcpy(out + j, &b01, 2);
    std::memcpy(out + j + 2, &b23, 2);
  }
  return j;
}
#endif

void requant_row_wide(uint8_t* out, const uint32_t* acc, uint64_t n, const RqWide& q, int64_t lo) {
  for (uint64_t j = 0; j < n; ++j) out[j] = static_cast<uint8_t>(requant_wide(acc[j], q, lo));
}

// What a GEMM row's epilogue needs: the bias (or none), the requant parameters (one set, or
// per_channel one per column of qp) in the form the GEMM takes (see Rq32) and the output.
struct GemmRows {
  uint64_t m, n, k;
  std::span<const uint8_t> a, b, bias, qp;
  RequantParams rq;
  bool per_channel;
  uint8_t* out;
  std::optional<Rq32> one32;  // not per_channel: the int32 form, when it fits
  Rq32Cols cols32{};          // per_channel: the int32 forms (a column that has none: zeros)
  const RqWide* wide;         // one entry, or n (per_channel)
  const uint32_t* slow;       // per_channel: the columns without an int32 form
  uint64_t slow_count;
  bool avx2;                  // the CPU runs AVX2 (checked once per GEMM)
  RqWideCols wide_cols{};     // per_channel with many slow columns and AVX2: every column wide

  RequantParams rq_of(uint64_t j) const {
    if (!per_channel) return rq;
    return RequantParams{static_cast<uint32_t>(load_i32(qp.data() + 8 * j)), qp[8 * j + 4], rq.relu};
  }
  // Output rows i0 .. i0 + rows from their accumulators (bias included), n apart: one pass
  // over all of them with a single set of parameters (a pass per row paid its loop set-up and
  // scalar tail every few dozen values).
  void finish_rows(uint64_t i0, uint64_t rows, const uint32_t* acc) const {
    uint8_t* o = out + i0 * n;
    const int32_t lo = rq.relu ? 0 : -128;
    if (per_channel && wide_cols.scale != nullptr) {
      for (uint64_t r = 0; r < rows; ++r, o += n, acc += n) {
        uint64_t j = 0;
#ifdef NPUFORGE_GEMM_AVX2
        j = requant_cols_wide_avx2(o, acc, n, wide_cols, lo);
#endif
        for (; j < n; ++j) o[j] = static_cast<uint8_t>(requant_wide(acc[j], wide[j], lo));
      }
    } else if (per_channel) {
      for (uint64_t r = 0; r < rows; ++r, o += n, acc += n) {
        requant_cols32(o, acc, n, cols32, lo);
        for (uint64_t s = 0; s < slow_count; ++s) o[slow[s]] = static_cast<uint8_t>(requant_wide(acc[slow[s]], wide[slow[s]], lo));
      }
    } else if (one32) {
      requant_row32(o, acc, rows * n, *one32, lo);
    } else {
      requant_row_wide(o, acc, rows * n, wide[0], lo);
    }
  }
  // acc[j] = bias[j] (0 without one), for j < n.
  void set_bias(uint32_t* acc) const {
    if (bias.empty()) {
      std::fill(acc, acc + n, 0u);
    } else {
      for (uint64_t j = 0; j < n; ++j) acc[j] = static_cast<uint32_t>(load_i32(bias.data() + 4 * j));
    }
  }
  // acc[j] += bias[j], for j < n.
  void add_bias(uint32_t* acc) const {
    if (bias.empty()) return;
    for (uint64_t j = 0; j < n; ++j) acc[j] += static_cast<uint32_t>(load_i32(bias.data() + 4 * j));
  }
  // Rows per block of accumulators for finish_rows: about kBlockValues values, at least one row.
  static constexpr uint64_t kBlockValues = 512;
  uint64_t block_rows() const { return std::clamp<uint64_t>(kBlockValues / n, 1, m); }
};

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

[[gnu::always_inline]] inline void transpose8_widen(const uint8_t* from, uint64_t stride, int16_t* to, uint64_t to_stride) {
  I16x8 r[8];
  for (int i = 0; i < 8; ++i) {
    I8x8 b;
    std::memcpy(&b, from + i * stride, sizeof b);
    r[i] = __builtin_convertvector(b, I16x8);
  }
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
    const I16x8 lo = __builtin_shufflevector(u[q], u[q + 4], 0, 1, 2, 3, 8, 9, 10, 11);
    const I16x8 hi = __builtin_shufflevector(u[q], u[q + 4], 4, 5, 6, 7, 12, 13, 14, 15);
    std::memcpy(to + (2 * q) * to_stride, &lo, sizeof lo);
    std::memcpy(to + (2 * q + 1) * to_stride, &hi, sizeof hi);
  }
}

// transpose8_widen of the partial block at B's edge: `rows` x `cols` values (either may be
// below 8) through an 8 x 8 tile. Rows past `rows` are zeros and are stored (B^T's k padding,
// which is zero); columns past `cols` are not stored (they would pass B^T's end), so the tile
// takes whole 8-byte rows (one load, not a variable-length copy) wherever B has the bytes
// (`avail`: bytes of B from `from` on); column c of the result depends on tile column c only.
[[gnu::always_inline]] inline void transpose8_widen_edge(const uint8_t* from, uint64_t stride, uint64_t rows, uint64_t cols, uint64_t avail,
                           int16_t* to, uint64_t to_stride) {
  uint8_t tile[64] = {};
  for (uint64_t r = 0; r < rows; ++r) {
    if (r * stride + 8 <= avail) {
      std::memcpy(tile + 8 * r, from + r * stride, 8);
    } else {
      std::memcpy(tile + 8 * r, from + r * stride, cols);
    }
  }
  int16_t t[64];
  transpose8_widen(tile, 8, t, 8);
  for (uint64_t c = 0; c < cols; ++c) std::memcpy(to + c * to_stride, t + 8 * c, 8 * sizeof(int16_t));
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
      dot_row(arow, bt, kp, n4, acc);
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
