// ShadowClocks (gen/shadow.h) against a plain array of clocks: random assignments and
// maxima over ranges of every shape (inside one block, across blocks, whole blocks, the
// short last block, empty), with values that go down as well as up.
#include "gen/shadow.h"

#include <gtest/gtest.h>

#include <vector>

#include "util/error.h"
#include "util/rng.h"

namespace npuforge::gen {
namespace {

using Clock = ShadowClocks::Clock;

struct Range {
  size_t first, end;
};

Range random_range(Rng& rng, size_t units) {
  const size_t first = rng.below(units + 1);
  // Mostly short ranges (like small buffers), sometimes long ones (like large buffers).
  const size_t len = rng.chance(0.7) ? rng.below(6) : rng.below(units - first + 1);
  return {first, std::min(units, first + len)};
}

Clock random_clock(Rng& rng) {
  Clock c;
  for (auto& v : c) v = rng.chance(0.3) ? 0 : static_cast<uint32_t>(rng.below(1000));  // 0: queue never touched it
  return c;
}

TEST(GenShadow, AgreesWithAPlainArray) {
  for (size_t units : {1u, 15u, 16u, 17u, 48u, 100u, 8193u}) {
    Rng rng(units);
    ShadowClocks shadow(units, 1);  // one byte per unit: ranges are units
    std::vector<Clock> plain(units, Clock{});
    ASSERT_EQ(shadow.size(), units);
    for (int op = 0; op < 20000; ++op) {
      const Range r = random_range(rng, units);
      if (rng.chance(0.5)) {
        const Clock c = random_clock(rng);
        shadow.assign(r.first, r.end - r.first, c);
        for (size_t u = r.first; u < r.end; ++u) plain[u] = c;
      } else {
        Clock want{};
        for (size_t u = r.first; u < r.end; ++u)
          for (unsigned p = 0; p < 3; ++p) want[p] = std::max(want[p], plain[u][p]);
        ASSERT_EQ(shadow.max_over(r.first, r.end - r.first), want)
            << "units " << units << " op " << op << " [" << r.first << ", " << r.end << ")";
      }
    }
  }
}

TEST(GenShadow, WholeBlocksAndBytes) {
  ShadowClocks shadow(65, 64);  // 64 units of 64 bytes (and the one past the end)
  shadow.assign(0, 64 * 64, {5, 6, 7});
  shadow.assign(3 * 64, 64, {9, 0, 1});  // one unit inside the first block
  EXPECT_EQ(shadow.max_over(0, 3 * 64), (Clock{5, 6, 7}));
  EXPECT_EQ(shadow.max_over(3 * 64, 64), (Clock{9, 0, 1}));
  EXPECT_EQ(shadow.max_over(3 * 64 + 5, 64), (Clock{9, 0, 1}));   // ends inside unit 4: unit 3 only
  EXPECT_EQ(shadow.max_over(3 * 64 + 5, 128), (Clock{9, 6, 7}));  // units 3 and 4
  EXPECT_EQ(shadow.max_over(0, 16 * 64), (Clock{9, 6, 7}));
  shadow.assign(0, 32 * 64, {1, 1, 1});  // lower values replace higher ones
  EXPECT_EQ(shadow.max_over(0, 32 * 64), (Clock{1, 1, 1}));
  EXPECT_EQ(shadow.max_over(0, 64 * 64), (Clock{5, 6, 7}));
  EXPECT_EQ(shadow.max_over(10 * 64, 63), (Clock{0, 0, 0}));  // covers no whole unit: none
  EXPECT_EQ(shadow.max_over(64 * 64, 64), (Clock{0, 0, 0}));
}

TEST(GenShadow, UnitMustBeAPowerOfTwo) { EXPECT_THROW(ShadowClocks(10, 48), Error); }

}  // namespace
}  // namespace npuforge::gen
