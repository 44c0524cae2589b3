// Reference semantics against hand-computed values and naive, independently written models.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "isa/assembler.h"
#include "util/rng.h"
#include "sim/semantics.h"
#include "naive_kernels.h"

namespace npuforge::sim {
namespace {

using isa::Instruction;

using naive::fill_random;
using naive::make;
using naive::s8;
using naive::the_isa;

isa::NpuConfig small_config() {
  isa::NpuConfig c;
  c.sram_bytes = Bytes{64 * 1024};
  c.ddr_bytes = Bytes{1 << 20};
  return c;
}

TEST(Requant, HandComputedEdgeCases) {
  EXPECT_EQ(requant(5, {1, 1, false}), 3);     // 2.5 rounds up
  EXPECT_EQ(requant(-5, {1, 1, false}), -2);   // -2.5 rounds up (toward +inf): (-5+1)>>1
  EXPECT_EQ(requant(-3, {1, 1, false}), -1);
  EXPECT_EQ(requant(3, {1, 1, false}), 2);
  EXPECT_EQ(requant(10, {3, 2, false}), 8);    // (30 + 2) >> 2
  EXPECT_EQ(requant(200, {1, 0, false}), 127);
  EXPECT_EQ(requant(-200, {1, 0, false}), -128);
  EXPECT_EQ(requant(-5, {1, 1, true}), 0);
  EXPECT_EQ(requant(int64_t{1} << 39, {1, 40, false}), 1);         // exactly one half
  EXPECT_EQ(requant((int64_t{1} << 39) - 1, {1, 40, false}), 0);   // just below
  EXPECT_EQ(requant(-(int64_t{1} << 39), {1, 40, false}), 0);      // -0.5 -> 0
  EXPECT_EQ(requant(INT32_MIN, {65535, 40, false}), -128);         // widest product
  EXPECT_EQ(requant(INT32_MAX, {65535, 0, false}), 127);
  // Per-channel scales are 32 bits: the product plus the rounding term passes 2^63.
  EXPECT_EQ(requant(INT32_MAX, {UINT32_MAX, 63, false}), 1);   // (2^63 - 2^32 - 2^31 + 1 + 2^62) >> 63
  EXPECT_EQ(requant(INT32_MIN, {UINT32_MAX, 63, false}), -1);  // floor((-2^63 + 2^31 + 2^62) / 2^63)
  EXPECT_EQ(requant(INT32_MAX, {UINT32_MAX, 62, false}), 2);
}

TEST(Requant, MatchesFloorDivisionModel) {
  Rng rng(11);
  for (int n = 0; n < 20000; ++n) {
    const int64_t x = rng.range(INT32_MIN, INT32_MAX) >> rng.below(31);
    const uint32_t scale = static_cast<uint32_t>(rng.below(65536));
    const uint32_t shift = static_cast<uint32_t>(rng.below(41));
    const bool relu = rng.chance(0.5);
    ASSERT_EQ(requant(x, {scale, shift, relu}), naive::requant(x, scale, shift, relu))
        << x << " " << scale << " " << shift;
  }
}

// The kernels' inline requant against isa::requant: the 64-bit path's boundaries (int32
// ends, 32-bit scales, shift 32 and past it, relu) and random values on both paths.
TEST(Requant, FastPathEqualsRequant) {
  const int64_t xs[] = {0, 1, -1, 5, -5, 127, -128, INT32_MAX, INT32_MIN, INT32_MAX - 1, INT32_MIN + 1,
                        int64_t{INT32_MAX} + 1, int64_t{INT32_MIN} - 1, int64_t{1} << 40, -(int64_t{1} << 40)};
  const uint32_t scales[] = {0, 1, 3, 65535, 65536, UINT32_MAX, UINT32_MAX - 1, 1u << 31};
  size_t checked = 0;
  for (int64_t x : xs) {
    for (uint32_t scale : scales) {
      for (uint32_t shift : {0u, 1u, 2u, 31u, 32u, 33u, 40u, 62u, 63u, 64u}) {
        for (bool relu : {false, true}) {
          ASSERT_EQ(requant_fast(x, {scale, shift, relu}), requant(x, {scale, shift, relu}))
              << x << " " << scale << " " << shift << " " << relu;
          ++checked;
        }
      }
    }
  }
  Rng rng(12);
  for (int n = 0; n < 200000; ++n) {
    const int64_t x = rng.range(INT32_MIN, INT32_MAX) >> rng.below(32);
    const uint32_t scale = static_cast<uint32_t>(rng.next()) >> rng.below(32);
    const uint32_t shift = static_cast<uint32_t>(rng.below(34));
    const bool relu = rng.chance(0.5);
    ASSERT_EQ(requant_fast(x, {scale, shift, relu}), requant(x, {scale, shift, relu})) << x << " " << scale << " " << shift;
  }
  EXPECT_GT(checked, 0u);
}

TEST(PoolRounding, HalfAwayFromZero) {
  EXPECT_EQ(round_div_away(5, 2), 3);
  EXPECT_EQ(round_div_away(-5, 2), -3);
  EXPECT_EQ(round_div_away(5, 4), 1);   // 1.25
  EXPECT_EQ(round_div_away(6, 4), 2);   // 1.5
  EXPECT_EQ(round_div_away(-6, 4), -2);
  EXPECT_EQ(round_div_away(-7, 4), -2); // -1.75
  EXPECT_EQ(round_div_away(4, 9), 0);
  EXPECT_EQ(round_div_away(5, 9), 1);
  EXPECT_EQ(round_div_away(-5, 9), -1);
  EXPECT_EQ(round_div_away(-128 * 9, 9), -128);
}

using Gemm = naive::GemmCase;

TEST(Gemm, RandomAgainstTripleLoop) {
  const Semantics sem(the_isa());
  Rng rng(7);
  for (int n = 0; n < 60; ++n) {
    const Gemm g{rng.range(1, 24), rng.range(1, 24), rng.range(1, 40), rng.range(0, 65535),
                 rng.range(0, 40), rng.chance(0.5), rng.chance(0.5)};
    Memory mem(small_config());
    const uint32_t A = 0, B = 0x1000, BIAS = 0x2000, D = 0x3000;
    fill_random(mem.sram.view(0, 0x4000), rng);
    const auto in = make("gemm", {{"dst", D}, {"a", A}, {"b", B}, {"bias", BIAS}, {"m", g.m},
                                  {"n", g.n}, {"k", g.k}, {"scale", g.scale}, {"shift", g.shift},
                                  {"relu", g.relu}, {"has_bias", g.has_bias}});
    const auto expect = naive::gemm(g, mem.sram.view(A, g.m * g.k), mem.sram.view(B, g.k * g.n),
                                   mem.sram.view(BIAS, 4 * g.n));
    sem.execute(in, mem);
    const auto got = mem.sram.view(D, g.m * g.n);
    for (size_t i = 0; i < expect.size(); ++i) ASSERT_EQ(s8(got[i]), expect[i]) << "case " << n << " i " << i;
  }
}

TEST(Gemm, AccumulatorWrapsAtInt32) {
  const Semantics sem(the_isa());
  Memory mem(small_config());
  mem.sram.view(0, 1)[0] = 1;     // a = 1
  mem.sram.view(0x10, 1)[0] = 1;  // b = 1
  const uint8_t bias[4] = {0xff, 0xff, 0xff, 0x7f};  // INT32_MAX
  mem.sram.write(0x20, bias);
  sem.execute(make("gemm", {{"dst", 0x40}, {"a", 0}, {"b", 0x10}, {"bias", 0x20}, {"m", 1}, {"n", 1},
                            {"k", 1}, {"has_bias", 1}}),
              mem);
  EXPECT_EQ(s8(mem.sram.view(0x40, 1)[0]), -128);  // INT32_MAX + 1 wraps to INT32_MIN
}

TEST(Gemm, PerChannelRequantFromQp) {
  // Column j requantized with qp[j] = {u32 scale, u8 shift, 3 ignored bytes}; the scale and
  // shift fields are ignored. Full 32-bit scales and shifts up to 63 (exact arithmetic).
  const Semantics sem(the_isa());
  Rng rng(21);
  for (int n = 0; n < 40; ++n) {
    const Gemm g{rng.range(1, 12), rng.range(1, 20), rng.range(1, 30), 0, 0, rng.chance(0.5), rng.chance(0.5)};
    Memory mem(small_config());
    const uint32_t A = 0, B = 0x1000, BIAS = 0x2000, QP = 0x2800, D = 0x3000;
    fill_random(mem.sram.view(0, 0x4000), rng);
    for (int64_t j = 0; j < g.n; ++j)  // shifts 0..63 in the low bits; the high bits must not matter
      mem.sram.view(QP + 8 * j + 4, 1)[0] = static_cast<uint8_t>(rng.below(64));
    const auto in = make("gemm", {{"dst", D}, {"a", A}, {"b", B}, {"bias", BIAS}, {"qp", QP}, {"m", g.m},
                                  {"n", g.n}, {"k", g.k}, {"scale", 77}, {"shift", 9}, {"relu", g.relu},
                                  {"has_bias", g.has_bias}, {"per_channel", 1}});
    std::vector<int8_t> expect(static_cast<size_t>(g.m * g.n));
    for (int64_t j = 0; j < g.n; ++j) {
      uint32_t scale;
      std::memcpy(&scale, mem.sram.view(QP + 8 * j, 4).data(), 4);
      const int64_t shift = mem.sram.view(QP + 8 * j + 4, 1)[0];
      std::vector<uint8_t> bcol(static_cast<size_t>(g.k));
      for (int64_t p = 0; p < g.k; ++p) bcol[p] = mem.sram.view(B + p * g.n + j, 1)[0];
      // 128-bit here: a 32-bit scale times an int32 sum plus rounding can pass 2^63.
      for (int64_t i = 0; i < g.m; ++i) {
        int64_t sum = 0;
        if (g.has_bias) {
          int32_t bv;
          std::memcpy(&bv, mem.sram.view(BIAS + 4 * j, 4).data(), 4);
          sum = bv;
        }
        for (int64_t p = 0; p < g.k; ++p) sum += int64_t{s8(mem.sram.view(A + i * g.k + p, 1)[0])} * s8(bcol[p]);
        const auto acc = static_cast<int32_t>(static_cast<uint32_t>(sum));
        const __int128 v = static_cast<__int128>(acc) * scale + (shift > 0 ? (__int128{1} << (shift - 1)) : 0);
        __int128 q = v >> shift;
        q = q < -128 ? -128 : (q > 127 ? 127 : q);
        if (g.relu && q < 0) q = 0;
        expect[i * g.n + j] = static_cast<int8_t>(q);
      }
    }
    sem.execute(in, mem);
    const auto got = mem.sram.view(D, g.m * g.n);
    for (size_t i = 0; i < expect.size(); ++i) ASSERT_EQ(s8(got[i]), expect[i]) << "case " << n << " i " << i;
  }
}

TEST(Gemm, InPlaceEqualsBufferForm) {
  // dst overlapping a: execute must read a as it was, like compute() on separate buffers.
  const Semantics sem(the_isa());
  Rng rng(3);
  Memory mem(small_config());
  fill_random(mem.sram.view(0, 0x200), rng);
  const auto in = make("gemm", {{"dst", 0}, {"a", 0}, {"b", 0x100}, {"m", 4}, {"n", 4}, {"k", 8}, {"shift", 3}});
  std::vector<uint8_t> a(mem.sram.view(0, 32).begin(), mem.sram.view(0, 32).end());
  std::vector<uint8_t> b(mem.sram.view(0x100, 32).begin(), mem.sram.view(0x100, 32).end());
  std::vector<uint8_t> out(16);
  OperandBuffers buf;
  buf.in[0] = a;
  buf.in[1] = b;
  buf.out = out;
  sem.compute(in, buf);
  sem.execute(in, mem);
  EXPECT_TRUE(std::equal(out.begin(), out.end(), mem.sram.view(0, 16).begin()));
  buf.out = std::span<uint8_t>(out).first(15);
  EXPECT_THROW(sem.compute(in, buf), Error);
}

TEST(Im2col, HandComputedPadding) {
  const Semantics sem(the_isa());
  Memory mem(small_config());
  const uint8_t img[4] = {1, 2, 3, 4};  // 2x2x1
  mem.sram.write(0, img);
  std::vector<uint8_t> junk(36, 0xee);
  mem.sram.write(0x100, junk);
  sem.execute(make("im2col", {{"dst", 0x100}, {"src", 0}, {"h", 2}, {"w", 2}, {"c", 1}, {"kh", 3},
                              {"kw", 3}, {"stride_h", 1}, {"stride_w", 1}, {"pad_top", 1}, {"pad_left", 1},
                              {"pad_bottom", 1}, {"pad_right", 1}}),
              mem);
  const std::vector<uint8_t> expect = {0, 0, 0, 0, 1, 2, 0, 3, 4,  0, 0, 0, 1, 2, 0, 3, 4, 0,
                                       0, 1, 2, 0, 3, 4, 0, 0, 0,  1, 2, 0, 3, 4, 0, 0, 0, 0};
  const auto got = mem.sram.view(0x100, 36);
  EXPECT_EQ(std::vector<uint8_t>(got.begin(), got.end()), expect);
}

TEST(Im2col, RandomAgainstGatherModel) {
  // Per-side pads, strides and dilations per axis, drawn independently; channel counts 1..8
  // (each its own fixed-size gather in the kernel) and beyond (the general one).
  const Semantics sem(the_isa());
  Rng rng(5);
  for (int n = 0; n < 160; ++n) {
    const int64_t h = rng.range(1, 9), w = rng.range(1, 9), c = rng.range(1, 10);
    const int64_t pt = rng.range(0, 2), pl = rng.range(0, 2), pb = rng.range(0, 2), pr = rng.range(0, 2);
    const int64_t sh = rng.range(1, 3), sw = rng.range(1, 3), dh = rng.range(1, 3), dw = rng.range(1, 3);
    const int64_t kh = rng.range(1, std::max<int64_t>(1, std::min<int64_t>((h + pt + pb - 1) / dh + 1, 5)));
    const int64_t kw = rng.range(1, std::max<int64_t>(1, std::min<int64_t>((w + pl + pr - 1) / dw + 1, 5)));
    Memory mem(small_config());
    fill_random(mem.sram.view(0, h * w * c), rng);
    sem.execute(make("im2col", {{"dst", 0x1000}, {"src", 0}, {"h", h}, {"w", w}, {"c", c}, {"kh", kh}, {"kw", kw},
                                {"stride_h", sh}, {"stride_w", sw}, {"pad_top", pt}, {"pad_left", pl},
                                {"pad_bottom", pb}, {"pad_right", pr}, {"dil_h", dh}, {"dil_w", dw}}),
                mem);
    const int64_t oh = (h + pt + pb - (kh - 1) * dh - 1) / sh + 1, ow = (w + pl + pr - (kw - 1) * dw - 1) / sw + 1;
    const int64_t row = kh * kw * c;
    // Per output byte: decompose its flat index into (pixel, ky, kx, ci).
    for (int64_t idx = 0; idx < oh * ow * row; ++idx) {
      const int64_t pix = idx / row, col = idx % row;
      const int64_t ky = col / (kw * c), kx = col / c % kw, ci = col % c;
      const int64_t y = pix / ow * sh + ky * dh - pt, x = pix % ow * sw + kx * dw - pl;
      const uint8_t want = (y < 0 || y >= h || x < 0 || x >= w) ? 0 : mem.sram.view((y * w + x) * c + ci, 1)[0];
      ASSERT_EQ(mem.sram.view(0x1000 + idx, 1)[0], want) << "case " << n << " byte " << idx;
    }
  }
}

TEST(Eltwise, AllOpsAgainstNaive) {
  const Semantics sem(the_isa());
  Rng rng(9);
  for (const auto& [op_name, op] : the_isa().field("eltwise", "op").enum_values) {
    for (int n = 0; n < 20; ++n) {
      Memory mem(small_config());
      const int64_t len = rng.range(1, 300), scale = rng.range(0, 300), shift = rng.range(0, 12);
      int64_t lo = rng.range(-128, 127), hi = rng.range(-128, 127);
      if (lo > hi) std::swap(lo, hi);
      fill_random(mem.sram.view(0, 0x400), rng);
      sem.execute(make("eltwise", {{"dst", 0x800}, {"a", 0}, {"b", 0x200}, {"len", len}, {"op", op},
                                   {"scale", scale}, {"shift", shift}, {"lo", lo}, {"hi", hi}}),
                  mem);
      for (int64_t i = 0; i < len; ++i) {
        const int64_t a = s8(mem.sram.view(i, 1)[0]), b = s8(mem.sram.view(0x200 + i, 1)[0]);
        int64_t want = 0;
        if (op_name == "add") want = naive::requant(a + b, scale, shift, false);
        if (op_name == "mul") want = naive::requant(a * b, scale, shift, false);
        if (op_name == "relu") want = a < 0 ? 0 : a;
        if (op_name == "clip") want = a < lo ? lo : (a > hi ? hi : a);
        ASSERT_EQ(s8(mem.sram.view(0x800 + i, 1)[0]), want) << "op " << op_name << " i " << i;
      }
    }
  }
}

TEST(Pool, HandComputedAverageRounding) {
  const Semantics sem(the_isa());
  Memory mem(small_config());
  // 2x4x1 image, 2x2 windows with stride 2: sums 5 (1.25 -> 1) and 6 (1.5 -> 2).
  const uint8_t img[8] = {1, 2, 2, 2, 2, 0, 2, 0};
  mem.sram.write(0, img);
  sem.execute(make("pool", {{"dst", 0x40}, {"src", 0}, {"h", 2}, {"w", 4}, {"c", 1}, {"window_h", 2},
                            {"window_w", 2}, {"stride_h", 2}, {"stride_w", 2}, {"mode", 1}}),
              mem);
  EXPECT_EQ(mem.sram.view(0x40, 1)[0], 1);
  EXPECT_EQ(mem.sram.view(0x41, 1)[0], 2);
  const uint8_t neg[8] = {0xfe, 0xfe, 0xfe, 0xfe, 0xfe, 0, 0xfe, 0};  // -2s: -6/4 -> -2
  mem.sram.write(0, neg);
  sem.execute(make("pool", {{"dst", 0x40}, {"src", 0}, {"h", 2}, {"w", 4}, {"c", 1}, {"window_h", 2},
                            {"window_w", 2}, {"stride_h", 2}, {"stride_w", 2}, {"mode", 1}}),
              mem);
  EXPECT_EQ(s8(mem.sram.view(0x40, 1)[0]), -2);
  EXPECT_EQ(s8(mem.sram.view(0x41, 1)[0]), -2);
}

TEST(Pool, RandomAgainstNaive) {
  // Rectangular windows, strides per axis, per-side pads (skipped positions), count_pad.
  const Semantics sem(the_isa());
  Rng rng(13);
  for (int n = 0; n < 80; ++n) {
    const int64_t h = rng.range(1, 10), w = rng.range(1, 10), c = rng.range(1, 4);
    const int64_t pt = rng.range(0, 2), pl = rng.range(0, 2), pb = rng.range(0, 2), pr = rng.range(0, 2);
    const int64_t wh = rng.range(1, h + pt + pb), ww = rng.range(1, w + pl + pr);
    const int64_t sh = rng.range(1, 3), sw = rng.range(1, 3), mode = rng.range(0, 1), count_pad = rng.range(0, 1);
    Memory mem(small_config());
    fill_random(mem.sram.view(0, h * w * c), rng);
    sem.execute(make("pool", {{"dst", 0x1000}, {"src", 0}, {"h", h}, {"w", w}, {"c", c}, {"window_h", wh},
                              {"window_w", ww}, {"stride_h", sh}, {"stride_w", sw}, {"pad_top", pt},
                              {"pad_left", pl}, {"pad_bottom", pb}, {"pad_right", pr}, {"mode", mode},
                              {"count_pad", count_pad}}),
                mem);
    const int64_t oh = (h + pt + pb - wh) / sh + 1, ow = (w + pl + pr - ww) / sw + 1;
    for (int64_t oy = 0; oy < oh; ++oy) {
      for (int64_t ox = 0; ox < ow; ++ox) {
        for (int64_t ci = 0; ci < c; ++ci) {
          std::vector<int64_t> vals;
          for (int64_t y = oy * sh - pt; y < oy * sh - pt + wh; ++y) {
            for (int64_t x = ox * sw - pl; x < ox * sw - pl + ww; ++x)
              if (y >= 0 && y < h && x >= 0 && x < w) vals.push_back(s8(mem.sram.view((y * w + x) * c + ci, 1)[0]));
          }
          int64_t want = vals.empty() ? (mode == 1 ? 0 : -128) : *std::max_element(vals.begin(), vals.end());
          if (mode == 1 && !vals.empty()) {
            int64_t sum = 0;
            for (auto v : vals) sum += v;
            const double count = count_pad ? static_cast<double>(wh * ww) : static_cast<double>(vals.size());
            const double avg = static_cast<double>(sum) / count;
            want = static_cast<int64_t>(avg < 0 ? -std::floor(-avg + 0.5) : std::floor(avg + 0.5));
          }
          ASSERT_EQ(s8(mem.sram.view(0x1000 + (oy * ow + ox) * c + ci, 1)[0]), want) << "case " << n;
        }
      }
    }
  }
}

TEST(Pool, HandComputedPaddedAverage) {
  // 2x2x1 image {4, 8, 12, 16}, a 3x3 window with pad 1 on every side at (0, 0): the four
  // in-image values sum to 40; avg = 40 / 4 = 10, or 40 / 9 = 4.44 -> 4 with count_pad.
  const Semantics sem(the_isa());
  Memory mem(small_config());
  const uint8_t img[4] = {4, 8, 12, 16};
  mem.sram.write(0, img);
  for (int64_t count_pad : {0, 1}) {
    sem.execute(make("pool", {{"dst", 0x40}, {"src", 0}, {"h", 2}, {"w", 2}, {"c", 1}, {"window_h", 3},
                              {"window_w", 3}, {"stride_h", 2}, {"stride_w", 2}, {"pad_top", 1}, {"pad_left", 1},
                              {"pad_bottom", 1}, {"pad_right", 1}, {"mode", 1}, {"count_pad", count_pad}}),
                mem);
    EXPECT_EQ(mem.sram.view(0x40, 1)[0], count_pad ? 4 : 10);
  }
}

TEST(Lut, TableIndexedFromMinus128) {
  const Semantics sem(the_isa());
  Memory mem(small_config());
  std::vector<uint8_t> table(256);
  for (int i = 0; i < 256; ++i) table[i] = static_cast<uint8_t>(127 - i);  // f(q) = -1 - q at i = q + 128
  mem.sram.write(0x100, table);
  const uint8_t src[5] = {0x80, 0xff, 0x00, 0x01, 0x7f};  // -128, -1, 0, 1, 127
  mem.sram.write(0, src);
  sem.execute(make("lut", {{"dst", 0x40}, {"src", 0}, {"table", 0x100}, {"len", 5}}), mem);
  const std::vector<int8_t> want = {127, 0, -1, -2, -128};
  for (int i = 0; i < 5; ++i) EXPECT_EQ(s8(mem.sram.view(0x40 + i, 1)[0]), want[i]) << i;
}

// Lengths around the kernel's 8-byte gathers, odd offsets, random tables:
// every byte is table[src ^ 0x80] (the AVX2 path and the scalar tail alike).
TEST(Lut, RandomLengthsAndOffsetsAgainstTheTable) {
  const Semantics sem(the_isa());
  Rng rng(41);
  for (int n = 0; n < 120; ++n) {
    Memory mem(small_config());
    fill_random(mem.sram.view(0, 0x3000), rng);
    const int64_t len = n < 20 ? n + 1 : rng.range(1, 700);
    const int64_t src = rng.range(0, 7), dst = 0x1000 + rng.range(0, 7), table = 0x2000 + rng.range(0, 7);
    sem.execute(make("lut", {{"dst", dst}, {"src", src}, {"table", table}, {"len", len}}), mem);
    for (int64_t i = 0; i < len; ++i) {
      const uint8_t x = mem.sram.view(src + i, 1)[0];
      ASSERT_EQ(mem.sram.view(dst + i, 1)[0], mem.sram.view(table + (x ^ 0x80), 1)[0]) << "case " << n << " byte " << i;
    }
  }
}

TEST(Move, OverlappingIsMemmove) {
  const Semantics sem(the_isa());
  Memory mem(small_config());
  const uint8_t init[10] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
  mem.sram.write(0, init);
  sem.execute(make("move", {{"dst", 2}, {"src", 0}, {"len", 8}}), mem);
  const std::vector<uint8_t> up = {0, 1, 0, 1, 2, 3, 4, 5, 6, 7};
  EXPECT_EQ(std::vector<uint8_t>(mem.sram.view(0, 10).begin(), mem.sram.view(0, 10).end()), up);
  sem.execute(make("move", {{"dst", 0}, {"src", 2}, {"len", 8}}), mem);
  const std::vector<uint8_t> down = {0, 1, 2, 3, 4, 5, 6, 7, 6, 7};
  EXPECT_EQ(std::vector<uint8_t>(mem.sram.view(0, 10).begin(), mem.sram.view(0, 10).end()), down);
}

TEST(Dma, LoadAndStoreTwoD) {
  const Semantics sem(the_isa());
  Memory mem(small_config());
  std::vector<uint8_t> ddr(64);
  for (size_t i = 0; i < ddr.size(); ++i) ddr[i] = static_cast<uint8_t>(i);
  mem.ddr.load_image(ddr);
  sem.execute(make("load", {{"dst", 0x100}, {"src", 2}, {"rows", 3}, {"row_bytes", 4}, {"stride", 10}}), mem);
  const std::vector<uint8_t> packed = {2, 3, 4, 5, 12, 13, 14, 15, 22, 23, 24, 25};
  EXPECT_EQ(std::vector<uint8_t>(mem.sram.view(0x100, 12).begin(), mem.sram.view(0x100, 12).end()), packed);
  // Store back to DDR 0x200 with stride 6: the 2-byte gaps keep their old contents.
  std::vector<uint8_t> gap(18, 0xee);
  mem.ddr.write(0x200, gap);
  sem.execute(make("store", {{"dst", 0x200}, {"src", 0x100}, {"rows", 3}, {"row_bytes", 4}, {"stride", 6}}), mem);
  std::vector<uint8_t> got(18);
  mem.ddr.read(0x200, got);
  const std::vector<uint8_t> want = {2, 3, 4, 5, 0xee, 0xee, 12, 13, 14, 15, 0xee, 0xee, 22, 23, 24, 25, 0xee, 0xee};
  EXPECT_EQ(got, want);
  EXPECT_EQ(mem.ddr.extent(), 0x212u);
}

TEST(Bounds, OutOfRangeIsAnErrorAndChangesNothing) {
  const Semantics sem(the_isa());
  Memory mem(small_config());
  const auto in = make("load", {{"dst", 64 * 1024 - 8}, {"src", 0}, {"rows", 1}, {"row_bytes", 16}});
  EXPECT_NE(sem.check_bounds(in, 64 * 1024, 1 << 20).find("outside"), std::string::npos);
  try {
    sem.execute(in, mem);
    FAIL() << "no AccessError";
  } catch (const AccessError& e) {
    EXPECT_EQ(e.space, isa::Space::Sram);
    EXPECT_EQ(e.addr, 64u * 1024 - 8);
    EXPECT_EQ(e.bytes, 16u);
  }
  EXPECT_EQ(mem.sram.view(64 * 1024 - 8, 8)[0], 0);
  const auto ddr = make("store", {{"dst", (1 << 20) - 4}, {"src", 0}, {"rows", 1}, {"row_bytes", 8}});
  EXPECT_THROW(sem.execute(ddr, mem), AccessError);
  EXPECT_EQ(mem.ddr.extent(), 0u);
}

TEST(Binding, MissingFieldIsNamed) {
  std::string yaml(isa::builtin_isa_yaml());
  const std::string from = "{name: shift, bits: [205, 200]";
  const auto at = yaml.find(from);
  ASSERT_NE(at, std::string::npos);
  yaml.replace(at, from.size(), "{name: shiftx, bits: [205, 200]");
  const isa::Isa broken = isa::Isa::load_string(yaml, "broken.yaml");
  try {
    Semantics sem(broken);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("shift"), std::string::npos) << e.what();
  }
}

// The built-in ISA's YAML with `from` replaced by `to`.
isa::Isa edited_isa(const std::string& from, const std::string& to) {
  std::string yaml(isa::builtin_isa_yaml());
  const auto at = yaml.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) yaml.replace(at, from.size(), to);
  return isa::Isa::load_string(yaml, "edited.yaml");
}

