#pragma once
// The NPU's integer arithmetic as the ISA defines it, in one place: the simulator's kernels
// (sim/) and the model compiler's int8 reference (compiler/) both compute with these, so a
// compiled program and its reference agree on every rounding.
//  - requant(x) = clamp((x * scale + round) >> shift, -128, 127) computed exactly (no
//    overflow for any int32 x and uint32 scale), round = 1 << (shift - 1) when shift > 0 else
//    0, >> arithmetic (floor); then max(0, .) when relu. scale is unsigned; shift 0..63.
//  - POOL avg: sum / count rounded half away from zero.
#include <cstdint>

namespace npuforge::isa {

struct RequantParams {
  uint32_t scale = 1;
  uint32_t shift = 0;  // 0..63 (larger values act as 63); the ISA's fields bound it further
  bool relu = false;
};

int8_t requant(int64_t x, const RequantParams& p);
int8_t round_div_away(int64_t sum, int64_t count);  // count > 0
int8_t clamp_int8(int64_t v);

// The (scale, shift) whose scale / 2^shift is closest to `multiplier` (> 0) with scale below
// 2^scale_bits and shift <= max_shift: the largest shift that keeps scale in range, so the
// relative error is at most 2^-(scale_bits-1) unless the multiplier is too small or too large
// for the fields (then the nearest representable value). relu is false.
RequantParams make_requant(double multiplier, unsigned scale_bits, unsigned max_shift);

}  // namespace npuforge::isa
