// The per-instruction kernels behind Semantics::execute/compute, on operand buffers.
#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include <fmt/core.h>

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#include <immintrin.h>
#endif

#include "util/error.h"
#include "sim/kernels_shared.h"
#include "sim/semantics.h"

namespace npuforge::sim {
namespace {

using kernels::In;
using kernels::operand;
using kernels::s8;
using kernels::u8;

// requant(a op b) over int32 lanes, for an instruction whose every x = a op b satisfies
// |x| * scale + round < 2^31 with shift < 31 (eltwise_fits32): then the reference's exact
// (x * scale + round) >> shift is this int32 expression bit for bit, and the loop vectorizes
// (its int32 multiply is one instruction with AVX2, several without).
template <bool kMul>
NPUFORGE_CLONES void eltwise_rq32(const uint8_t* a, const uint8_t* b, uint8_t* out, size_t len, int32_t scale,
                                  int32_t round, int32_t shift) {
  for (size_t i = 0; i < len; ++i) {
    const int32_t x = kMul ? int32_t{s8(a[i])} * s8(b[i]) : int32_t{s8(a[i])} + s8(b[i]);
    int32_t v = (x * scale + round) >> shift;
    v = v < -128 ? -128 : v > 127 ? 127 : v;
    out[i] = static_cast<uint8_t>(v);
  }
}

// True when eltwise_rq32 is exact for inputs of magnitude up to `max_abs` (256 for add,
// 2^14 for mul): |x * scale| + round < 2^31 and shift < 31.
bool eltwise_fits32(const RequantParams& rq, int64_t max_abs) {
  if (rq.shift >= 31) return false;
  const int64_t round = rq.shift > 0 ? int64_t{1} << (rq.shift - 1) : 0;
  return max_abs * int64_t{rq.scale} + round <= INT32_MAX;
}

// clamp in int8 lanes (32 per AVX2 vector) for bounds inside int8, as the ISA's 8-bit
// signed fields always are: every value and bound is an int8, so the clamp is exact there.
NPUFORGE_CLONES void clip_i8(const uint8_t* a, uint8_t* out, size_t len, int8_t lo, int8_t hi) {
  for (size_t i = 0; i < len; ++i) {
    const int8_t x = s8(a[i]);
    out[i] = u8(x < lo ? lo : x > hi ? hi : x);
  }
}

NPUFORGE_CLONES void clip_i32(const uint8_t* a, uint8_t* out, size_t len, int32_t lo, int32_t hi) {
  for (size_t i = 0; i < len; ++i) {
    const int32_t x = s8(a[i]);
    out[i] = static_cast<uint8_t>(x < lo ? lo : x > hi ? hi : x);
  }
}

void eltwise(const isa::Instruction& instr, const Semantics::EltwiseSlots& s, In in,
             std::span<uint8_t> out) {
  const uint64_t len = instr.get(s.len);
  const auto a = operand(instr, in, s.a);
  const EltwiseOp op = s.ops.of(instr.get(s.op));
  const RequantParams rq{instr.get(s.scale), instr.get(s.shift), false};
  switch (op) {
    case EltwiseOp::Add:
    case EltwiseOp::Mul: {
      const auto b = operand(instr, in, s.b);
      // An ISA file whose b extent ("op <= 1 ? len : 0") disagrees with its op codes.
      if (b.size() < len)
        throw Error(fmt::format("eltwise {}: operand b covers {} bytes, the op reads {} (the ISA's extent of b and "
                                "its values of op disagree)",
                                to_string(op), b.size(), len));
      const bool mul = op == EltwiseOp::Mul;
      if (eltwise_fits32(rq, mul ? 128 * 128 : 256)) {
        const auto scale = static_cast<int32_t>(rq.scale), shift = static_cast<int32_t>(rq.shift);
        const int32_t round = shift > 0 ? int32_t{1} << (shift - 1) : 0;
        if (mul) {
          eltwise_rq32<true>(a.data(), b.data(), out.data(), len, scale, round, shift);
        } else {
          eltwise_rq32<false>(a.data(), b.data(), out.data(), len, scale, round, shift);
        }
        return;
      }
      for (uint64_t i = 0; i < len; ++i) {
        const int64_t x = s8(a[i]), y = s8(b[i]);
        out[i] = u8(requant_fast(mul ? x * y : x + y, rq));
      }
      return;
    }
    case EltwiseOp::Relu:
      for (uint64_t i = 0; i < len; ++i) out[i] = u8(std::max<int8_t>(s8(a[i]), 0));
      return;
    case EltwiseOp::Clip: {
      // clamp(x, lo, max(lo, hi)), then its low byte (the int8 cast): in int32 when the
      // bounds fit, as the ISA's 8-bit fields always do.
      const int64_t lo = instr.value(s.lo), hi = std::max(lo, instr.value(s.hi));
      if (lo >= INT8_MIN && hi <= INT8_MAX) {
        clip_i8(a.data(), out.data(), len, static_cast<int8_t>(lo), static_cast<int8_t>(hi));
        return;
      }
      if (lo >= INT32_MIN && hi <= INT32_MAX) {
        clip_i32(a.data(), out.data(), len, static_cast<int32_t>(lo), static_cast<int32_t>(hi));
        return;
      }
      for (uint64_t i = 0; i < len; ++i) out[i] = u8(static_cast<int8_t>(std::clamp<int64_t>(s8(a[i]), lo, hi)));
      return;
    }
  }
  throw Error(fmt::format("eltwise: unknown op value {}", instr.get(s.op)));
}

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define NPUFORGE_LUT_AVX2 1
// LUT eight lookups at a time with AVX2's dword gather (the scalar loop took ~6 instructions
// per byte, a third of Semantics::run's own). Each lookup reads the dword at table + index
// from a copy of the 256-byte table padded with 4 bytes (so every read stays inside it) and
// keeps its low byte: the same byte as table[index]. Returns the bytes done (a multiple of 8).
__attribute__((target("avx2"))) size_t lut_avx2(const uint8_t* t, const uint8_t* x, uint8_t* o, size_t n) {
  alignas(32) uint8_t table[256 + 4] = {};
  std::memcpy(table, t, 256);
  const __m256i flip = _mm256_set1_epi32(0x80);
  // Each 128-bit lane's four low bytes to its first dword, then those two dwords side by side.
  const __m256i low_bytes = _mm256_setr_epi8(0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,  //
                                             0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1);
  const __m256i join = _mm256_setr_epi32(0, 4, 1, 1, 1, 1, 1, 1);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i b = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(x + i));
    const __m256i idx = _mm256_xor_si256(_mm256_cvtepu8_epi32(b), flip);
    const __m256i v = _mm256_i32gather_epi32(reinterpret_cast<const int*>(table), idx, 1);
    const __m256i packed = _mm256_permutevar8x32_epi32(_mm256_shuffle_epi8(v, low_bytes), join);
    _mm_storel_epi64(reinterpret_cast<__m128i*>(o + i), _mm256_castsi256_si128(packed));
  }
  return i;
}
#endif

