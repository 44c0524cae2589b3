// The per-instruction kernels behind Semantics::execute/compute, on operand buffers.
#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include <fmt/core.h>

#include "util/error.h"
#include "sim/semantics.h"

namespace npuforge::sim {
namespace {

using In = std::span<const std::span<const uint8_t>>;

std::span<const uint8_t> operand(const isa::Instruction& instr, In in, unsigned slot) {
  const auto& ops = instr.spec->operands;
  for (size_t i = 0; i < ops.size(); ++i) {
    if (ops[i].field == slot) return in[i];
  }
  throw Error(fmt::format("{}: field slot {} is not an operand", instr.spec->mnemonic, slot));
}

int8_t s8(uint8_t b) { return static_cast<int8_t>(b); }
uint8_t u8(int8_t v) { return static_cast<uint8_t>(v); }

int32_t load_i32(const uint8_t* p) {
  const uint32_t v = uint32_t{p[0]} | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16 | uint32_t{p[3]} << 24;
  return static_cast<int32_t>(v);
}

// One output of a GEMM: the dot product of a row of A and a column of B, both widened to
// int16 (column contiguous, see gemm). int32 cannot overflow: |a * b| <= 2^14 and k < 2^16
// (a 16-bit field; gemm checks it), so |sum| < 2^30. A plain int32 reduction over int16
// inputs is what the compiler turns into 16-bit multiply-adds (pmaddwd, 8 MACs at a time).
int32_t dot_i16(const int16_t* x, const int16_t* y, uint64_t k) {
  int32_t sum = 0;
  for (uint64_t p = 0; p < k; ++p) sum += int32_t{x[p]} * int32_t{y[p]};
  return sum;
}

// The widest k for which dot_i16's int32 sum provably cannot overflow: k * 2^14 < 2^31.
constexpr uint64_t kMaxDotK = (uint64_t{1} << 17) - 1;

// Reference order: acc[m][n] = bias[n] + sum_k a[m][k] * b[k][n] with int32 wrap-around.
// Used when k is too wide for the int32 dot product (not possible with the built-in ISA's
// 16-bit k, but another ISA could have a wider field).
void gemm_wide(uint64_t m, uint64_t n, uint64_t k, std::span<const uint8_t> a, std::span<const uint8_t> b,
               std::vector<uint32_t>& acc) {
  for (uint64_t i = 0; i < m; ++i) {
    for (uint64_t p = 0; p < k; ++p) {
      const int32_t av = s8(a[i * k + p]);
      const uint8_t* brow = b.data() + p * n;
      for (uint64_t j = 0; j < n; ++j) acc[i * n + j] += static_cast<uint32_t>(av * s8(brow[j]));
    }
  }
}

// B (k x n, row-major) is transposed and widened once per instruction so that every output
// is one contiguous dot product (dot_i16); the products and their int32 sum are exact, so
// adding them to the bias with uint32 wrap-around gives the reference result bit for bit.
void gemm_dot(uint64_t m, uint64_t n, uint64_t k, std::span<const uint8_t> a, std::span<const uint8_t> b,
              std::vector<uint32_t>& acc) {
  // Written in full before they are read: no zero-fill (a memset of n * k int16 per GEMM).
  const auto bt = std::make_unique_for_overwrite<int16_t[]>(n * k);
  const auto arow = std::make_unique_for_overwrite<int16_t[]>(k);
  for (uint64_t p = 0; p < k; ++p) {
    const uint8_t* brow = b.data() + p * n;
    for (uint64_t j = 0; j < n; ++j) bt[j * k + p] = s8(brow[j]);
  }
  for (uint64_t i = 0; i < m; ++i) {
    for (uint64_t p = 0; p < k; ++p) arow[p] = s8(a[i * k + p]);
    for (uint64_t j = 0; j < n; ++j) {
      acc[i * n + j] += static_cast<uint32_t>(dot_i16(arow.get(), bt.get() + j * k, k));
    }
  }
}

void gemm(const isa::Instruction& instr, const Semantics::GemmSlots& s, In in, std::span<uint8_t> out) {
  const uint64_t m = instr.get(s.m), n = instr.get(s.n), k = instr.get(s.k);
  const auto a = operand(instr, in, s.a);
  const auto b = operand(instr, in, s.b);
  const bool has_bias = instr.get(s.has_bias) != 0;
  const auto bias = has_bias ? operand(instr, in, s.bias) : std::span<const uint8_t>{};
  const RequantParams rq{instr.get(s.scale), instr.get(s.shift), instr.get(s.relu) != 0};
  const bool per_channel = instr.get(s.per_channel) != 0;
  const auto qp = per_channel ? operand(instr, in, s.qp) : std::span<const uint8_t>{};
  auto rq_of = [&](uint64_t j) {
    if (!per_channel) return rq;
    return RequantParams{static_cast<uint32_t>(load_i32(qp.data() + 8 * j)), qp[8 * j + 4], rq.relu};
  };
  // uint32 accumulators: int32 two's complement wrap-around without signed overflow.
  std::vector<uint32_t> acc(m * n);
  if (has_bias) {
    for (uint64_t i = 0; i < m; ++i) {
      for (uint64_t j = 0; j < n; ++j) acc[i * n + j] = static_cast<uint32_t>(load_i32(bias.data() + 4 * j));
    }
  }
  if (k <= kMaxDotK) {
    gemm_dot(m, n, k, a, b, acc);
  } else {
    gemm_wide(m, n, k, a, b, acc);
  }
  for (uint64_t i = 0; i < m; ++i) {
    for (uint64_t j = 0; j < n; ++j) out[i * n + j] = u8(requant_fast(static_cast<int32_t>(acc[i * n + j]), rq_of(j)));
  }
}

void im2col(const isa::Instruction& instr, const Semantics::Im2colSlots& s, In in,
            std::span<uint8_t> out) {
  const int64_t h = instr.get(s.h), w = instr.get(s.w), c = instr.get(s.c);
  const int64_t kh = instr.get(s.kh), kw = instr.get(s.kw);
  const int64_t sh = instr.get(s.sh), sw = instr.get(s.sw), dh = instr.get(s.dh), dw = instr.get(s.dw);
  const int64_t pt = instr.get(s.pt), pl = instr.get(s.pl), pb = instr.get(s.pb), pr = instr.get(s.pr);
  const auto src = operand(instr, in, s.src);
  const int64_t oh = (h + pt + pb - (kh - 1) * dh - 1) / sh + 1, ow = (w + pl + pr - (kw - 1) * dw - 1) / sw + 1;
  uint8_t* o = out.data();
  for (int64_t oy = 0; oy < oh; ++oy) {
    for (int64_t ox = 0; ox < ow; ++ox) {
      for (int64_t ky = 0; ky < kh; ++ky) {
        const int64_t iy = oy * sh - pt + ky * dh;
        for (int64_t kx = 0; kx < kw; ++kx) {
          const int64_t ix = ox * sw - pl + kx * dw;
          if (iy < 0 || iy >= h || ix < 0 || ix >= w) {
            std::memset(o, 0, c);
          } else {
            std::memcpy(o, src.data() + (iy * w + ix) * c, c);
          }
          o += c;
        }
      }
    }
  }
}

void eltwise(const isa::Instruction& instr, const Semantics::EltwiseSlots& s, In in,
             std::span<uint8_t> out) {
  const uint64_t len = instr.get(s.len);
  const auto a = operand(instr, in, s.a);
  const auto op = static_cast<EltwiseOp>(instr.get(s.op));
  const RequantParams rq{instr.get(s.scale), instr.get(s.shift), false};
  switch (op) {
    case EltwiseOp::Add:
    case EltwiseOp::Mul: {
      const auto b = operand(instr, in, s.b);
      for (uint64_t i = 0; i < len; ++i) {
        const int64_t x = s8(a[i]), y = s8(b[i]);
        out[i] = u8(requant_fast(op == EltwiseOp::Add ? x + y : x * y, rq));
      }
      return;
    }
    case EltwiseOp::Relu:
      for (uint64_t i = 0; i < len; ++i) out[i] = u8(std::max<int8_t>(s8(a[i]), 0));
      return;
    case EltwiseOp::Clip: {
      const int64_t lo = instr.value(s.lo), hi = instr.value(s.hi);
      for (uint64_t i = 0; i < len; ++i) {
        out[i] = u8(static_cast<int8_t>(std::clamp<int64_t>(s8(a[i]), lo, std::max(lo, hi))));
      }
      return;
    }
  }
  throw Error(fmt::format("eltwise: unknown op value {}", instr.get(s.op)));
}

void lut(const isa::Instruction& instr, const Semantics::LutSlots& s, In in, std::span<uint8_t> out) {
  const auto src = operand(instr, in, s.src);
  const auto table = operand(instr, in, s.table);
  for (size_t i = 0; i < out.size(); ++i) out[i] = table[src[i] ^ 0x80u];
}

// |sum| / count rounded half away from zero: isa::round_div_away, inline and in 32 bits
// when that is exact (|sum| < 2^29 and count < 2^29, so 2|sum| + count < 2^31).
int8_t div_away_fast(int64_t sum, int64_t count) {
  constexpr int64_t kLimit = int64_t{1} << 29;
  if (sum <= -kLimit || sum >= kLimit || count >= kLimit) return round_div_away(sum, count);
  const int32_t s = static_cast<int32_t>(sum), c = static_cast<int32_t>(count);
  const int32_t mag = (2 * (s < 0 ? -s : s) + c) / (2 * c);
  const int32_t v = s < 0 ? -mag : mag;
  return static_cast<int8_t>(v < -128 ? -128 : v > 127 ? 127 : v);
}

// Pooling is separable: a window's sum (or maximum) is the sum (maximum) over its rows of
// the row segments' sums (maxima), and integer sums and maxima do not depend on the order
// they are taken in, so the results are the reference's bit for bit. Pass 1 reduces every
// input row over each output column's window columns (rows[iy][ox][ci]); pass 2 reduces
// those over each output row's window rows. Overlapping windows share the row pass, and
// both passes run over whole rows of ow * c values (the input is HWC, so for stride 1 a
// window column's pixels of all output columns are one contiguous run of bytes) instead of
// c bytes at a time. Acc is int32 when a window's sum provably fits (see pool), else int64.
template <typename Acc>
struct PoolOp {
  bool avg;
  Acc identity() const { return avg ? Acc{0} : Acc{-128}; }
  void fold(Acc* into, const Acc* from, size_t n) const {
    if (avg) {
      for (size_t i = 0; i < n; ++i) into[i] += from[i];
    } else {
      for (size_t i = 0; i < n; ++i) into[i] = std::max(into[i], from[i]);
    }
  }
  void fold(Acc* into, const uint8_t* from, size_t n) const {
    if (avg) {
      for (size_t i = 0; i < n; ++i) into[i] += s8(from[i]);
    } else {
      for (size_t i = 0; i < n; ++i) into[i] = std::max<Acc>(into[i], s8(from[i]));
    }
  }
};

template <typename Acc>
void pool_windows(const isa::Instruction& instr, const Semantics::PoolSlots& s, std::span<const uint8_t> src,
                  std::span<uint8_t> out) {
  const int64_t h = instr.get(s.h), w = instr.get(s.w), c = instr.get(s.c);
  const int64_t wh = instr.get(s.wh), ww = instr.get(s.ww), sh = instr.get(s.sh), sw = instr.get(s.sw);
  const int64_t pt = instr.get(s.pt), pl = instr.get(s.pl), pb = instr.get(s.pb), pr = instr.get(s.pr);
  const PoolOp<Acc> op{static_cast<PoolMode>(instr.get(s.mode)) == PoolMode::Avg};
  const bool count_pad = instr.get(s.count_pad) != 0;
  const int64_t oh = (h + pt + pb - wh) / sh + 1, ow = (w + pl + pr - ww) / sw + 1;
  if (oh <= 0 || ow <= 0 || h <= 0 || w <= 0 || c <= 0) return;
  const auto row = static_cast<size_t>(ow * c);  // values per output row
  std::vector<Acc> rows(static_cast<size_t>(h) * row, op.identity()), acc(row);
  for (int64_t iy = 0; iy < h; ++iy) {  // pass 1: window columns
    Acc* r = rows.data() + static_cast<size_t>(iy) * row;
    const uint8_t* in = src.data() + iy * w * c;
    for (int64_t kx = 0; kx < ww; ++kx) {
      // Output columns whose window column kx is inside the image: 0 <= ox * sw - pl + kx < w.
      const int64_t lo = std::max<int64_t>(0, (pl - kx + sw - 1) / sw);
      const int64_t hi = std::min<int64_t>(ow, pl - kx + w <= 0 ? 0 : (pl - kx + w - 1) / sw + 1);
      if (lo >= hi) continue;
      if (sw == 1) {
        op.fold(r + lo * c, in + (lo - pl + kx) * c, static_cast<size_t>((hi - lo) * c));
      } else {
        for (int64_t ox = lo; ox < hi; ++ox) op.fold(r + ox * c, in + (ox * sw - pl + kx) * c, static_cast<size_t>(c));
      }
    }
  }
  for (int64_t oy = 0; oy < oh; ++oy) {  // pass 2: window rows
    const int64_t y0 = std::max<int64_t>(oy * sh - pt, 0), y1 = std::min(oy * sh - pt + wh, h);
    std::fill(acc.begin(), acc.end(), op.identity());
    for (int64_t iy = y0; iy < y1; ++iy) op.fold(acc.data(), rows.data() + static_cast<size_t>(iy) * row, row);
    uint8_t* o = out.data() + static_cast<size_t>(oy) * row;
    if (!op.avg) {
      for (size_t j = 0; j < row; ++j) o[j] = u8(static_cast<int8_t>(acc[j]));
      continue;
    }
    for (int64_t ox = 0; ox < ow; ++ox) {
      const int64_t x0 = std::max<int64_t>(ox * sw - pl, 0), x1 = std::min(ox * sw - pl + ww, w);
      const int64_t count = std::max<int64_t>(y1 - y0, 0) * std::max<int64_t>(x1 - x0, 0);
      const int64_t divisor = count_pad ? wh * ww : std::max<int64_t>(count, 1);
      for (int64_t ci = 0; ci < c; ++ci) o[ox * c + ci] = u8(div_away_fast(acc[static_cast<size_t>(ox * c + ci)], divisor));
    }
  }
}

void pool(const isa::Instruction& instr, const Semantics::PoolSlots& s, In in, std::span<uint8_t> out) {
  const auto src = operand(instr, in, s.src);
  // A window sum has at most window_h * window_w terms of magnitude <= 128.
  const uint64_t terms = uint64_t{instr.get(s.wh)} * instr.get(s.ww);
  if (terms < (uint64_t{1} << 24)) {
    pool_windows<int32_t>(instr, s, src, out);
  } else {
    pool_windows<int64_t>(instr, s, src, out);
  }
}

// 2-D DMA on buffers: packed side `packed`, strided side `strided` (relative to its extent).
void dma_rows(uint64_t rows, uint64_t row_bytes, uint64_t stride, bool to_packed,
              std::span<const uint8_t> from, std::span<uint8_t> to) {
  for (uint64_t r = 0; r < rows; ++r) {
    const uint64_t packed = r * row_bytes, strided = r * stride;
    if (to_packed) {
      std::memmove(to.data() + packed, from.data() + strided, row_bytes);
    } else {
      std::memmove(to.data() + strided, from.data() + packed, row_bytes);
    }
  }
}

}  // namespace

void Semantics::run(Op o, const isa::Instruction& instr, In in, std::span<uint8_t> out) const {
  switch (o) {
    case Op::Nop:
    case Op::Sync:
    case Op::Halt:
      return;
    case Op::Load:
      dma_rows(instr.get(load_.rows), instr.get(load_.row_bytes), instr.get(load_.stride), true,
               operand(instr, in, load_.src), out);
      return;
    case Op::Store:
      dma_rows(instr.get(store_.rows), instr.get(store_.row_bytes), instr.get(store_.stride), false,
               operand(instr, in, store_.src), out);
      return;
    case Op::Move: {
      const auto src = operand(instr, in, move_.src);
      std::memmove(out.data(), src.data(), out.size());
      return;
    }
    case Op::Gemm:
      return gemm(instr, gemm_, in, out);
    case Op::Im2col:
      return im2col(instr, im2col_, in, out);
    case Op::Eltwise:
      return eltwise(instr, eltwise_, in, out);
    case Op::Pool:
      return pool(instr, pool_, in, out);
    case Op::Lut:
      return lut(instr, lut_, in, out);
  }
}

namespace {

// instruction_cycles with the extents when the caller has them (null: worked out if needed).
uint64_t cycles_of(const Semantics& sem, const isa::Instruction& instr, const isa::NpuConfig& config,
                   const isa::ExtentList* known) {
  auto ceil_div = [](uint64_t a, uint64_t b) { return (a + b - 1) / std::max<uint64_t>(b, 1); };
  switch (sem.op(instr)) {
    case Op::Load:
    case Op::Store: {
      const auto& s = sem.op(instr) == Op::Load ? sem.load_slots() : sem.store_slots();
      const uint64_t bytes = uint64_t{instr.get(s.rows)} * instr.get(s.row_bytes);
      return config.dma_latency_cycles + ceil_div(bytes, config.dma_bytes_per_cycle);
    }
    case Op::Gemm: {
      const auto& s = sem.gemm_slots();
      return config.compute_latency_cycles + ceil_div(instr.get(s.m), config.mac_rows) *
                                                 ceil_div(instr.get(s.n), config.mac_cols) *
                                                 instr.get(s.k);
    }
    case Op::Im2col:
    case Op::Eltwise:
    case Op::Pool:
    case Op::Lut:
    case Op::Move: {
      uint64_t written = 0;
      for (const auto& e : known ? *known : isa::extents(instr)) {
        if (e.access == isa::Access::Write) written += e.bytes;
      }
      return config.compute_latency_cycles +
             ceil_div(std::max<uint64_t>(written, 1), config.vector_bytes_per_cycle);
    }
    default:
      return 1;
  }
}

}  // namespace

uint64_t instruction_cycles(const Semantics& sem, const isa::Instruction& instr, const isa::NpuConfig& config) {
  return cycles_of(sem, instr, config, nullptr);
}

uint64_t instruction_cycles(const Semantics& sem, const isa::Instruction& instr, const isa::NpuConfig& config,
                            const isa::ExtentList& extents) {
  return cycles_of(sem, instr, config, &extents);
}

}  // namespace npuforge::sim
