#include "isa/numerics.h"

#include <algorithm>
#include <cmath>

namespace npuforge::isa {

int8_t clamp_int8(int64_t v) { return static_cast<int8_t>(std::clamp<int64_t>(v, -128, 127)); }

int8_t requant(int64_t x, const RequantParams& p) {
  const unsigned shift = std::min(p.shift, 63u);  // a wider shift would be undefined
  // 128 bits: an int32 accumulator times a uint32 per-channel scale plus the rounding term
  // can pass 2^63.
  using wide = __int128;
  const wide round = shift > 0 ? wide{1} << (shift - 1) : 0;
  const wide prod = static_cast<wide>(x) * static_cast<wide>(p.scale) + round;
  int64_t v = static_cast<int64_t>(std::clamp<wide>(prod >> shift, -128, 127));  // arithmetic (C++20)
  if (p.relu) v = std::max<int64_t>(v, 0);
  return static_cast<int8_t>(v);
}

int8_t round_div_away(int64_t sum, int64_t count) {
  // |sum| / count rounded half up, as (2|sum| + count) / (2 count), then the sign back.
  const int64_t mag = (2 * (sum < 0 ? -sum : sum) + count) / (2 * count);
  return clamp_int8(sum < 0 ? -mag : mag);
}

RequantParams make_requant(double multiplier, unsigned scale_bits, unsigned max_shift) {
  const double scale_max = std::ldexp(1.0, static_cast<int>(scale_bits)) - 1;
  RequantParams best{1, 0, false};
  double best_err = INFINITY;
  for (unsigned shift = 0; shift <= max_shift; ++shift) {
    const double s = std::nearbyint(std::ldexp(multiplier, static_cast<int>(shift)));
    if (s > scale_max) break;
    if (s < 1) continue;
    const double err = std::fabs(std::ldexp(s, -static_cast<int>(shift)) - multiplier);
    if (err <= best_err) {
      best_err = err;
      best = {static_cast<uint32_t>(s), shift, false};
    }
  }
  if (best_err == INFINITY) {
    // Nothing representable near it: 0 when it is below half the smallest step, else the
    // largest scale (too large for the fields even at shift 0).
    const bool tiny = std::ldexp(multiplier, static_cast<int>(max_shift)) < 0.5;
    best = {tiny ? 0u : static_cast<uint32_t>(scale_max), 0, false};
  }
  return best;
}

}  // namespace npuforge::isa
