// The nearest-name helper behind every "did you mean" in the error messages.
#include "util/suggest.h"

#include <gtest/gtest.h>

namespace npuforge::util {
namespace {

TEST(EditDistance, CountsInsertionsDeletionsSubstitutionsAndSwaps) {
  EXPECT_EQ(edit_distance("", ""), 0u);
  EXPECT_EQ(edit_distance("abc", ""), 3u);
  EXPECT_EQ(edit_distance("", "ab"), 2u);
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
  EXPECT_EQ(edit_distance("kernal_shape", "kernel_shape"), 1u);
  EXPECT_EQ(edit_distance("sahpe", "shape"), 1u) << "a swap of neighbours is one edit";
  EXPECT_EQ(edit_distance("regres", "regress"), 1u);
}

TEST(ClosestNames, NearestFirstAndOnlyCloseOnes) {
  const std::vector<std::string> subs{"regress", "regress-worker", "merge", "gen", "sim", "shrink", "cover"};
  EXPECT_EQ(closest_names("regres", subs), (std::vector<std::string>{"regress", "regress-worker"}));
  EXPECT_EQ(closest_names("shrnk", subs), (std::vector<std::string>{"shrink"}));
  EXPECT_TRUE(closest_names("frobnicate", subs).empty());
  EXPECT_TRUE(closest_names("regress", subs).size() == 1) << "the word itself is not suggested";
}

TEST(DidYouMean, ListsTheCloseOnesOrNothing) {
  EXPECT_EQ(did_you_mean("kernal_shape", {"kernel_shape", "strides", "pads"}), "did you mean 'kernel_shape'?");
  EXPECT_EQ(did_you_mean("pad", {"pads", "pad_mode", "strides"}), "did you mean 'pads' or 'pad_mode'?");
  EXPECT_EQ(did_you_mean("xyz", {"pads", "strides"}), "");
}

}  // namespace
}  // namespace npuforge::util
