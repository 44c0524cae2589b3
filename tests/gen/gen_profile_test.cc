// Profiles: the shipped ones load; unknown keys and out-of-range values are errors that
// name the key and the file:line.
#include <gtest/gtest.h>

#include "gen/profile.h"
#include "util/error.h"

namespace npuforge::gen {
namespace {

std::string error_of(std::string_view yaml) {
  try {
    Profile::load_string(yaml, "p.yaml");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(GenProfile, ShippedProfilesLoad) {
  for (const char* name : {"default", "stress-fragment", "near-full", "tiny-buffers"}) {
    const Profile p = Profile::load_file(std::string(NPUFORGE_SOURCE_DIR) + "/configs/gen/" + name + ".yaml");
    EXPECT_GT(p.length, 1) << name;
    EXPECT_NE(p.hash, 0u) << name;
  }
  const Profile p = Profile::load_file(std::string(NPUFORGE_SOURCE_DIR) + "/configs/gen/stress-fragment.yaml");
  EXPECT_EQ(p.oom, OomPolicy::Compact);
  EXPECT_EQ(p.fit, allocator::Policy::BestFit);
  EXPECT_EQ(p.directed[static_cast<unsigned>(Directed::TinyBuffers)], 0);  // not listed: off
}

TEST(GenProfile, ValuesAreRead) {
  const Profile p = Profile::load_string(
      "length: 77\nmix: {gemm: 5}\nsizes: {load: {min: 3, max: 9, dist: uniform, odd: 0.5}}\n"
      "shapes: {gemm: {m: [2, 3]}}\ndependencies: {fan_out: [2, 2]}\nallocator: {fit: next-fit, oom: spill}\n",
      "p.yaml");
  EXPECT_EQ(p.length, 77);
  EXPECT_EQ(p.mix[static_cast<unsigned>(OpKind::Gemm)], 5);
  EXPECT_EQ(p.load_sizes.bytes.min, 3);
  EXPECT_FALSE(p.load_sizes.log_uniform);
  EXPECT_EQ(p.gemm_m.max, 3);
  EXPECT_EQ(p.fan_out.min, 2);
  EXPECT_EQ(p.fit, allocator::Policy::NextFit);
  EXPECT_EQ(p.oom, OomPolicy::Spill);
  EXPECT_NE(p.hash, Profile::load_string("length: 78\n", "p.yaml").hash);
}

TEST(GenProfile, UnknownKeysNameTheKeyAndLine) {
  std::string e = error_of("length: 10\nlenght: 20\n");
  EXPECT_NE(e.find("p.yaml:2"), std::string::npos) << e;
  EXPECT_NE(e.find("'lenght'"), std::string::npos) << e;
  e = error_of("mix: {load: 1, gemmm: 2}\n");
  EXPECT_NE(e.find("'gemmm'"), std::string::npos) << e;
  e = error_of("sizes:\n  load: {min: 1, max: 2, bins: 3}\n");
  EXPECT_NE(e.find("'bins'"), std::string::npos) << e;
  EXPECT_NE(e.find("p.yaml:2"), std::string::npos) << e;
  e = error_of("directed: {sequences: {zigzag: 1}}\n");
  EXPECT_NE(e.find("'zigzag'"), std::string::npos) << e;
}

TEST(GenProfile, OutOfRangeValuesNameTheKey) {
  struct Case {
    const char* yaml;
    const char* key;
  };
  const Case cases[] = {
      {"length: 0\n", "'length'"},
      {"token_density: 1.5\n", "'token_density'"},
      {"shapes: {gemm: {m: [1, 5000]}}\n", "'shapes.gemm.m'"},
      {"shapes: {pool: {window: [3, 2]}}\n", "'shapes.pool.window'"},
      {"dependencies: {fan_out: [1, 65]}\n", "'dependencies.fan_out'"},
      {"sizes: {vector: {unit: -0.1}}\n", "'sizes.vector.unit'"},
      {"sizes: {load: {min: 10, max: 5}}\n", "'sizes.load'"},
      {"sizes: {load: {dist: normal}}\n", "'sizes.load.dist'"},
      {"allocator: {oom: panic}\n", "'allocator.oom'"},
      {"allocator: {fit: worst-fit}\n", "'allocator.fit'"},
      {"mix: {load: 0, store: 0, gemm: 0, im2col: 0, eltwise: 0, pool: 0, move: 0, lut: 0}\n", "'mix'"},
      {"lifetime: 5\n", "'lifetime'"},
  };
  for (const Case& c : cases) {
    const std::string e = error_of(c.yaml);
    EXPECT_NE(e.find(c.key), std::string::npos) << c.yaml << " -> " << e;
    EXPECT_NE(e.find("p.yaml:"), std::string::npos) << c.yaml << " -> " << e;
  }
}

}  // namespace
}  // namespace npuforge::gen