using FieldValues = std::vector<std::pair<const char*, int64_t>>;

// `mnemonic` with `fields` and its enum field `field` = the named value `value`, on the ISA
// `isa` (its own code for the value) and on the built-in one: the `out_bytes` bytes written
// at 0x800 from the same random SRAM are equal.
void expect_same_under_both_codes(const isa::Isa& isa, const char* mnemonic, const FieldValues& fields,
                                  const char* field, const char* value, size_t out_bytes, Rng& rng) {
  Memory want(small_config()), got(small_config());
  fill_random(want.sram.view(0, 0x400), rng);
  std::copy_n(want.sram.view(0, 0x400).begin(), 0x400, got.sram.view(0, 0x400).begin());
  const auto instr = [&](const isa::Isa& with) {
    isa::Instruction in = isa::Instruction::make(with.require(mnemonic));
    for (const auto& [name, v] : fields) in.set_value(in.spec->require_field(name), v);
    in.set_value(in.spec->require_field(field), with.enum_value(mnemonic, field, value));
    return in;
  };
  Semantics(the_isa()).execute(instr(the_isa()), want);
  Semantics(isa).execute(instr(isa), got);
  const auto w = want.sram.view(0x800, out_bytes), g = got.sram.view(0x800, out_bytes);
  EXPECT_TRUE(std::equal(w.begin(), w.end(), g.begin())) << mnemonic << " " << value;
}

