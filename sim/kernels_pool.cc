// POOL: max or average over windows, by separable row and column folds.
#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "sim/kernels_shared.h"

namespace npuforge::sim::kernels {
namespace {

// |sum| / count rounded half away from zero: isa::round_div_away, inline and in 32 bits
// when that is exact (|sum| < 2^29 and count < 2^29, so 2|sum| + count < 2^31).
int8_t div_away32(int32_t s, int32_t c) {
  const int32_t mag = (2 * (s < 0 ? -s : s) + c) / (2 * c);
  const int32_t v = s < 0 ? -mag : mag;
  return static_cast<int8_t>(v < -128 ? -128 : v > 127 ? 127 : v);
}
constexpr int64_t kDivLimit = int64_t{1} << 29;
int8_t div_away_fast(int64_t sum, int64_t count) {
  if (sum <= -kDivLimit || sum >= kDivLimit || count >= kDivLimit) return round_div_away(sum, count);
  return div_away32(static_cast<int32_t>(sum), static_cast<int32_t>(count));
}

// div_away32 over n (sum, divisor) pairs in double lanes, where x86 has no vector integer
// division. Exact: the numerator N = 2|s| + d and denominator D = 2d are integers below 2^30,
// so N / D is correctly rounded; an integer quotient is then exact, and any other lies at
// least 1/D from the integers around it, far beyond the rounding error ((N + D) 2^-53 / D).
// Truncating the non-negative quotient is the floor div_away32 takes.
// int16 sums (pool takes them for windows of at most 255 terms, so d <= 255 and N < 2^17)
// divide in float lanes, twice as many per vector: a quotient below 128 is off by at most
// 128 * 2^-24 = 2^-17 < 1/D (D <= 510), so it truncates as the exact one does; one of 128
// or more stays at least 128 and clamps to 127 either way.
template <typename Sum>
NPUFORGE_CLONES void div_away_row(uint8_t* out, const Sum* sum, const int32_t* divisor, size_t n) {
  using Quot = std::conditional_t<sizeof(Sum) == sizeof(int16_t), float, double>;
  for (size_t i = 0; i < n; ++i) {
    const int32_t s = sum[i], d = divisor[i];  // Sum is int16 or int32
    const auto mag = static_cast<int32_t>(static_cast<Quot>(2 * (s < 0 ? -s : s) + d) / static_cast<Quot>(2 * d));
    const int32_t v = s < 0 ? -mag : mag;
    out[i] = static_cast<uint8_t>(v < -128 ? -128 : v > 127 ? 127 : v);
  }
}

// Pooling is separable: a window's sum (or maximum) is the sum (maximum) over its rows of
// the row segments' sums (maxima), and integer sums and maxima do not depend on the order
// they are taken in, so the results are the reference's bit for bit. Pass 1 reduces every
// input row over the window columns at each window start (rows[iy][x][ci]); pass 2 reduces
// those over each output row's window rows. Overlapping windows share the row pass, and
// both passes run over whole rows (the input is HWC, so a window column's pixels at all
// window starts are one contiguous run of bytes) instead of c bytes at a time. Acc is the
// narrowest type every partial result provably fits (see pool): int8 for max (a maximum of
// int8 values is one of them; 32 lanes per AVX2 vector), int16 for small windows' sums, else
// int32 or int64. The folds are out of line, cloned for AVX2: widening and maxima take
// several instructions each on the x86-64 baseline.
// Pass 1: n bytes of `from` into `into`.
template <typename Acc>
NPUFORGE_CLONES void fold_bytes(bool avg, Acc* into, const uint8_t* from, size_t n) {
  if (avg) {
    for (size_t i = 0; i < n; ++i) into[i] = static_cast<Acc>(into[i] + s8(from[i]));
  } else {
    for (size_t i = 0; i < n; ++i) into[i] = std::max<Acc>(into[i], s8(from[i]));
  }
}

// Pass 2: n values of `from` into `into`.
template <typename Acc>
NPUFORGE_CLONES void fold_lanes(bool avg, Acc* into, const Acc* from, size_t n) {
  if (avg) {
    for (size_t i = 0; i < n; ++i) into[i] = static_cast<Acc>(into[i] + from[i]);
  } else {
    for (size_t i = 0; i < n; ++i) into[i] = std::max(into[i], from[i]);
  }
}

// Pass 1's first window column: n bytes of `from` as they are (identity op x == x).
template <typename Acc>
NPUFORGE_CLONES void widen_bytes(Acc* into, const uint8_t* from, size_t n) {
  for (size_t i = 0; i < n; ++i) into[i] = s8(from[i]);
}

template <typename Acc>
struct PoolOp {
  bool avg;
  Acc identity() const { return avg ? Acc{0} : Acc{-128}; }
  void load(Acc* into, const uint8_t* from, size_t n) const {
    if constexpr (sizeof(Acc) == 1) {
      std::memcpy(into, from, n);
    } else {
      widen_bytes(into, from, n);
    }
  }
  void fold(Acc* into, const Acc* from, size_t n) const { fold_lanes(avg, into, from, n); }
  void fold(Acc* into, const uint8_t* from, size_t n) const { fold_bytes(avg, into, from, n); }
};

// With sw > 1 each output column picks c values of the pass-2 row, at ox * sw * c: up to
// kPickLanes of them are moved as one fixed-width block (vector moves, where a loop over c
// ran a few scalar iterations per column). The block's spare values land past the column,
// where the next column's block, or nothing that is read, comes after; the buffers read and
// written have kPickLanes spare values at their end.
constexpr int64_t kPickLanes = 16;

// div_away_row's AVX2 clone divides 16 values or more at a time in vector lanes and the rest
// one by one (~25 instructions each); an output row is often a few values, all scalar. So a
// row is divided over its length rounded up to kDivBlock whenever the output has room for the
// extra bytes: they land on the next row's outputs, written again after. The sums and
// divisors have kPickLanes spare values for them (sums 0 or picked sums, divisors 1: any
// quotient is finite).
constexpr size_t kDivBlock = 16;
static_assert(kDivBlock <= kPickLanes);
size_t div_length(size_t n, const uint8_t* o, const uint8_t* out_end) {
  const size_t padded = (n + kDivBlock - 1) & ~(kDivBlock - 1);
  return static_cast<size_t>(out_end - o) >= padded ? padded : n;
}

// pool_windows' scratch: one block (on the stack up to kPoolStackBytes) of spans 8 bytes
// apart, so each value type is aligned; the values start uninitialized.
constexpr size_t kPoolStackBytes = 8192;
template <typename T>
size_t bytes8(size_t n) {
  static_assert(alignof(T) <= 8);
  return (n * sizeof(T) + 7) & ~size_t{7};
}
template <typename T>
std::span<T> carve(std::byte*& next, size_t n) {
  T* p = reinterpret_cast<T*>(next);
  next += bytes8<T>(n);
  return {p, n};
}

template <typename Acc>
void pool_windows(const isa::Instruction& instr, const Semantics::PoolSlots& s, std::span<const uint8_t> src,
                  std::span<uint8_t> out) {
  const int64_t h = instr.get(s.h), w = instr.get(s.w), c = instr.get(s.c);
  const int64_t wh = instr.get(s.wh), ww = instr.get(s.ww), sh = instr.get(s.sh), sw = instr.get(s.sw);
  const int64_t pt = instr.get(s.pt), pl = instr.get(s.pl), pb = instr.get(s.pb), pr = instr.get(s.pr);
  const PoolOp<Acc> op{s.modes.of(instr.get(s.mode)) == PoolMode::Avg};
  const bool count_pad = instr.get(s.count_pad) != 0;
  const int64_t oh = (h + pt + pb - wh) / sh + 1, ow = (w + pl + pr - ww) / sw + 1;
  if (oh <= 0 || ow <= 0 || h <= 0 || w <= 0 || c <= 0) return;
  // Pass 1 reduces at every window start x = 0 .. (ow - 1) * sw, not only at the output
  // columns' (x = ox * sw): then a window column kx of all of them is one contiguous run of
  // the input row, which the folds take whole in vector lanes, where a stride above 1 made
  // runs of c values (often a few, all scalar). Pass 2 works on these wide rows and the
  // output picks every sw-th position; the rows are no wider than the padded input.
  const int64_t xw = (ow - 1) * sw + 1;            // window starts per row
  const auto row = static_cast<size_t>(xw * c);   // values per pass-1 row
  // Every sum is at most 128 * wh * ww in magnitude and every divisor at most wh * ww: under
  // div_away32's limit (2^29) when wh * ww < 2^21.
  const bool small = static_cast<uint64_t>(wh) * static_cast<uint64_t>(ww) < (uint64_t{1} << 21);
  // avg: an output row's sums and divisors, for div_away_row (|sum| < 2^28 when small).
  // The sums keep Acc's width (picked by plain moves); int64 only comes with windows too
  // wide for `small`, where `sums` is not used.
  using Sum = std::conditional_t<sizeof(Acc) <= sizeof(int32_t), Acc, int32_t>;
  const size_t outs = op.avg && small ? static_cast<size_t>(ow * c) : 0;
  const size_t rows_n = static_cast<size_t>(h) * row, acc_n = row + kPickLanes;
  const size_t sums_n = outs == 0 ? 0 : outs + kPickLanes;
  // The five buffers carved from one block, on the stack for the usual small shapes: five
  // vectors per instruction were five heap allocations and zero fills.
  kernels::Scratch<std::byte, kPoolStackBytes> block(bytes8<Acc>(rows_n) + bytes8<Acc>(acc_n) + bytes8<Sum>(sums_n) +
                                                      bytes8<int32_t>(sums_n) + bytes8<int32_t>(outs));
  std::byte* next = block.data();
  // Every value of `rows` is written by pass 1's first window column (a value or the identity).
  const auto rows = carve<Acc>(next, rows_n);
  const auto acc = carve<Acc>(next, acc_n);
  std::fill(acc.begin() + static_cast<std::ptrdiff_t>(row), acc.end(), Acc{0});  // the spares: only ever picked into spares
  const auto sums = carve<Sum>(next, sums_n);
  const auto divisors = carve<int32_t>(next, sums_n);  // written before read (count_pad, divisors_rows)
  const auto cols = carve<int32_t>(next, outs);      // in-image window columns of each output value
  for (int64_t ox = 0; ox < ow && !cols.empty(); ++ox) {
    const int64_t x0 = std::max<int64_t>(ox * sw - pl, 0), x1 = std::min(ox * sw - pl + ww, w);
    std::fill_n(cols.begin() + ox * c, c, static_cast<int32_t>(std::max<int64_t>(x1 - x0, 0)));
  }
  // The spares (see kDivBlock): divisors 1, sums 0 where no pick writes them.
  std::fill(divisors.begin() + static_cast<std::ptrdiff_t>(outs), divisors.end(), 1);
  std::fill(sums.begin() + static_cast<std::ptrdiff_t>(outs), sums.end(), Sum{0});
  if (count_pad) std::fill(divisors.begin(), divisors.begin() + static_cast<std::ptrdiff_t>(outs), static_cast<int32_t>(wh * ww));
  int32_t divisors_rows = -1;  // without count_pad: the in-image row count `divisors` holds
  // Window column 0 covers the starts lo0 .. hi0 (see below): its bytes are the row's first
  // values as they are, the identity elsewhere (one pass, not a fill and a fold).
  const int64_t lo0 = std::min(pl, xw), hi0 = std::max(lo0, std::min<int64_t>(xw, pl + w));
  for (int64_t iy = 0; iy < h; ++iy) {  // pass 1: window columns
    Acc* r = rows.data() + static_cast<size_t>(iy) * row;
    const uint8_t* in = src.data() + iy * w * c;
    std::fill(r, r + lo0 * c, op.identity());
    if (hi0 > lo0) op.load(r + lo0 * c, in + (lo0 - pl) * c, static_cast<size_t>((hi0 - lo0) * c));
    std::fill(r + hi0 * c, r + row, op.identity());
    for (int64_t kx = 1; kx < ww; ++kx) {
      // Window starts whose column kx is inside the image: 0 <= x - pl + kx < w.
      const int64_t lo = std::max<int64_t>(0, pl - kx), hi = std::min<int64_t>(xw, pl - kx + w);
      if (lo < hi) op.fold(r + lo * c, in + (lo - pl + kx) * c, static_cast<size_t>((hi - lo) * c));
    }
  }
  const uint8_t* out_end = out.data() + oh * ow * c;
  for (int64_t oy = 0; oy < oh; ++oy) {  // pass 2: window rows
    const int64_t y0 = std::max<int64_t>(oy * sh - pt, 0), y1 = std::min(oy * sh - pt + wh, h);
    // The first window row is the accumulator as it lies (identity op x == x): one copy, not
    // a fill and a fold.
    if (y0 < y1) {
      std::copy_n(rows.data() + static_cast<size_t>(y0) * row, row, acc.data());
    } else {
      std::fill(acc.begin(), acc.end(), op.identity());
    }
    for (int64_t iy = y0 + 1; iy < y1; ++iy) op.fold(acc.data(), rows.data() + static_cast<size_t>(iy) * row, row);
    uint8_t* o = out.data() + static_cast<size_t>(oy * ow * c);
    if (!op.avg) {
      if (sw == 1) {
        for (size_t j = 0; j < row; ++j) o[j] = u8(static_cast<int8_t>(acc[j]));
        continue;
      }
      const int64_t outs_left = (oh - oy) * ow * c;  // output bytes from o on: the spares stay inside
      for (int64_t ox = 0; ox < ow; ++ox) {
        const Acc* a = acc.data() + ox * sw * c;
        if constexpr (sizeof(Acc) == 1) {  // max: int8 lanes are the output bytes
          if (c <= kPickLanes && ox * c + kPickLanes <= outs_left) {
            std::memcpy(o + ox * c, a, kPickLanes);
            continue;
          }
        }
        for (int64_t ci = 0; ci < c; ++ci) o[ox * c + ci] = u8(static_cast<int8_t>(a[ci]));
      }
      continue;
    }
    if (small) {  // checked once per instruction; the row is divided in one pass
      if (!count_pad) {  // in-image rows times columns, at least 1 (below 2^21: no overflow)
        // They depend on the output row only through its in-image row count, the same for
        // every row but a few at the edges: filled again only when it changes (a pass per
        // output row was a quarter of the pool's own instructions).
        const auto rc = static_cast<int32_t>(std::max<int64_t>(y1 - y0, 0));
        if (rc != divisors_rows) {
          for (size_t j = 0; j < outs; ++j) divisors[j] = std::max(rc * cols[j], 1);
          divisors_rows = rc;
        }
      }
      if constexpr (sizeof(Acc) <= sizeof(int32_t)) {
        if (sw == 1) {  // the window starts are the output columns: the sums lie packed
          div_away_row(o, acc.data(), divisors.data(), div_length(outs, o, out_end));
          continue;
        }
      }
      for (int64_t ox = 0; ox < ow; ++ox) {
        const Acc* a = acc.data() + ox * sw * c;
        Sum* to = sums.data() + ox * c;
        if constexpr (std::is_same_v<Sum, Acc>) {
          if (c <= kPickLanes) {
            std::memcpy(to, a, kPickLanes * sizeof(Acc));
            continue;
          }
        }
        for (int64_t ci = 0; ci < c; ++ci) to[ci] = static_cast<Sum>(a[ci]);
      }
      div_away_row(o, sums.data(), divisors.data(), div_length(outs, o, out_end));
      continue;
    }
    for (int64_t ox = 0; ox < ow; ++ox) {
      const int64_t x0 = std::max<int64_t>(ox * sw - pl, 0), x1 = std::min(ox * sw - pl + ww, w);
      const int64_t count = std::max<int64_t>(y1 - y0, 0) * std::max<int64_t>(x1 - x0, 0);
      const int64_t divisor = count_pad ? wh * ww : std::max<int64_t>(count, 1);
      const Acc* a = acc.data() + ox * sw * c;
      for (int64_t ci = 0; ci < c; ++ci) o[ox * c + ci] = u8(div_away_fast(a[ci], divisor));
    }
  }
}

// The widest window whose sums pool_windows may take in int16: |sum| <= 128 * wh * ww <= 2^15 - 1.
constexpr uint64_t kPoolInt16Terms = 255;

}  // namespace

void pool(const isa::Instruction& instr, const Semantics::PoolSlots& s, In in, std::span<uint8_t> out) {
  const auto src = operand(instr, in, s.src);
  // A window sum has at most window_h * window_w terms of magnitude <= 128; a maximum is one
  // of the int8 inputs (or the identity -128).
  const uint64_t terms = uint64_t{instr.get(s.wh)} * instr.get(s.ww);
  if (s.modes.of(instr.get(s.mode)) != PoolMode::Avg) {
    pool_windows<int8_t>(instr, s, src, out);
  } else if (terms <= kPoolInt16Terms) {
    pool_windows<int16_t>(instr, s, src, out);
  } else if (terms < (uint64_t{1} << 24)) {
    pool_windows<int32_t>(instr, s, src, out);
  } else {
    pool_windows<int64_t>(instr, s, src, out);
  }
}

}  // namespace npuforge::sim::kernels
