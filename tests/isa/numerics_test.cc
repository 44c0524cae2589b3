// make_requant: the (scale, shift) pair approximates the multiplier within the field limits.
#include <cmath>

#include <gtest/gtest.h>

#include "isa/numerics.h"

namespace npuforge::isa {
namespace {

double value(const RequantParams& p) { return std::ldexp(double(p.scale), -int(p.shift)); }

TEST(MakeRequant, RelativeErrorBoundedByTheScaleWidth) {
  for (double m : {1e-6, 3.1e-4, 0.0123, 0.5, 0.999, 1.0, 7.25, 200.0}) {
    const RequantParams p = make_requant(m, 16, 40);
    EXPECT_LT(p.scale, 1u << 16);
    EXPECT_LE(p.shift, 40u);
    EXPECT_LE(std::fabs(value(p) - m) / m, 1.0 / (1 << 15)) << m;
  }
}

TEST(MakeRequant, ExactPowersOfTwoAreExact) {
  EXPECT_EQ(value(make_requant(0.25, 16, 40)), 0.25);
  EXPECT_EQ(value(make_requant(4.0, 16, 40)), 4.0);
}

TEST(MakeRequant, OutOfRangeSaturates) {
  const RequantParams big = make_requant(1e9, 8, 40);
  EXPECT_EQ(big.scale, 255u);
  EXPECT_EQ(big.shift, 0u);
  const RequantParams tiny = make_requant(1e-20, 16, 40);  // far below 2^-40: rounds to 0
  EXPECT_EQ(tiny.scale, 0u);
}

TEST(MakeRequant, AgreesWithRequantOnValues) {
  // x * m rounded, for a multiplier the pair represents exactly (3/8).
  const RequantParams p = make_requant(0.375, 16, 40);
  for (int64_t x = -300; x <= 300; ++x) {
    const double r = std::floor(x * 0.375 + 0.5);
    EXPECT_EQ(requant(x, p), static_cast<int8_t>(std::clamp(r, -128.0, 127.0))) << x;
  }
}

}  // namespace
}  // namespace npuforge::isa
