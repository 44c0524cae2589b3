// GEMM: row-broadcast or transposed-dot order, whichever is estimated cheaper.
#include <algorithm>
#include <climits>
#include <cstring>
#include <memory>

#include "sim/kernels_shared.h"

namespace npuforge::sim::kernels {
namespace {

// Scratch of `n` values of T, written before it is read (no zero fill): on the stack up to
// kInline values, else on the heap. The kernels run per instruction, mostly on small shapes,
// and the allocations of per-instruction vectors cost more than some of those kernels.
template <typename T, size_t kInline>
class Scratch {
 public:
  explicit Scratch(size_t n) {
    if (n > kInline) heap_ = std::make_unique_for_overwrite<T[]>(n);
  }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  T* data() { return heap_ ? heap_.get() : local_; }

 private:
  T local_[kInline];  // uninitialized on purpose
  std::unique_ptr<T[]> heap_;
};

// Four outputs of a GEMM: the dot products of a row of A with four columns of B (y, y + kp,
// y + 2 kp, y + 3 kp), all widened to int16 (columns contiguous, see gemm_dot) and zero-padded
// to kp a multiple of 16, stored as uint32 (the accumulators' wrap-around type). int32 cannot
// overflow: |a * b| <= 2^14 and k <= kMaxDotK, so |sum| < 2^31. A plain int32 reduction over
// int16 inputs is what the compiler turns into 16-bit multiply-adds (pmaddwd). x is loaded
// once for the four, and the call and the vector reductions are shared (most dots are short:
// the call was half their cost).
NPUFORGE_CLONES void dot4_i16(const int16_t* x, const int16_t* y, uint64_t kp, uint32_t* out) {
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

// True when int64 arithmetic gives requant(x, p) exactly for every int32 x: with scale <
// 2^31, |x * scale| < 2^62 and round <= 2^62, so (x * scale + round) cannot overflow. Shifts
// above 63 act as 63 (isa/numerics.h). Every scale field of the ISA fits; a per-channel qp
// entry holds a full 32-bit scale and may not.
bool rq_fits64(const RequantParams& p) { return p.scale <= uint32_t{INT32_MAX}; }

struct Rq64 {
  int32_t scale;
  int64_t round, shift;
};
Rq64 rq64(const RequantParams& p) {
  const int64_t shift = std::min<uint32_t>(p.shift, 63);
  return {static_cast<int32_t>(p.scale), shift > 0 ? int64_t{1} << (shift - 1) : 0, shift};
}

// out[j] = requant(int32(acc[j])) for j < n with one rq64 (rq_fits64) for every column: the
// reference's exact arithmetic in int64, without requant_fast's per-output range checks.
// `lo` is 0 with relu (max(0, clamp(v, -128, 127)) = clamp(v, 0, 127)), else -128.
NPUFORGE_CLONES void requant_row(uint8_t* out, const uint32_t* acc, uint64_t n, Rq64 q, int64_t lo) {
  for (uint64_t j = 0; j < n; ++j) {
    int64_t v = (int64_t{static_cast<int32_t>(acc[j])} * q.scale + q.round) >> q.shift;
    v = v < lo ? lo : v > 127 ? 127 : v;
    out[j] = static_cast<uint8_t>(v);
  }
}

// The same with column j's own rq64 (per_channel).
NPUFORGE_CLONES void requant_row_cols(uint8_t* out, const uint32_t* acc, uint64_t n, const Rq64* q, int64_t lo) {
  for (uint64_t j = 0; j < n; ++j) {
    int64_t v = (int64_t{static_cast<int32_t>(acc[j])} * q[j].scale + q[j].round) >> q[j].shift;
    v = v < lo ? lo : v > 127 ? 127 : v;
    out[j] = static_cast<uint8_t>(v);
  }
}

// What a GEMM row's epilogue needs: the bias (or none), the requant parameters of each
// column (per_channel: qp, as rq64 in `cols` with the columns rq_fits64 rejects listed in
// `slow`) and the output.
struct GemmRows {
  uint64_t m, n, k;
  std::span<const uint8_t> a, b, bias, qp;
  RequantParams rq;
  bool per_channel;
  uint8_t* out;
  const Rq64* cols;       // per_channel: n entries (a slow column's is a harmless zero)
  const uint32_t* slow;   // per_channel: columns to redo with requant_fast
  uint64_t slow_count;

  uint32_t bias_of(uint64_t j) const { return bias.empty() ? 0 : static_cast<uint32_t>(load_i32(bias.data() + 4 * j)); }
  RequantParams rq_of(uint64_t j) const {
    if (!per_channel) return rq;
    return RequantParams{static_cast<uint32_t>(load_i32(qp.data() + 8 * j)), qp[8 * j + 4], rq.relu};
  }
  // Output row i from its n accumulators (bias included).
  void finish_row(uint64_t i, const uint32_t* acc) const {
    uint8_t* o = out + i * n;
    const int64_t lo = rq.relu ? 0 : -128;
    if (per_channel) {
      requant_row_cols(o, acc, n, cols, lo);
      for (uint64_t s = 0; s < slow_count; ++s) o[slow[s]] = u8(requant_fast(static_cast<int32_t>(acc[slow[s]]), rq_of(slow[s])));
    } else if (rq_fits64(rq)) {
      requant_row(o, acc, n, rq64(rq), lo);
    } else {
      for (uint64_t j = 0; j < n; ++j) o[j] = u8(requant_fast(static_cast<int32_t>(acc[j]), rq));
    }
  }
};

// Row-broadcast order: acc row i = bias + sum_p a[i][p] * B row p, B read as it lies (no
// transpose). Cheapest when m is small: its cost is m * k passes over n values. The passes
// run over n rounded up to 16 lanes where B has the bytes (the extra lanes read the next
// row and are never stored); the last rows, whose padding would pass B's end, run exact.
void gemm_rows(const GemmRows& g) {
  const uint64_t n = g.n, k = g.k, np = padded16(n);
  Scratch<uint32_t, 256> acc_buf(np);
  uint32_t* acc = acc_buf.data();
  const uint8_t* b = g.b.data();
  for (uint64_t i = 0; i < g.m; ++i) {
    for (uint64_t j = 0; j < n; ++j) acc[j] = g.bias_of(j);
    std::fill(acc + n, acc + np, 0u);  // ignored, but never read uninitialized
    const uint8_t* arow = g.a.data() + i * k;
    uint64_t p = 0;
    for (; p + 4 <= k; p += 4) {
      const int16_t a4[4] = {s8(arow[p]), s8(arow[p + 1]), s8(arow[p + 2]), s8(arow[p + 3])};
      const bool pad = (p + 3) * n + np <= k * n;  // the padded lanes stay inside B
      axpy4_i8(acc, b + p * n, n, a4, pad ? np : n);
    }
    for (; p < k; ++p) axpy_i8(acc, b + p * n, s8(arow[p]), (p * n + np <= k * n) ? np : n);
    g.finish_row(i, acc);
  }
}

// B^T's 8 x 8 blocks in 16-byte vectors (GCC/clang generic vectors: SSE2 unpacks on the
// baseline): eight rows of 8 int8 of B (`stride` apart) widened, then interleaved in three
// stages (16-, 32-, 64-bit units) so that vector j holds column j; stored `to_stride` apart.
// The scalar transpose was a store per element (a tenth of GEMM's cost).
using I8x8 = int8_t __attribute__((vector_size(8)));
using I16x8 = int16_t __attribute__((vector_size(16)));

void transpose8_widen(const uint8_t* from, uint64_t stride, int16_t* to, uint64_t to_stride) {
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
void transpose8_widen_edge(const uint8_t* from, uint64_t stride, uint64_t rows, uint64_t cols, uint64_t avail,
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
  Scratch<uint32_t, 256> acc_buf(n4);
  int16_t* bt = bt_buf.data();
  int16_t* a16 = a_buf.data();
  uint32_t* acc = acc_buf.data();
  for (uint64_t j = 0; j < n; j += 8) {
    const uint64_t cols = std::min<uint64_t>(8, n - j);
    for (uint64_t p = 0; p < k; p += 8) {
      const uint64_t rows = std::min<uint64_t>(8, k - p);
      if (rows == 8 && cols == 8) {
        transpose8_widen(g.b.data() + p * n + j, n, bt + j * kp + p, kp);
      } else {
        transpose8_widen_edge(g.b.data() + p * n + j, n, rows, cols, k * n - (p * n + j), bt + j * kp + p, kp);
      }
    }
  }
  // The k padding past the last (possibly partial) block of 8, and the zero rows n .. n4.
  const uint64_t k8up = (k + 7) & ~uint64_t{7};
  if (k8up < kp) {
    for (uint64_t j = 0; j < n; ++j) std::fill(bt + j * kp + k8up, bt + (j + 1) * kp, int16_t{0});
  }
  std::fill(bt + n * kp, bt + n4 * kp, int16_t{0});
  widen_i8(a16, g.a.data(), g.m * k);
  std::fill(a16 + g.m * k, a16 + g.m * k + kp, int16_t{0});
  for (uint64_t i = 0; i < g.m; ++i) {
    const int16_t* arow = a16 + i * k;
    for (uint64_t j = 0; j < n4; j += 4) dot4_i16(arow, bt + j * kp, kp, acc + j);
    if (!g.bias.empty()) {
      for (uint64_t j = 0; j < n; ++j) acc[j] += g.bias_of(j);
    }
    g.finish_row(i, acc);
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
  if (g.m == 0 || g.n == 0) return;
  Scratch<Rq64, 128> cols(g.per_channel ? g.n : 0);
  Scratch<uint32_t, 128> slow(g.per_channel ? g.n : 0);
  if (g.per_channel) {
    g.qp = operand(instr, in, s.qp);
    for (uint64_t j = 0; j < g.n; ++j) {
      const RequantParams p = g.rq_of(j);
      cols.data()[j] = rq_fits64(p) ? rq64(p) : Rq64{0, 0, 0};
      if (!rq_fits64(p)) slow.data()[g.slow_count++] = static_cast<uint32_t>(j);
    }
    g.cols = cols.data();
    g.slow = slow.data();
  }
  if (g.k > kMaxDotK || rows_cheaper(g.m, g.n, g.k)) {
    gemm_rows(g);
  } else {
    gemm_dot(g);
  }
}

}  // namespace npuforge::sim::kernels
