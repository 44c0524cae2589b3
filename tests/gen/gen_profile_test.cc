// Profiles: the shipped ones load; unknown keys and out-of-range values are errors that
// name the key and the file:line.
#include <gtest/gtest.h>

#include "gen/profile.h"
#include "isa/isa.h"
#include "util/error.h"

namespace npuforge::gen {
namespace {

std::string error_of(std::string_view yaml, const isa::Isa& isa = isa::builtin_isa()) {
  try {
    Profile::load_string(yaml, "p.yaml", isa);
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
      {"shapes: {gemm: {m: [1, 70000]}}\n", "'shapes.gemm.m'"},
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

// A shape's bounds are what its fields hold, from the ISA, not restated: the built-in ISA's
// 16-bit gemm m, 8-bit pool windows and 4-bit im2col strides; an ISA with a narrower field
// narrows the bound, and one without the instruction is an error naming the key.
TEST(GenProfile, ShapeBoundsComeFromTheIsaFields) {
  const Profile wide = Profile::load_string(
      "shapes: {gemm: {m: [1, 65535]}, pool: {window: [1, 255]}, im2col: {stride: [1, 15]}}\n", "p.yaml");
  EXPECT_EQ(wide.gemm_m.max, 65535);
  EXPECT_EQ(wide.pool_window.max, 255);
  EXPECT_EQ(wide.im2col_stride.max, 15);
  EXPECT_NE(error_of("shapes: {pool: {window: [1, 256]}}\n").find("'shapes.pool.window' = 256 is out of range [1, 255]"),
            std::string::npos);
  EXPECT_NE(error_of("shapes: {im2col: {stride: [1, 16]}}\n").find("[1, 15]"), std::string::npos);
  std::string yaml(isa::builtin_isa_yaml());
  const std::string m = "{name: m, bits: [151, 136], kind: shape, min: 1}";
  ASSERT_NE(yaml.find(m), std::string::npos);
  yaml.replace(yaml.find(m), m.size(), "{name: m, bits: [143, 136], kind: shape, min: 1}");  // 8 bits
  const isa::Isa narrow = isa::Isa::load_string(yaml, "narrow.yaml");
  const std::string e = error_of("shapes: {gemm: {m: [1, 300]}}\n", narrow);
  EXPECT_NE(e.find("'shapes.gemm.m' = 300 is out of range [1, 255]"), std::string::npos) << e;
  yaml = std::string(isa::builtin_isa_yaml());
  yaml.replace(yaml.find("name: pool\n"), 10, "name: poolx\n");
  const isa::Isa no_pool = isa::Isa::load_string(yaml, "no_pool.yaml");
  const std::string no_pool_error = error_of("shapes: {pool: {window: [1, 3]}}\n", no_pool);
  EXPECT_NE(no_pool_error.find("p.yaml:1: 'shapes.pool.window': ISA npuforge-ref: unknown instruction 'pool'"),
            std::string::npos)
      << no_pool_error;
}

}  // namespace
}  // namespace npuforge::gen
