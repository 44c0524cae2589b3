// Why not a plain scan of the row counts: a size with no divisor near r0 (a prime, or twice
// one) costs 4,096 divisions that way, and the generator factors every large LOAD, STORE and
// spill candidate; that scan was 5-7% of generation time. Building the divisors from the
// prime factors finds the same row count with far fewer divisions.
#include "gen/factor.h"

#include <algorithm>
#include <array>

namespace npuforge::gen {
namespace {

constexpr uint64_t kRowTries = 4096;  // row counts tried from the fewest possible

// The smallest divisor of n (n >= 1) in [lo, hi], or 0 when there is none.
uint64_t smallest_divisor_in(uint64_t n, uint64_t lo, uint64_t hi) {
  struct PrimePower {
    uint64_t prime;
    unsigned exponent;
  };
  // Only primes <= hi can be part of a divisor <= hi, so trial division stops there (and
  // at the square root of what is left, which is then 1 or a prime).
  std::array<PrimePower, 16> factors;  // a 64-bit number has at most 15 distinct primes
  unsigned count = 0;
  uint64_t rest = n;
  for (uint64_t d = 2; d <= hi && d * d <= rest; d += d == 2 ? 1 : 2) {
    if (rest % d != 0) continue;
    unsigned e = 0;
    do {
      rest /= d;
      ++e;
    } while (rest % d == 0);
    factors[count++] = {d, e};
  }
  if (rest > 1 && rest <= hi) factors[count++] = {rest, 1};
  // Depth first over the exponents; a product only grows, so one past hi (or past the best
  // found) ends its branch.
  uint64_t best = 0;
  const auto search = [&](const auto& self, unsigned i, uint64_t d) -> void {
    if (best != 0 && d >= best) return;
    if (i == count) {
      if (d >= lo) best = d;
      return;
    }
    for (unsigned e = 0;; ++e) {
      self(self, i + 1, d);
      if (e == factors[i].exponent || d > hi / factors[i].prime) return;
      d *= factors[i].prime;
    }
  };
  search(search, 0, 1);
  return best;
}

}  // namespace

bool factor_exact(uint64_t bytes, const DmaLimits& limits, uint32_t& rows, uint32_t& row_bytes) {
  const uint64_t max_rb = limits.row_bytes;
  if (bytes > limits.rows * max_rb) return false;  // more than the most rows of the longest rows
  const uint64_t r0 = std::max<uint64_t>(1, (bytes + max_rb - 1) / max_rb);
  const uint64_t hi = std::min(limits.rows, r0 + kRowTries - 1);
  // r0 rows or more leave at most max_rb bytes per row; any divisor in range will do.
  const uint64_t r = bytes % r0 == 0 ? r0 : smallest_divisor_in(bytes, r0, hi);
  if (r == 0) return false;
  rows = static_cast<uint32_t>(r);
  row_bytes = static_cast<uint32_t>(bytes / r);
  return true;
}

void factor_floor(uint64_t bytes, const DmaLimits& limits, uint32_t& rows, uint32_t& row_bytes) {
  if (factor_exact(bytes, limits, rows, row_bytes)) return;
  const uint64_t r = std::max<uint64_t>(1, (bytes + limits.row_bytes - 1) / limits.row_bytes);
  rows = static_cast<uint32_t>(r);
  row_bytes = static_cast<uint32_t>(bytes / r);
}

}  // namespace npuforge::gen