void lut(const isa::Instruction& instr, const Semantics::LutSlots& s, In in, std::span<uint8_t> out) {
  const auto src = operand(instr, in, s.src);
  const auto table = operand(instr, in, s.table);
  // Eight lookups per pass: a byte-indexed gather does not vectorize, and the loop's own
  // counting was about as costly as the lookups. Inputs never alias `out` (semantics.h).
  const uint8_t* t = table.data();
  const uint8_t* x = src.data();
  uint8_t* o = out.data();
  const size_t n = out.size();
  size_t i = 0;
#ifdef NPUFORGE_LUT_AVX2
  if (table.size() >= 256 && n >= 8 && __builtin_cpu_supports("avx2")) i = lut_avx2(t, x, o, n);
#endif
  for (; i + 8 <= n; i += 8) {
    for (size_t u = 0; u < 8; ++u) o[i + u] = t[x[i + u] ^ 0x80u];
  }
  for (; i < n; ++i) o[i] = t[x[i] ^ 0x80u];
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
      return kernels::gemm(instr, gemm_, in, out);
    case Op::Im2col:
      return kernels::im2col(instr, im2col_, in, out);
    case Op::Eltwise:
      return eltwise(instr, eltwise_, in, out);
    case Op::Pool:
      return kernels::pool(instr, pool_, in, out);
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
      // `known ? *known : isa::extents(instr)` would copy the list: take it by pointer.
      isa::ExtentList computed;
      if (known == nullptr) {
        computed = isa::extents(instr);
        known = &computed;
      }
      uint64_t written = 0;
      for (const auto& e : *known) {
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