// The codes of ELTWISE op and POOL mode are the ISA's alone: an ISA file that numbers them
// otherwise computes the same results under its own codes.
TEST(Binding, EnumCodesComeFromTheIsa) {
  // b's extent names codes too: add and mul read it, now as codes 2 and 3.
  std::string yaml(isa::builtin_isa_yaml());
  for (const auto& [from, to] : {std::pair<std::string, std::string>{"{add: 0, mul: 1, relu: 2, clip: 3}",
                                                                     "{clip: 0, relu: 1, mul: 2, add: 3}"},
                                 {"op <= 1 ? len : 0", "op >= 2 ? len : 0"}})
    yaml.replace(yaml.find(from), from.size(), to);
  const isa::Isa renumbered = isa::Isa::load_string(yaml, "renumbered.yaml");
  const isa::Isa swapped = edited_isa("{max: 0, avg: 1}", "{avg: 0, max: 1}");
  Rng rng(31);
  const FieldValues eltwise = {{"dst", 0x800}, {"a", 0},     {"b", 0x200}, {"len", 256},
                               {"scale", 37},  {"shift", 5}, {"lo", -20},  {"hi", 30}};
  for (const char* op : {"add", "mul", "relu", "clip"})
    expect_same_under_both_codes(renumbered, "eltwise", eltwise, "op", op, 256, rng);
  const FieldValues pool = {{"dst", 0x800},   {"src", 0},      {"h", 8},       {"w", 8},       {"c", 4},
                            {"window_h", 3}, {"window_w", 2}, {"stride_h", 1}, {"stride_w", 2}};
  for (const char* mode : {"max", "avg"}) expect_same_under_both_codes(swapped, "pool", pool, "mode", mode, 96, rng);
}

