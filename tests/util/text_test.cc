// util/text: the UTF-8 check that keeps YAML formats from writing back other bytes, JSON
// quoting of such bytes, and the hex digits the program writers share.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <string>

#include <fmt/format.h>

#include "util/text.h"

namespace npuforge::util {
namespace {

TEST(ValidUtf8, AcceptsAsciiAndWellFormedSequences) {
  EXPECT_TRUE(valid_utf8(""));
  EXPECT_TRUE(valid_utf8("ld0 e24"));
  EXPECT_TRUE(valid_utf8("\xc3\xa9"));          // U+00E9, 2 bytes
  EXPECT_TRUE(valid_utf8("\xe2\x82\xac"));      // U+20AC, 3 bytes
  EXPECT_TRUE(valid_utf8("\xf0\x9f\x98\x80"));  // U+1F600, 4 bytes
  EXPECT_TRUE(valid_utf8("\xf4\x8f\xbf\xbf"));  // U+10FFFF, the last code point
  EXPECT_TRUE(valid_utf8(std::string("a\0b", 3)));
}

TEST(ValidUtf8, RefusesMalformedSequences) {
  EXPECT_FALSE(valid_utf8("\xff"));                // never a UTF-8 byte
  EXPECT_FALSE(valid_utf8("\x80"));                // continuation without a lead
  EXPECT_FALSE(valid_utf8("\xc3"));                // truncated
  EXPECT_FALSE(valid_utf8("\xc3\x28"));            // bad continuation
  EXPECT_FALSE(valid_utf8("\xc0\xaf"));            // overlong '/'
  EXPECT_FALSE(valid_utf8("\xe0\x80\xaf"));        // overlong, 3 bytes
  EXPECT_FALSE(valid_utf8("\xed\xa0\x80"));        // surrogate U+D800
  EXPECT_FALSE(valid_utf8("\xf4\x90\x80\x80"));    // past U+10FFFF
  EXPECT_FALSE(valid_utf8("\xe2\x82"));            // truncated at the end
  EXPECT_FALSE(valid_utf8("\xf0\x9f\x98\x28"));    // bad last continuation
  EXPECT_FALSE(valid_utf8("\xff\xff\xff\x01"));    // the fuzz_plan_yaml finding's id
}

TEST(JsonQuote, ReplacesBytesThatAreNotUtf8AndKeepsWellFormedOnes) {
  EXPECT_EQ(json_quote("caf\xc3\xa9"), "\"caf\xc3\xa9\"");
  EXPECT_EQ(json_quote("\xf0\x9f\x98\x80"), "\"\xf0\x9f\x98\x80\"");
  EXPECT_EQ(json_quote("a\xff" "b"), "\"a\\ufffdb\"");
  EXPECT_EQ(json_quote("\xc3"), "\"\\ufffd\"");              // truncated at the end
  EXPECT_EQ(json_quote("\xed\xa0\x80"), "\"\\ufffd\\ufffd\\ufffd\"");  // surrogate: each byte
  EXPECT_TRUE(valid_utf8(json_quote("\xff\xff\xff\x01")));
}

TEST(HexDigits, MatchesFmtLowercaseHex) {
  std::array<char, 16> buf;
  EXPECT_EQ(hex_digits(0, buf), "0");
  EXPECT_EQ(hex_digits(31, buf), "1f");
  EXPECT_EQ(hex_digits(0xdeadbeef, buf), "deadbeef");
  EXPECT_EQ(hex_digits(~uint64_t{0}, buf), "ffffffffffffffff");
}

// The raw-buffer writers of the program outputs print what fmt prints, at every digit count.
TEST(RawNumbers, MatchFmt) {
  char buf[kMaxDecDigits + 2];
  auto dec = [&](uint64_t v) { return std::string(buf, write_dec(buf, v)); };
  auto sdec = [&](int64_t v) { return std::string(buf, write_signed_dec(buf, v)); };
  auto hex = [&](uint64_t v) { return std::string(buf, write_hex(buf, v)); };
  for (uint64_t p = 1, k = 0; k < 20; ++k, p *= 10) {  // each power of ten and its neighbours
    for (const uint64_t v : {p - 1, p, p + 1, 2 * p + 37}) {
      EXPECT_EQ(dec(v), fmt::format("{}", v));
      EXPECT_EQ(sdec(-static_cast<int64_t>(v)), fmt::format("{}", -static_cast<int64_t>(v)));
      EXPECT_EQ(hex(v), fmt::format("{:x}", v));
    }
  }
  EXPECT_EQ(dec(UINT64_MAX), "18446744073709551615");
  EXPECT_EQ(sdec(INT64_MIN), "-9223372036854775808");
  EXPECT_EQ(sdec(INT64_MAX), "9223372036854775807");
  EXPECT_EQ(hex(0), "0");
  EXPECT_EQ(std::string(buf, write_text(buf, "ab")), "ab");
}

// write_text copies short texts with overlapping word loads and stores: every length, and
// nothing written past the end.
TEST(RawText, EveryLengthCopiedExactly) {
  const std::string src = "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGH";
  for (size_t n = 0; n <= 40; ++n) {
    std::string out(48, '#');
    char* end = write_text(out.data(), src.data(), n);
    EXPECT_EQ(end, out.data() + n);
    EXPECT_EQ(out.substr(0, n), src.substr(0, n)) << n;
    EXPECT_EQ(out.substr(n), std::string(48 - n, '#')) << n;
  }
}

}  // namespace
}  // namespace npuforge::util
