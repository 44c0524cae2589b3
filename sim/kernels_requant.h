#pragma once
// GEMM's requant epilogue (sim/kernels_requant.cc) and the per-GEMM state the two GEMM orders
// (sim/kernels_gemm.cc) share with it. Internal to sim/.
#include <algorithm>
#include <climits>
#include <cstdint>
#include <optional>
#include <span>

#include "sim/kernels_shared.h"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define NPUFORGE_GEMM_AVX2 1
#endif

namespace npuforge::sim::kernels {

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

inline RqWide rq_wide(const RequantParams& p) {
  const int64_t s = std::min<uint32_t>(p.shift, 63);
  return {int64_t{p.scale}, s, s > 0 ? s - 1 : 0, s > 0 ? 1 : 0};
}

// The int32 form of p, when every x gives the exact requant in int32 lanes (see Rq32).
inline std::optional<Rq32> rq32(const RequantParams& p) {
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

// Column j's own Rq32 (per_channel), as five arrays of n (vector lanes load them directly).
struct Rq32Cols {
  const int32_t *xlo, *xhi, *scale, *round, *shift;
};

// RqWide of columns j .. j + 4 side by side (per_channel), for requant_cols_wide_avx2.
struct RqWideCols {
  const int64_t *scale, *shift, *half_shift, *half_mask;
};

// The epilogue's loops (sim/kernels_requant.cc; out of line, cloned for AVX2). `lo` is 0 with
// relu (max(0, clamp(v, -128, 127)) = clamp(v, 0, 127)), else -128.
void requant_row32(uint8_t* out, const uint32_t* acc, uint64_t n, Rq32 q, int32_t lo);
void requant_cols32(uint8_t* out, const uint32_t* acc, uint64_t n, Rq32Cols q, int32_t lo);
void requant_row_wide(uint8_t* out, const uint32_t* acc, uint64_t n, const RqWide& q, int64_t lo);
#ifdef NPUFORGE_GEMM_AVX2
// Columns by four int64 lanes; returns the columns done (n rounded down to 4).
uint64_t requant_cols_wide_avx2(uint8_t* out, const uint32_t* acc, uint64_t n, RqWideCols q, int64_t lo);
#endif

inline int64_t requant_wide(uint32_t acc, const RqWide& q, int64_t lo) {
  const int64_t p = int64_t{static_cast<int32_t>(acc)} * q.scale;
  const int64_t v = (p >> q.shift) + ((p >> q.half_shift) & q.half_mask);
  return v < lo ? lo : v > 127 ? 127 : v;
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

}  // namespace npuforge::sim::kernels
