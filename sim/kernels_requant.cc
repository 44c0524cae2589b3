// GEMM's requant epilogue: int32 accumulators to int8 outputs, in the exact forms of
// sim/kernels_requant.h.
#include <algorithm>
#include <climits>
#include <cstring>
#include <optional>

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#include <immintrin.h>
#endif

#include "sim/kernels_requant.h"

namespace npuforge::sim::kernels {

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

NPUFORGE_CLONES void requant_cols32(uint8_t* out, const uint32_t* acc, uint64_t n, Rq32Cols q, int32_t lo) {
  for (uint64_t j = 0; j < n; ++j) {
    int32_t x = static_cast<int32_t>(acc[j]);
    x = x < q.xlo[j] ? q.xlo[j] : x > q.xhi[j] ? q.xhi[j] : x;
    int32_t v = (x * q.scale[j] + q.round[j]) >> q.shift[j];
    v = v < lo ? lo : v > 127 ? 127 : v;
    out[j] = static_cast<uint8_t>(v);
  }
}

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

}  // namespace npuforge::sim::kernels