// An ISA whose b extent disagrees with its op codes (add renumbered, the extent not) is an
// error naming the operand, not a read of an operand that was never fetched.
TEST(Binding, BinaryOpWithoutItsSecondOperandIsAnError) {
  const isa::Isa bad = edited_isa("{add: 0, mul: 1, relu: 2, clip: 3}", "{clip: 0, relu: 1, mul: 2, add: 3}");
  const Semantics sem(bad);
  Memory mem(small_config());
  isa::Instruction in = isa::Instruction::make(bad.require("eltwise"));
  in.set_value(in.spec->require_field("len"), 16);
  in.set_value(in.spec->require_field("op"), bad.enum_value("eltwise", "op", "add"));
  try {
    sem.execute(in, mem);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("eltwise add: operand b covers 0 bytes, the op reads 16"), std::string::npos)
        << e.what();
  }
}

// A value the simulator does not implement is refused when the Semantics is built, naming it.
TEST(Binding, EnumValueWithoutSemanticsIsNamed) {
  const isa::Isa sub = edited_isa("{add: 0, mul: 1, relu: 2, clip: 3}", "{add: 0, mul: 1, relu: 2, sub: 3}");
  try {
    Semantics sem(sub);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("eltwise.op value 'sub' has no semantics in the simulator"),
              std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("add, mul, relu, clip"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace npuforge::sim
