#pragma once
// Test-only references for the simulator's kernels, shared by semantics_test and
// kernels_test: the obvious loops, written without the fast paths' tricks.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "isa/assembler.h"
#include "util/rng.h"

namespace npuforge::sim::naive {

inline const isa::Isa& the_isa() { return isa::builtin_isa(); }

// `valid`: the instruction must pass isa::validate (crossed clip bounds do not, yet the
// kernels define them).
inline isa::Instruction make(std::string_view mnemonic, const std::map<std::string, int64_t>& fields,
                             bool valid = true, const isa::Isa& isa = the_isa()) {
  const auto& spec = isa.require(mnemonic);
  isa::Instruction in = isa::Instruction::make(spec);
  for (const auto& [name, v] : fields) in.set_value(spec.require_field(name), v);
  if (valid) {
    EXPECT_EQ(isa::validate(in), "") << isa::disassemble(in);
  }
  return in;
}

inline void fill_random(std::span<uint8_t> s, Rng& rng) {
  for (auto& b : s) b = static_cast<uint8_t>(rng.next());
}
inline int8_t s8(uint8_t b) { return static_cast<int8_t>(b); }

// requant as floor division in 128 bits (no shift, no overflow, any shift up to 126).
inline int8_t requant(int64_t x, int64_t scale, int64_t shift, bool relu) {
  const __int128 d = __int128{1} << shift;
  const __int128 v = __int128{x} * scale + (shift > 0 ? d / 2 : 0);
  __int128 q = v >= 0 ? v / d : -((-v + d - 1) / d);
  q = q < -128 ? -128 : (q > 127 ? 127 : q);
  if (relu && q < 0) q = 0;
  return static_cast<int8_t>(q);
}

struct GemmCase {
  int64_t m, n, k, scale, shift;
  bool relu, has_bias;
};

// Triple loop, int64 sum wrapped to int32 at the end.
inline std::vector<int8_t> gemm(const GemmCase& g, std::span<const uint8_t> a, std::span<const uint8_t> b,
                                std::span<const uint8_t> bias) {
  std::vector<int8_t> out(static_cast<size_t>(g.m * g.n));
  for (int64_t i = 0; i < g.m; ++i) {
    for (int64_t j = 0; j < g.n; ++j) {
      int64_t sum = 0;
      if (g.has_bias) {
        int32_t bv;
        std::memcpy(&bv, bias.data() + 4 * j, 4);  // little-endian host
        sum = bv;
      }
      for (int64_t p = 0; p < g.k; ++p) sum += int64_t{s8(a[i * g.k + p])} * s8(b[p * g.n + j]);
      out[i * g.n + j] = requant(static_cast<int32_t>(static_cast<uint32_t>(sum)), g.scale, g.shift, g.relu);
    }
  }
  return out;
}

struct PoolCase {
  int64_t h, w, c, wh, ww, sh, sw, pt, pl, pb, pr, mode, count_pad;
};

// Every window on its own: the in-image values' maximum (-128 if none) or their sum divided
// by the count (wh * ww with count_pad), rounded half away from zero in exact integers.
inline std::vector<int8_t> pool(const PoolCase& p, std::span<const uint8_t> img) {
  const int64_t oh = (p.h + p.pt + p.pb - p.wh) / p.sh + 1, ow = (p.w + p.pl + p.pr - p.ww) / p.sw + 1;
  std::vector<int8_t> out(static_cast<size_t>(oh * ow * p.c));
  for (int64_t oy = 0; oy < oh; ++oy) {
    for (int64_t ox = 0; ox < ow; ++ox) {
      for (int64_t ci = 0; ci < p.c; ++ci) {
        int64_t best = -128, sum = 0, count = 0;
        for (int64_t y = oy * p.sh - p.pt; y < oy * p.sh - p.pt + p.wh; ++y) {
          for (int64_t x = ox * p.sw - p.pl; x < ox * p.sw - p.pl + p.ww; ++x) {
            if (y < 0 || y >= p.h || x < 0 || x >= p.w) continue;
            const int64_t v = static_cast<int8_t>(img[static_cast<size_t>((y * p.w + x) * p.c + ci)]);
            best = std::max(best, v);
            sum += v;
            ++count;
          }
        }
        int64_t v = best;
        if (p.mode == 1) {
          const int64_t d = p.count_pad ? p.wh * p.ww : count;
          const int64_t mag = d == 0 ? 0 : (2 * (sum < 0 ? -sum : sum) + d) / (2 * d);
          v = std::clamp<int64_t>(sum < 0 ? -mag : mag, -128, 127);
        }
        out[static_cast<size_t>((oy * ow + ox) * p.c + ci)] = static_cast<int8_t>(v);
      }
    }
  }
  return out;
}

}  // namespace npuforge::sim::naive
