// The `extremes` directed sequence: its programs really hold zero-length operands
// at extreme addresses and maximum-length operands, pass every static check, and a profile
// that does not list it never draws it.
#include <gtest/gtest.h>

#include <algorithm>

#include "gen/generator.h"
#include "gen/program_check.h"
#include "isa/instruction.h"
#include "planner/plan_check.h"

namespace npuforge::gen {
namespace {

Profile profile(const std::string& name) {
  return Profile::load_file(std::string(NPUFORGE_SOURCE_DIR) + "/configs/gen/" + name + ".yaml");
}

GeneratedProgram gen(const Profile& p, uint64_t seed, int64_t length, const isa::NpuConfig& npu = {}) {
  GenOptions o;
  o.seed = seed;
  o.length = length;
  return generate(isa::builtin_isa(), npu, p, o);
}

// What the corners of a program reach.
struct Corners {
  uint64_t zero_at_field_max = 0;   // zero-length SRAM operands at 0xFFFFFF
  uint64_t zero_past_sram = 0;      // zero-length SRAM operands at or past the SRAM's end
  uint64_t max_row_bytes = 0, max_rows = 0, max_gemm_dim = 0;
  uint64_t largest_sram_operand = 0;

  void add(const isa::Instruction& in, uint64_t sram) {
    for (const isa::Extent& e : isa::extents(in)) {
      if (e.bytes == 0 && e.space == isa::Space::Sram) {
        zero_at_field_max += e.addr == 0xffffff;
        zero_past_sram += e.addr >= sram;
      }
      if (e.space == isa::Space::Sram) largest_sram_operand = std::max(largest_sram_operand, e.bytes);
    }
    for (unsigned s = 0; s < in.spec->fields.size(); ++s) {
      const std::string& f = in.spec->fields[s].name;
      const bool dma = in.spec->mnemonic == "load" || in.spec->mnemonic == "store";
      max_row_bytes += dma && f == "row_bytes" && in.raw[s] == 65535;
      max_rows += dma && f == "rows" && in.raw[s] == 65535;
      max_gemm_dim += in.spec->mnemonic == "gemm" && (f == "m" || f == "n" || f == "k") && in.raw[s] == 65535;
    }
  }
};

TEST(Extremes, ProgramsReachEveryCornerAndPassTheStaticChecks) {
  const Profile p = profile("extremes");
  Corners c;
  uint64_t directed = 0;
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    const GeneratedProgram g = gen(p, seed, 400);
    ASSERT_EQ(g.allocator_check, "") << "seed " << seed;
    const bundle::MemMap map = g.memmap();
    const auto plan = planner::check_memmap(map);
    ASSERT_TRUE(plan.ok()) << "seed " << seed << "\n" << plan.report();
    const auto prog = check_program(g.bundle.instrs, map, g.bundle.config.ddr_bytes.value);
    ASSERT_TRUE(prog.ok()) << "seed " << seed << "\n" << prog.report();
    for (const isa::Instruction& in : g.bundle.instrs) {
      ASSERT_EQ(isa::validate(in), "") << "seed " << seed;
      c.add(in, g.bundle.config.sram_bytes.value);
    }
    directed += g.summary.directed;
  }
  EXPECT_GT(directed, 40u);
  EXPECT_GT(c.zero_at_field_max, 20u);
  EXPECT_GT(c.zero_past_sram, c.zero_at_field_max);  // one past the end counts too
  EXPECT_GT(c.max_row_bytes, 10u);
  EXPECT_GT(c.max_rows, 10u);
  EXPECT_GT(c.max_gemm_dim, 10u);
  EXPECT_GE(c.largest_sram_operand, isa::NpuConfig{}.sram_bytes.value / 3 - 64);
}

// On a small SRAM the maximum lengths shrink to what fits, and the checks still pass.
TEST(Extremes, SmallSramKeepsEveryOperandInside) {
  const Profile p = profile("extremes");
  const isa::NpuConfig small = isa::NpuConfig::load_string("sram_bytes: 16384\nddr_bytes: 1048576\n", "small.yaml");
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    const GeneratedProgram g = gen(p, seed, 300, small);
    const auto prog = check_program(g.bundle.instrs, g.memmap(), g.bundle.config.ddr_bytes.value);
    ASSERT_TRUE(prog.ok()) << "seed " << seed << "\n" << prog.report();
  }
}

// Profiles that do not list `extremes` (all the others) never draw it: no zero-length
// operand ever sits at the field's maximum.
TEST(Extremes, OtherProfilesNeverDrawIt) {
  for (const char* name : {"default", "near-full", "stress-fragment", "tiny-buffers"}) {
    const Profile p = profile(name);
    EXPECT_EQ(p.directed[static_cast<unsigned>(Directed::Extremes)], 0) << name;
    Corners c;
    for (uint64_t seed = 1; seed <= 10; ++seed)
      for (const isa::Instruction& in : gen(p, seed, 400).bundle.instrs) c.add(in, isa::NpuConfig{}.sram_bytes.value);
    EXPECT_EQ(c.zero_at_field_max, 0u) << name;
  }
}

TEST(Extremes, ProfileKeyAndDefault) {
  EXPECT_EQ(Profile{}.directed[static_cast<unsigned>(Directed::Extremes)], 0);  // off unless listed
  EXPECT_EQ(directed_name(Directed::Extremes), "extremes");
  const Profile p = Profile::load_string("directed: {rate: 0.1, sequences: {extremes: 2}}\n", "x.yaml");
  EXPECT_EQ(p.directed[static_cast<unsigned>(Directed::Extremes)], 2);
  EXPECT_EQ(p.directed[static_cast<unsigned>(Directed::Checkerboard)], 0);
}

}  // namespace
}  // namespace npuforge::gen
