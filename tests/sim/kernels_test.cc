// The kernels' fast paths (sim/kernels.cc) against naive models: GEMM in both of its orders
// (row-broadcast for few rows, transposed dot products for many) over a sweep of shapes,
// at the int32 accumulator limit and with overlapping operands; ELTWISE's int32 lanes at
// and past the bounds where they stay exact; requant_fast over all shifts.
#include <algorithm>
#include <cstring>
#include <initializer_list>
#include <map>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "isa/assembler.h"
#include "isa/isa.h"
#include "util/rng.h"
#include "sim/kernels_shared.h"
#include "sim/semantics.h"
#include "naive_kernels.h"

namespace npuforge::sim {
namespace {

using isa::Instruction;
using naive::GemmCase;
using naive::fill_random;
using naive::make;
using naive::s8;
using naive::the_isa;

isa::NpuConfig config(uint64_t sram) {
  isa::NpuConfig c;
  c.sram_bytes = Bytes{sram};
  c.ddr_bytes = Bytes{1 << 20};
  return c;
}

constexpr uint32_t kA = 0, kB = 0x10000, kBias = 0x20000, kDst = 0x30000;

Instruction gemm_instr(const GemmCase& g) {
  return make("gemm", {{"dst", kDst}, {"a", kA}, {"b", kB}, {"bias", kBias}, {"m", g.m}, {"n", g.n}, {"k", g.k},
                       {"scale", g.scale}, {"shift", g.shift}, {"relu", g.relu}, {"has_bias", g.has_bias}});
}

void expect_gemm(const Semantics& sem, Memory& mem, const GemmCase& g) {
  const auto expect = naive::gemm(g, mem.sram.view(kA, g.m * g.k), mem.sram.view(kB, g.k * g.n),
                                 mem.sram.view(kBias, 4 * g.n));
  sem.execute(gemm_instr(g), mem);
  const auto got = mem.sram.view(kDst, g.m * g.n);
  for (size_t i = 0; i < expect.size(); ++i)
    ASSERT_EQ(s8(got[i]), expect[i]) << "m " << g.m << " n " << g.n << " k " << g.k << " byte " << i;
}

TEST(GemmKernels, ShapeSweepAgainstTripleLoop) {
  // Odd and even n and k around the vector widths (8, 16, 32 lanes), few and many rows: both
  // orders, their vector bodies and their scalar tails.
  const Semantics sem(the_isa());
  Rng rng(15);
  Memory mem(config(1 << 18));
  for (int64_t m : {1, 2, 3, 5, 8, 17, 64}) {
    for (int64_t n : {1, 2, 7, 15, 16, 17, 31, 33, 64}) {
      for (int64_t k : {1, 2, 3, 15, 16, 17, 33, 128}) {
        fill_random(mem.sram.view(0, 0x30000), rng);
        const GemmCase g{m, n, k, rng.range(0, 65535), rng.range(0, 40), rng.chance(0.5), rng.chance(0.5)};
        ASSERT_NO_FATAL_FAILURE(expect_gemm(sem, mem, g));
      }
    }
  }
}

// Every n and k remainder of the dot order's 8 x 8 transpose blocks (partial blocks through a
// zero tile), of its four-column dots (zero columns up to a multiple of 4) and of its A widened
// whole (a row's dot reads on into the next row, or the zeros after the last).
TEST(GemmKernels, DotOrderEdgesAgainstTripleLoop) {
  const Semantics sem(the_isa());
  Rng rng(151);
  Memory mem(config(1 << 18));
  for (int64_t m : {9, 24, 64}) {
    for (int64_t n = 1; n <= 20; ++n) {
      for (int64_t k : {1, 4, 5, 7, 8, 9, 12, 23, 24, 25, 40, 127}) {
        fill_random(mem.sram.view(0, 0x30000), rng);
        const GemmCase g{m, n, k, rng.range(0, 65535), rng.range(0, 40), rng.chance(0.5), rng.chance(0.5)};
        ASSERT_NO_FATAL_FAILURE(expect_gemm(sem, mem, g));
      }
    }
  }
}

TEST(GemmKernels, WidestKAtTheInt32Limit) {
  // k = 65535 (the field's widest) of (-128) * (-128): the sum of products is 2^30 - 2^14, and
  // a bias near INT32_MAX wraps the accumulator, in both orders (m = 1: rows; m = 4: dot).
  const Semantics sem(the_isa());
  Memory mem(config(1 << 20));
  const int64_t k = 65535;
  for (int64_t m : {1, 4}) {
    const int64_t n = 4;
    std::vector<uint8_t> a(static_cast<size_t>(m * k), 0x80), b(static_cast<size_t>(k * n), 0x80);
    b[5] = 0x7f;  // one column a little different
    const uint32_t A = 0, B = 0x40000, BIAS = 0x80000, D = 0x90000;
    mem.sram.write(A, a);
    mem.sram.write(B, b);
    for (int64_t j = 0; j < n; ++j) {
      const int32_t bias = INT32_MAX - static_cast<int32_t>(j) * (1 << 29);
      std::memcpy(mem.sram.view(BIAS + 4 * j, 4).data(), &bias, 4);
    }
    const GemmCase g{m, n, k, 1, 24, false, true};
    const auto expect = naive::gemm(g, mem.sram.view(A, m * k), mem.sram.view(B, k * n), mem.sram.view(BIAS, 4 * n));
    sem.execute(make("gemm", {{"dst", D}, {"a", A}, {"b", B}, {"bias", BIAS}, {"m", m}, {"n", n}, {"k", k},
                              {"scale", 1}, {"shift", 24}, {"has_bias", 1}}),
                mem);
    const auto got = mem.sram.view(D, m * n);
    for (size_t i = 0; i < expect.size(); ++i) ASSERT_EQ(s8(got[i]), expect[i]) << "m " << m << " byte " << i;
  }
}

TEST(GemmKernels, OverlappingOperandsReadAsBefore) {
  // dst over a, over b, over the bias: execute reads every input as it was, like compute()
  // on separate copies.
  const Semantics sem(the_isa());
  Rng rng(16);
  for (uint32_t dst : {0x0u, 0x100u, 0x208u, 0x140u}) {
    for (int64_t m : {1, 6}) {
      Memory mem(config(1 << 16));
      fill_random(mem.sram.view(0, 0x400), rng);
      const int64_t n = 9, k = 13;
      const auto in = make("gemm", {{"dst", dst}, {"a", 0}, {"b", 0x100}, {"bias", 0x200}, {"m", m}, {"n", n},
                                    {"k", k}, {"scale", 300}, {"shift", 9}, {"has_bias", 1}});
      std::vector<uint8_t> a(mem.sram.view(0, m * k).begin(), mem.sram.view(0, m * k).end());
      std::vector<uint8_t> b(mem.sram.view(0x100, k * n).begin(), mem.sram.view(0x100, k * n).end());
      std::vector<uint8_t> bias(mem.sram.view(0x200, 4 * n).begin(), mem.sram.view(0x200, 4 * n).end());
      std::vector<uint8_t> out(static_cast<size_t>(m * n));
      OperandBuffers buf;
      buf.in[0] = a;
      buf.in[1] = b;
      buf.in[2] = bias;
      const auto w = sem.write_operand(in);
      ASSERT_TRUE(w.has_value());
      ASSERT_GE(*w, 3u);  // dst after a, b and bias
      buf.out = out;
      sem.compute(in, buf);
      std::vector<uint8_t> out2(out.size());  // the overload given the extents: the same bytes
      buf.out = out2;
      sem.compute(in, buf, isa::extents(in));
      EXPECT_EQ(out, out2);
      buf.out = std::span<uint8_t>(out2).first(out2.size() - 1);
      EXPECT_THROW(sem.compute(in, buf, isa::extents(in)), Error);
      sem.execute(in, mem);
      EXPECT_TRUE(std::equal(out.begin(), out.end(), mem.sram.view(dst, m * n).begin())) << dst << " m " << m;
    }
  }
}

TEST(EltwiseKernels, AddMulOverEveryScaleAndShiftBound) {
  // Scales up to the field's 65535 and shifts up to 40: the int32 lanes where they are exact,
  // the 64-bit path past them; lengths past several vectors with tails.
  const Semantics sem(the_isa());
  Rng rng(17);
  for (int op = 0; op < 2; ++op) {
    for (int n = 0; n < 120; ++n) {
      Memory mem(config(1 << 16));
      const int64_t len = rng.range(1, 1000);
      const int64_t scale = rng.chance(0.3) ? 65535 - rng.range(0, 3) : rng.range(0, 65535);
      const int64_t shift = rng.chance(0.3) ? rng.range(28, 40) : rng.range(0, 40);
      fill_random(mem.sram.view(0, 0x1000), rng);
      if (n % 4 == 0) {  // the extremes: -128 * -128 and -128 + -128
        std::memset(mem.sram.view(0, len).data(), 0x80, static_cast<size_t>(len));
        std::memset(mem.sram.view(0x400, len).data(), n % 8 == 0 ? 0x80 : 0x7f, static_cast<size_t>(len));
      }
      sem.execute(make("eltwise", {{"dst", 0x800}, {"a", 0}, {"b", 0x400}, {"len", len}, {"op", op},
                                   {"scale", scale}, {"shift", shift}}),
                  mem);
      for (int64_t i = 0; i < len; ++i) {
        const int64_t a = s8(mem.sram.view(i, 1)[0]), b = s8(mem.sram.view(0x400 + i, 1)[0]);
        const int8_t want = naive::requant(op == 0 ? a + b : a * b, scale, shift, false);
        ASSERT_EQ(s8(mem.sram.view(0x800 + i, 1)[0]), want)
            << "op " << op << " scale " << scale << " shift " << shift << " i " << i;
      }
    }
  }
}

TEST(EltwiseKernels, ClipWithCrossedBounds) {
  // clamp(a, lo, max(lo, hi)): hi below lo (which validate rejects) clamps everything to lo.
  const Semantics sem(the_isa());
  Rng rng(18);
  for (int n = 0; n < 60; ++n) {
    Memory mem(config(1 << 16));
    const int64_t len = rng.range(1, 700), lo = rng.range(-128, 127), hi = rng.range(-128, 127);
    fill_random(mem.sram.view(0, 0x400), rng);
    sem.execute(make("eltwise", {{"dst", 0x800}, {"a", 0}, {"len", len}, {"op", 3}, {"lo", lo}, {"hi", hi}}, lo <= hi), mem);
    for (int64_t i = 0; i < len; ++i) {
      const int64_t a = s8(mem.sram.view(i, 1)[0]);
      const int64_t want = std::clamp<int64_t>(a, lo, std::max(lo, hi));
      ASSERT_EQ(s8(mem.sram.view(0x800 + i, 1)[0]), want) << lo << " " << hi << " i " << i;
    }
  }
}

TEST(RequantKernels, FastPathOverEveryShift) {
  // Shifts 33..63 now stay inline (checked addition of the rounding term): equal to the
  // 128-bit reference over random int32 values and 32-bit scales.
  Rng rng(19);
  for (int n = 0; n < 300000; ++n) {
    const int64_t x = rng.range(INT32_MIN, INT32_MAX) >> rng.below(32);
    const uint32_t scale = static_cast<uint32_t>(rng.next()) >> rng.below(32);
    const uint32_t shift = static_cast<uint32_t>(rng.below(66));
    const bool relu = rng.chance(0.5);
    ASSERT_EQ(requant_fast(x, {scale, shift, relu}), requant(x, {scale, shift, relu})) << x << " " << scale << " " << shift;
    ASSERT_EQ(requant_fast(x, {scale, shift, relu}), naive::requant(x, scale, std::min(shift, 63u), relu))
        << x << " " << scale << " " << shift;
  }
}

constexpr uint32_t kPoolSrc = 0, kPoolDst = 0x20000;

// Runs POOL on the image at kPoolSrc and returns the naive kernel's output beside the view of
// the simulator's (at kPoolDst).
// `isa`: the one `sem` was built for (the built-in one unless a test widens POOL's fields).
std::pair<std::vector<int8_t>, std::span<const uint8_t>> run_pool(const Semantics& sem, Memory& mem,
                                                                   const naive::PoolCase& p,
                                                                   const isa::Isa& isa = the_isa()) {
  const auto expect = naive::pool(p, mem.sram.view(kPoolSrc, static_cast<uint64_t>(p.h * p.w * p.c)));
  sem.execute(make("pool",
                   {{"dst", kPoolDst}, {"src", kPoolSrc}, {"h", p.h}, {"w", p.w}, {"c", p.c},
                    {"window_h", p.wh}, {"window_w", p.ww}, {"stride_h", p.sh}, {"stride_w", p.sw},
                    {"pad_top", p.pt}, {"pad_left", p.pl}, {"pad_bottom", p.pb}, {"pad_right", p.pr},
                    {"mode", p.mode}, {"count_pad", p.count_pad}},
                   true, isa),
              mem);
  return {expect, mem.sram.view(kPoolDst, expect.size())};
}

// POOL's accumulator types: int8 for max, int16 up to 255 window terms, int32 past that
// (the ISA's 8-bit window fields keep wh * ww < 2^24: the int64 path, for ISAs with wider
// fields, is Int64SumsOfAWideWindowIsa's); strides below, at and above the window (gaps), pads on every side, c
// around the 32 byte lanes of a vector.
TEST(PoolKernels, AccumulatorWidthsAndStridesAgainstNaive) {
  const Semantics sem(the_isa());
  Rng rng(23);
  Memory mem(config(1 << 18));
  const std::pair<int64_t, int64_t> windows[] = {{1, 1}, {2, 2}, {3, 3}, {15, 17}, {16, 16}, {17, 15}, {24, 20}, {5, 1}};
  for (int n = 0; n < 400; ++n) {
    const auto [wh, ww] = windows[n % std::size(windows)];
    naive::PoolCase p{};
    p.pt = rng.range(0, 2), p.pl = rng.range(0, 2), p.pb = rng.range(0, 2), p.pr = rng.range(0, 2);
    p.wh = wh, p.ww = ww;
    p.h = std::max<int64_t>(1, wh - p.pt - p.pb) + rng.range(0, 8);
    p.w = std::max<int64_t>(1, ww - p.pl - p.pr) + rng.range(0, 8);
    const int64_t cs[] = {1, 3, 8, 31, 32, 33, 40};
    p.c = cs[rng.below(std::size(cs))];
    p.sh = rng.range(1, 4), p.sw = rng.range(1, 4), p.mode = rng.range(0, 1), p.count_pad = rng.range(0, 1);
    fill_random(mem.sram.view(0, 0x20000), rng);
    if (n % 5 == 0) std::fill_n(mem.sram.view(0, 0x10000).begin(), 0x10000, uint8_t{0x80});  // all -128: sums at the bound
    const auto [expect, got] = run_pool(sem, mem, p);
    for (size_t i = 0; i < expect.size(); ++i)
      ASSERT_EQ(s8(got[i]), expect[i]) << "case " << n << " window " << wh << "x" << ww << " c " << p.c << " byte " << i;
  }
}

// Strides above 1 with c on both sides of the 16 values an output column picks as one block
// (max: int8 bytes; avg: int16 and int32 sums), small and wide windows, the image's last
// output columns (whose block would pass the output's end) included.
TEST(PoolKernels, StridedPicksAgainstNaive) {
  const Semantics sem(the_isa());
  Rng rng(157);
  Memory mem(config(1 << 18));
  for (int n = 0; n < 600; ++n) {
    naive::PoolCase p{};
    const bool wide = n % 4 == 3;  // 16 x 16 windows: int32 sums
    p.wh = wide ? 16 : rng.range(1, 4), p.ww = wide ? 16 : rng.range(1, 4);
    p.pt = rng.range(0, 1), p.pl = rng.range(0, 1), p.pb = rng.range(0, 1), p.pr = rng.range(0, 1);
    p.h = std::max<int64_t>(1, p.wh - p.pt - p.pb) + rng.range(0, 9);
    p.w = std::max<int64_t>(1, p.ww - p.pl - p.pr) + rng.range(0, 9);
    p.c = rng.range(1, 18);
    p.sh = rng.range(1, 3), p.sw = rng.range(2, 4), p.mode = rng.range(0, 1), p.count_pad = rng.range(0, 1);
    fill_random(mem.sram.view(0, 0x20000), rng);
    const uint64_t out_bytes = static_cast<uint64_t>(((p.h + p.pt + p.pb - p.wh) / p.sh + 1) *
                                                     ((p.w + p.pl + p.pr - p.ww) / p.sw + 1) * p.c);
    const auto after = mem.sram.view(kPoolDst + out_bytes, 32);  // no spare lands past the output
    const std::vector<uint8_t> before(after.begin(), after.end());
    const auto [expect, got] = run_pool(sem, mem, p);
    ASSERT_EQ(expect.size(), out_bytes);
    for (size_t i = 0; i < expect.size(); ++i)
      ASSERT_EQ(s8(got[i]), expect[i]) << "case " << n << " c " << p.c << " sw " << p.sw << " byte " << i;
    ASSERT_TRUE(std::equal(before.begin(), before.end(), mem.sram.view(kPoolDst + out_bytes, 32).begin())) << "case " << n;
  }
}

enum ImageFill { kAllMin, kAllMax, kRandom };  // -128s, 127s (the sum bounds), random bytes

// Each case on each image, against the naive kernel.
void expect_pool_on_images(const Semantics& sem, Memory& mem, Rng& rng, std::span<const naive::PoolCase> cases,
                           std::initializer_list<ImageFill> fills, const isa::Isa& isa = the_isa()) {
  for (const auto& p : cases) {
    for (const ImageFill fill : fills) {
      auto img = mem.sram.view(kPoolSrc, static_cast<uint64_t>(p.h * p.w * p.c));
      if (fill == kRandom) {
        fill_random(img, rng);
      } else {
        std::fill(img.begin(), img.end(), fill == kAllMin ? uint8_t{0x80} : uint8_t{0x7f});
      }
      const auto [expect, got] = run_pool(sem, mem, p, isa);
      for (size_t i = 0; i < expect.size(); ++i)
        ASSERT_EQ(s8(got[i]), expect[i]) << "window " << p.wh << "x" << p.ww << " fill " << fill << " byte " << i;
    }
  }
}

// The widest windows the ISA's 8-bit fields allow (255 x 255 = 65025 terms: int32 sums,
// divisors up to 65025 in div_away_row's double lanes), with pads, at the sum bounds (all
// -128, all 127) and on random values.
TEST(PoolKernels, WidestWindowsAgainstNaive) {
  const Semantics sem(the_isa());
  Rng rng(31);
  Memory mem(config(1 << 18));
  const naive::PoolCase cases[] = {{255, 255, 1, 255, 255, 1, 1, 0, 0, 0, 0, 1, 0},
                                   {254, 253, 1, 255, 255, 1, 1, 1, 1, 0, 1, 1, 0},
                                   {254, 253, 1, 255, 255, 1, 1, 1, 1, 0, 1, 1, 1},
                                   {200, 255, 1, 200, 128, 7, 5, 0, 2, 0, 2, 1, 0},
                                   {255, 16, 3, 255, 3, 1, 2, 0, 1, 0, 1, 0, 0}};
  expect_pool_on_images(sem, mem, rng, cases, {kAllMin, kAllMax, kRandom});
}

// Per-channel GEMM in both orders: qp entries with full 32-bit scales (at and above 2^31, the
// columns the int64 epilogue leaves to requant_fast) and shift bytes 0..255 (above 63 act as
// 63), against the 128-bit reference.
TEST(GemmKernels, PerChannelEpilogueAgainstTripleLoop) {
  const Semantics sem(the_isa());
  Rng rng(29);
  Memory mem(config(1 << 18));
  constexpr uint32_t kQp = 0x28000;
  for (int64_t m : {1, 3, 64}) {
    for (int64_t n : {1, 7, 16, 33}) {
      for (int64_t k : {1, 16, 40}) {
        for (int rep = 0; rep < 4; ++rep) {
          fill_random(mem.sram.view(0, 0x30000), rng);
          const bool relu = rng.chance(0.5), has_bias = rng.chance(0.5);
          for (int64_t j = 0; j < n; ++j) {  // some small scales and shifts, so not every output clamps
            if (rng.chance(0.5)) mem.sram.view(kQp + 8 * j + 3, 1)[0] = static_cast<uint8_t>(rng.below(2) * 0x7f);
            if (rng.chance(0.5)) mem.sram.view(kQp + 8 * j + 4, 1)[0] = static_cast<uint8_t>(rng.range(20, 45));
          }
          GemmCase g{m, n, k, 0, 0, relu, has_bias};
          auto in = gemm_instr(g);
          in.set_value(in.spec->require_field("qp"), kQp);
          in.set_value(in.spec->require_field("per_channel"), 1);
          std::vector<int8_t> expect;
          for (int64_t j = 0; j < n; ++j) {
            uint32_t scale;
            std::memcpy(&scale, mem.sram.view(kQp + 8 * j, 4).data(), 4);
            const int64_t shift = std::min<int64_t>(mem.sram.view(kQp + 8 * j + 4, 1)[0], 63);
            g.scale = scale, g.shift = shift;
            const auto col = naive::gemm(g, mem.sram.view(kA, m * k), mem.sram.view(kB, k * n), mem.sram.view(kBias, 4 * n));
            expect.resize(static_cast<size_t>(m * n));
            for (int64_t i = 0; i < m; ++i) expect[i * n + j] = col[i * n + j];
          }
          sem.execute(in, mem);
          const auto got = mem.sram.view(kDst, m * n);
          for (size_t i = 0; i < expect.size(); ++i)
            ASSERT_EQ(s8(got[i]), expect[i]) << "m " << m << " n " << n << " k " << k << " byte " << i;
        }
      }
    }
  }
}

// The single-scale epilogue's two forms (sim/kernels_gemm.cc): int32 lanes after clamping x
// to where the output saturates (shifts up to 24 with the ISA's 16-bit scales) and the int64
// form (shifts 25..40), in both GEMM orders. The biases put accumulators just inside and
// outside each clamp (x * scale near +-127 * 2^shift), at the int32 extremes and anywhere.
TEST(GemmKernels, EpilogueFormsOverEveryShiftAgainstTripleLoop) {
  const Semantics sem(the_isa());
  Rng rng(41);
  Memory mem(config(1 << 18));
  for (int64_t shift = 0; shift <= 40; ++shift) {
    for (const int64_t scale : {0, 1, 2, 3, 255, 4097, 65535, -1}) {
      for (const int64_t m : {2, 40}) {
        const int64_t sc = scale >= 0 ? scale : rng.range(1, 65535);
        const GemmCase g{m, 37, 3, sc, shift, rng.chance(0.5), true};
        fill_random(mem.sram.view(0, 0x30000), rng);
        for (int64_t j = 0; j < g.n; ++j) {
          int64_t bias = static_cast<int32_t>(rng.next());
          const int64_t edge = rng.range(-130, 130) * (int64_t{1} << shift) / std::max<int64_t>(sc, 1);
          if (j % 3 == 0) bias = std::clamp<int64_t>(edge + rng.range(-3, 3), INT32_MIN, INT32_MAX);
          if (j % 7 == 1) bias = rng.chance(0.5) ? INT32_MAX : INT32_MIN;
          const auto b = static_cast<uint32_t>(bias);
          std::memcpy(mem.sram.view(kBias + 4 * j, 4).data(), &b, 4);
        }
        expect_gemm(sem, mem, g);
      }
    }
  }
}

// div_away_row divides pool's int16 sums (windows of at most 255 terms) in float lanes: the
// claim it rests on, checked for every sum and divisor such a window can give (|sum| <=
// 128 * d, d <= 255), the same expression as the kernel's against the exact division.
TEST(PoolKernels, FloatQuotientsOfInt16SumsAreExact) {
  for (int32_t d = 1; d <= 255; ++d) {
    for (int32_t s = -128 * d; s <= 128 * d; ++s) {
      const auto mag = static_cast<int32_t>(static_cast<float>(2 * (s < 0 ? -s : s) + d) / static_cast<float>(2 * d));
      const int32_t v = std::clamp(s < 0 ? -mag : mag, -128, 127);
      ASSERT_EQ(v, isa::round_div_away(s, d)) << s << " / " << d;
    }
  }
}

// POOL's int64 sums: windows of 2^24 terms or more, which the built-in ISA's 8-bit window
// fields cannot describe but an ISA with wider fields (`npuforge sim --isa`) can. Here the
// built-in ISA with window_h/window_w widened to 16 bits and pad_top/pad_left to 12, moved
// to spare bits: a 4096 x 4096 window over a small image, mostly padding.
TEST(PoolKernels, Int64SumsOfAWideWindowIsa) {
  std::string yaml(isa::builtin_isa_yaml());
  const std::pair<std::string, std::string> widen[] = {
      {"{name: window_h, bits: [107, 100]", "{name: window_h, bits: [157, 142]"},
      {"{name: window_w, bits: [115, 108]", "{name: window_w, bits: [173, 158]"},
      {"{name: pad_top, bits: [127, 124]", "{name: pad_top, bits: [185, 174]"},
      {"{name: pad_left, bits: [131, 128]", "{name: pad_left, bits: [197, 186]"}};
  for (const auto& [from, to] : widen) {
    const auto at = yaml.find(from);
    ASSERT_NE(at, std::string::npos) << from;
    ASSERT_EQ(yaml.find(from, at + 1), std::string::npos) << from << " (pool's only)";
    yaml.replace(at, from.size(), to);
  }
  const isa::Isa wide = isa::Isa::load_string(yaml, "wide-pool");
  const Semantics sem(wide);
  Rng rng(43);
  Memory mem(config(1 << 18));
  const naive::PoolCase cases[] = {{2, 3, 2, 4096, 4096, 1, 1, 4095, 4094, 0, 0, 1, 0},
                                   {3, 2, 3, 4096, 4097, 1, 2, 4094, 4095, 1, 2, 1, 1},
                                   {1, 1, 1, 4096, 4096, 1, 1, 4095, 4095, 0, 0, 1, 1}};
  expect_pool_on_images(sem, mem, rng, cases, {kAllMin, kRandom}, wide);
}

// kernels::gemm's operand spans for `instr`, by field: A, B, bias, and the per-channel
// parameters (`qp`, read only when the instruction is per-channel).
std::array<std::span<const uint8_t>, isa::kMaxOperands> gemm_operands(const Instruction& instr,
                                                                       const Semantics::GemmSlots& s,
                                                                       std::span<const uint8_t> a,
                                                                       std::span<const uint8_t> b,
                                                                       std::span<const uint8_t> bias,
                                                                       std::span<const uint8_t> qp) {
  std::array<std::span<const uint8_t>, isa::kMaxOperands> ops{};
  const auto list = isa::extents(instr);
  for (unsigned i = 0; i < list.count; ++i) {
    const unsigned f = list.items[i].field;
    if (list.items[i].access == isa::Access::Write || list.items[i].bytes == 0) continue;
    ops[i] = f == s.a ? a : f == s.b ? b : f == s.bias ? bias : qp;
  }
  return ops;
}

// GEMM's row-broadcast order with and without its AVX2 paths (axpy4_i8_avx2 against the
// portable loop; per-channel, requant_cols_wide_avx2 against the scalar int64 form), over lengths around its 16-column passes, strides and k up to a few
// groups of four rows, with A and B at the int8 extremes and random.
TEST(GemmKernels, PortableAndAvx2RowsAgree) {
  const Semantics sem(the_isa());
  Rng rng(47);
  Memory mem(config(1 << 18));
  const bool avx2 = __builtin_cpu_supports("avx2");
  for (int64_t n = 1; n <= 70; ++n) {
    for (const int64_t k : {1, 4, 7, 12, 33}) {
      const GemmCase g{rng.range(1, 3), n, k, rng.range(1, 65535), rng.range(8, 24), rng.chance(0.5), rng.chance(0.5)};
      fill_random(mem.sram.view(0, 0x30000), rng);
      if (n % 5 == 0) std::fill_n(mem.sram.view(0, 0x20000).begin(), 0x20000, uint8_t{0x80});  // -128 everywhere
      auto instr = gemm_instr(g);
      // Every third case per-channel, with random qp entries: 32-bit scales and shift bytes,
      // most columns wide (requant_cols_wide_avx2 against the scalar int64 form).
      const bool per_channel = (n + k) % 3 == 0;
      constexpr uint32_t kQp = 0x28000;
      if (per_channel) {
        instr.set_value(instr.spec->require_field("qp"), kQp);
        instr.set_value(instr.spec->require_field("per_channel"), 1);
      }
      const std::span<const uint8_t> in[] = {mem.sram.view(kA, g.m * g.k), mem.sram.view(kB, g.k * g.n),
                                             mem.sram.view(kBias, 4 * g.n), {}};
      const auto& s = sem.gemm_slots();
      const auto ops = gemm_operands(instr, s, in[0], in[1], in[2], mem.sram.view(kQp, 8 * g.n));
      std::vector<uint8_t> portable(static_cast<size_t>(g.m * g.n)), vector(portable.size());
      kernels::gemm(instr, s, ops, portable, false);
      kernels::gemm(instr, s, ops, vector, avx2);
      if (per_channel) {  // PerChannelEpilogueAgainstTripleLoop checks the AVX2 path's bytes
        ASSERT_EQ(portable, vector) << "per-channel: n " << n << " k " << k;
        continue;
      }
      const auto expect = naive::gemm(g, in[0], in[1], in[2]);
      for (size_t i = 0; i < expect.size(); ++i) {
        ASSERT_EQ(s8(portable[i]), expect[i]) << "portable: n " << n << " k " << k << " byte " << i;
        ASSERT_EQ(s8(vector[i]), expect[i]) << "avx2: n " << n << " k " << k << " byte " << i;
      }
    }
  }
}

// GEMM's dot order (many rows) with and without its AVX2 path (dot_row_avx2's shared
// horizontal sums against the portable dot4_i16 loop), over n around its eight- and
// four-column groups and k around the 16-lane passes, int8 extremes and random values.
TEST(GemmKernels, PortableAndAvx2DotsAgree) {
  const Semantics sem(the_isa());
  Rng rng(48);
  Memory mem(config(1 << 18));
  const bool avx2 = __builtin_cpu_supports("avx2");
  for (int64_t n = 1; n <= 40; ++n) {
    for (const int64_t k : {1, 5, 16, 17, 40, 100}) {
      const GemmCase g{rng.range(24, 80), n, k, rng.range(1, 65535), rng.range(8, 24), rng.chance(0.5), rng.chance(0.5)};
      fill_random(mem.sram.view(0, 0x30000), rng);
      if (n % 5 == 0) std::fill_n(mem.sram.view(0, 0x20000).begin(), 0x20000, uint8_t{0x80});  // -128 everywhere
      const auto instr = gemm_instr(g);
      const std::span<const uint8_t> in[] = {mem.sram.view(kA, g.m * g.k), mem.sram.view(kB, g.k * g.n),
                                             mem.sram.view(kBias, 4 * g.n)};
      const auto& s = sem.gemm_slots();
      const auto ops = gemm_operands(instr, s, in[0], in[1], in[2], {});
      std::vector<uint8_t> portable(static_cast<size_t>(g.m * g.n)), vector(portable.size());
      kernels::gemm(instr, s, ops, portable, false);
      kernels::gemm(instr, s, ops, vector, avx2);
      const auto expect = naive::gemm(g, in[0], in[1], in[2]);
      for (size_t i = 0; i < expect.size(); ++i) {
        ASSERT_EQ(s8(portable[i]), expect[i]) << "portable: m " << g.m << " n " << n << " k " << k << " byte " << i;
        ASSERT_EQ(s8(vector[i]), expect[i]) << "avx2: m " << g.m << " n " << n << " k " << k << " byte " << i;
      }
    }
  }
}

}  // namespace
}  // namespace npuforge::sim
