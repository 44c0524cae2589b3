// factor_exact / factor_floor (gen/factor.h) against the plain scan they replace: the same
// row count for every size, sizes with no divisor near the fewest rows included (primes,
// twice a prime, squares of primes), and the fields' limits hold: the built-in ISA's (16-bit
// rows and row_bytes) and narrower, unequal ones.
#include "gen/factor.h"

#include <gtest/gtest.h>

#include <vector>

#include "isa/isa.h"
#include "util/rng.h"

namespace npuforge::gen {
namespace {

// The built-in ISA's LOAD limits (16-bit fields).
DmaLimits builtin_limits() {
  const isa::Isa& isa = isa::builtin_isa();
  return {static_cast<uint64_t>(isa.max_value("load", "rows")), static_cast<uint64_t>(isa.max_value("load", "row_bytes"))};
}

// The definition: the first row count from the fewest possible (at most 4,096 tried) that
// divides the bytes into rows of at most lim.row_bytes, with at most lim.rows rows.
bool reference_exact(uint64_t bytes, const DmaLimits& lim, uint32_t& rows, uint32_t& row_bytes) {
  const uint64_t r0 = std::max<uint64_t>(1, (bytes + lim.row_bytes - 1) / lim.row_bytes);
  for (uint64_t r = r0; r <= lim.rows && r < r0 + 4096; ++r) {
    if (bytes % r == 0 && bytes / r <= lim.row_bytes) {
      rows = static_cast<uint32_t>(r);
      row_bytes = static_cast<uint32_t>(bytes / r);
      return true;
    }
  }
  return false;
}

void expect_same(uint64_t bytes, const DmaLimits& lim) {
  uint32_t rows = 7, rb = 9, ref_rows = 7, ref_rb = 9;  // untouched on false
  const bool ok = factor_exact(bytes, lim, rows, rb);
  ASSERT_EQ(ok, reference_exact(bytes, lim, ref_rows, ref_rb)) << bytes;
  ASSERT_EQ(rows, ref_rows) << bytes;
  ASSERT_EQ(rb, ref_rb) << bytes;
  if (ok) {
    ASSERT_EQ(uint64_t(rows) * rb, bytes);
    ASSERT_LE(rows, lim.rows);
    ASSERT_LE(rb, lim.row_bytes);
  }
}

TEST(GenFactor, ExactAgreesWithThePlainScan) {
  std::vector<uint64_t> sizes = {0,          1,          2,          65534,       65535,        65536,
                                 65537,      131070,     131071,     131072,      1ull << 24,   (1ull << 24) - 1,
                                 16777213,   2 * 8388593ull,        4093ull * 4093, 4099ull * 4099,
                                 65535ull * 65535,      65535ull * 65535 + 1,   65535ull * 65536,
                                 1ull << 32, 1ull << 40, ~0ull};
  // Products of two primes around the end of the tried range, and primes near 2^20.
  for (uint64_t p : {4091ull, 4093ull, 4099ull, 4111ull, 4349ull, 4357ull, 1048573ull, 1048583ull})
    for (uint64_t q : {1ull, 2ull, 3ull, 16ull, 17ull, 255ull, 4093ull})
      sizes.push_back(p * q);
  Rng rng(2024);
  for (int i = 0; i < 20000; ++i) {  // log-uniform up to 2^34: every magnitude the fields meet
    const int bits = static_cast<int>(rng.range(1, 34));
    sizes.push_back(rng.next() >> (64 - bits));
  }
  for (uint64_t b = 65000; b < 70000; ++b) sizes.push_back(b);
  const DmaLimits builtin = builtin_limits();
  ASSERT_EQ(builtin.rows, 65535u);
  ASSERT_EQ(builtin.row_bytes, 65535u);
  for (uint64_t b : sizes) expect_same(b, builtin);
  for (uint64_t b : sizes) expect_same(b, DmaLimits{1000, 300});  // narrower fields, rows != row_bytes
}

TEST(GenFactor, FloorIsExactWhenPossibleElseTheFewestRows) {
  Rng rng(7);
  for (int i = 0; i < 5000; ++i) {
    const uint64_t bytes = 1 + (rng.next() >> static_cast<int>(rng.range(38, 63)));
    uint32_t rows = 0, rb = 0, ref_rows = 0, ref_rb = 0;
    const DmaLimits lim = builtin_limits();
    factor_floor(bytes, lim, rows, rb);
    if (!reference_exact(bytes, lim, ref_rows, ref_rb)) {
      ref_rows = static_cast<uint32_t>(std::max<uint64_t>(1, (bytes + 65534) / 65535));
      ref_rb = static_cast<uint32_t>(bytes / ref_rows);
    }
    ASSERT_EQ(rows, ref_rows) << bytes;
    ASSERT_EQ(rb, ref_rb) << bytes;
    ASSERT_LE(uint64_t(rows) * rb, bytes);
  }
}

}  // namespace
}  // namespace npuforge::gen
