// The generator against the static checks, the assembler and itself: for 1,000 seeds per
// shipped profile the memory map passes check_memmap and the program passes
// check_program; the .s re-assembles to the same binary; a planted overlapping allocator
// is caught; the same seed gives the same bytes and different seeds differ.
#include <gtest/gtest.h>

#include "planner/plan_check.h"
#include "gen/generator.h"
#include "gen/output.h"
#include "gen/placer.h"
#include "gen/program_check.h"
#include "isa/assembler.h"
#include "util/error.h"

namespace npuforge::gen {
namespace {

const isa::Isa& isa() { return isa::builtin_isa(); }

Profile profile(const std::string& name) {
  return Profile::load_file(std::string(NPUFORGE_SOURCE_DIR) + "/configs/gen/" + name + ".yaml");
}

GeneratedProgram gen(const Profile& p, uint64_t seed, int64_t length, allocator::Placer* placer = nullptr) {
  GenOptions o;
  o.seed = seed;
  o.length = length;
  o.placer = placer;
  return generate(isa(), isa::NpuConfig{}, p, o);
}

class ShippedProfile : public ::testing::TestWithParam<const char*> {};

// The generator's property test: 1,000 seeds, every static check, re-assembly.
TEST_P(ShippedProfile, ThousandSeedsPassEveryCheck) {
  const Profile p = profile(GetParam());
  GenSummary total;
  for (uint64_t seed = 1; seed <= 1000; ++seed) {
    const GeneratedProgram g = gen(p, seed, 200);
    ASSERT_EQ(g.bundle.instrs.size(), 200u) << "seed " << seed;
    ASSERT_EQ(g.bundle.instrs.back().spec->mnemonic, "halt");
    const bundle::MemMap map = g.memmap();
    const auto plan = planner::check_memmap(map);
    ASSERT_TRUE(plan.ok()) << GetParam() << " seed " << seed << "\n" << plan.report();
    const auto prog = check_program(g.bundle.instrs, map, g.bundle.config.ddr_bytes.value);
    ASSERT_TRUE(prog.ok()) << GetParam() << " seed " << seed << "\n" << prog.report();
    if (seed % 10 == 0) {  // the assembler is the slow part: every tenth seed
      const isa::AsmProgram back = isa::assemble(isa(), to_assembly(g), "gen.s");
      ASSERT_TRUE(back.symbol_refs.empty());
      ASSERT_EQ(isa::encode_program(isa(), back.instrs), isa::encode_program(isa(), g.bundle.instrs))
          << "seed " << seed;
    }
    total.oom += g.summary.oom;
    total.compact_moves += g.summary.compact_moves;
    total.spills += g.summary.spills;
    total.reloads += g.summary.reloads;
    total.retired += g.summary.retired;
    total.tokens += g.summary.tokens;
    total.directed += g.summary.directed;
  }
  // The profile's corners are reached, not just legal: memory does run out and the
  // profile's own policy is what answers it.
  EXPECT_GT(total.tokens, 0u);
  EXPECT_GT(total.directed, 0u);
  const Profile& pp = p;
  if (pp.oom == OomPolicy::Compact) {
    EXPECT_GT(total.compact_moves, 0u);
  }
  if (pp.oom == OomPolicy::Spill) {
    EXPECT_GT(total.spills, 0u);
    EXPECT_GT(total.reloads, 0u);
  }
  std::printf("%s: oom=%llu retired=%llu moves=%llu spills=%llu reloads=%llu tokens=%llu directed=%llu\n", GetParam(),
              (unsigned long long)total.oom, (unsigned long long)total.retired,
              (unsigned long long)total.compact_moves, (unsigned long long)total.spills,
              (unsigned long long)total.reloads, (unsigned long long)total.tokens,
              (unsigned long long)total.directed);
}

INSTANTIATE_TEST_SUITE_P(Gen, ShippedProfile,
                         ::testing::Values("default", "stress-fragment", "near-full", "tiny-buffers", "extremes"),
                         [](const auto& info) {
                           std::string n = info.param;
                           for (char& c : n)
                             if (c == '-') c = '_';
                           return n;
                         });

TEST(GenGenerator, LongProgramPassesEveryCheck) {
  for (const char* name : {"default", "stress-fragment", "near-full", "tiny-buffers"}) {
    const GeneratedProgram g = gen(profile(name), 7, 20000);
    const bundle::MemMap map = g.memmap();
    const auto plan = planner::check_memmap(map);
    EXPECT_TRUE(plan.ok()) << name << "\n" << plan.report();
    const auto prog = check_program(g.bundle.instrs, map, g.bundle.config.ddr_bytes.value);
    EXPECT_TRUE(prog.ok()) << name << "\n" << prog.report();
  }
}

// A program that would need more memory than the limit is refused before any work, with the
// figures and the way out in the message; at exactly the estimate it runs.
TEST(GenGenerator, MemoryLimitRefusesUpFront) {
  const Profile p = profile("default");
  const isa::NpuConfig npu;
  GenOptions o;
  o.length = 50'000'000;
  o.max_memory = Bytes{1ull << 30};
  try {
    generate(isa(), npu, p, o);
    FAIL() << "expected the memory limit to refuse 50 M instructions in 1 GiB";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("50000000 instructions need about"), std::string::npos) << what;
    EXPECT_NE(what.find("limit of 1024 MiB"), std::string::npos) << what;
    EXPECT_NE(what.find("--max-memory"), std::string::npos) << what;
  }
  o.length = 3000;
  o.max_memory = estimated_peak_memory(o.length, npu);
  EXPECT_EQ(generate(isa(), npu, p, o).bundle.instrs.size(), 3000u);
  o.max_memory = Bytes{o.max_memory.value - 1};
  EXPECT_THROW(generate(isa(), npu, p, o), Error);
}

TEST(GenGenerator, SameSeedSameBytesDifferentSeedsDiffer) {
  const Profile p = profile("default");
  const GeneratedProgram a = gen(p, 42, 2000), b = gen(p, 42, 2000), c = gen(p, 43, 2000);
  EXPECT_EQ(isa::encode_program(isa(), a.bundle.instrs), isa::encode_program(isa(), b.bundle.instrs));
  EXPECT_EQ(to_assembly(a), to_assembly(b));
  EXPECT_EQ(a.memmap().to_yaml(), b.memmap().to_yaml());
  EXPECT_EQ(a.bundle.ddr_init, b.bundle.ddr_init);
  EXPECT_EQ(summary_line(a), summary_line(b));
  EXPECT_NE(isa::encode_program(isa(), a.bundle.instrs), isa::encode_program(isa(), c.bundle.instrs));
  EXPECT_NE(a.bundle.ddr_init, c.bundle.ddr_init);
}

TEST(GenGenerator, HeadersCarrySeedAndProfileHash) {
  const Profile p = profile("default");
  const GeneratedProgram g = gen(p, 1234, 50);
  char hash[32];
  std::snprintf(hash, sizeof hash, "%016llx", static_cast<unsigned long long>(p.hash));
  const std::string s = to_assembly(g);
  EXPECT_EQ(s.rfind("; npuforge gen; seed: 1234;", 0), 0u) << s.substr(0, 200);
  EXPECT_NE(s.find(hash), std::string::npos);
  EXPECT_NE(g.memmap().to_yaml().find(hash), std::string::npos);
  EXPECT_NE(isa::to_readmemh(isa(), g.bundle.instrs, g.header).find(hash), std::string::npos);
}

// Sizes follow the fields: every GEMM's operands are exactly what m, n, k say, and the
// buffers they name hold at least that (check_program proves "inside"; this shows equality
// for the destination, whose producer defines the symbol).
TEST(GenGenerator, ProducerSymbolsMatchTheirFields) {
  const GeneratedProgram g = gen(profile("default"), 5, 3000);
  size_t checked = 0;
  for (const SymRef& r : g.refs) {
    if (!r.write) continue;
    const isa::Instruction& in = g.bundle.instrs[r.instr];
    for (const isa::Extent& e : isa::extents(in)) {
      if (e.field != r.field) continue;
      EXPECT_EQ(e.bytes, g.symbols[r.symbol.value].written) << "instruction " << r.instr;
      EXPECT_EQ(g.symbols[r.symbol.value].padded % 64, 0u);
      EXPECT_GE(g.symbols[r.symbol.value].padded, e.bytes);
      ++checked;
    }
  }
  EXPECT_GT(checked, 1000u);
}

// The planted bug: an allocator that returns an address one alignment unit inside a live
// buffer. The static plan check must fail on the memory map the generator writes.
TEST(GenGenerator, OverlappingAllocatorIsCaught) {
  const Profile p = profile("default");
  size_t caught = 0, planted_runs = 0;
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    allocator::Allocator real(SramAddr{0}, isa::NpuConfig{}.sram_bytes, isa::NpuConfig{}.alignment);
    OverlappingPlacer bad(real, 5);
    const GeneratedProgram g = gen(p, seed, 300, &bad);
    if (bad.planted() == 0) continue;
    ++planted_runs;
    const auto plan = planner::check_memmap(g.memmap());
    if (!plan.ok() && plan.outcome() == planner::PlanOutcome::kOverlap) ++caught;
  }
  EXPECT_GT(planted_runs, 10u);
  EXPECT_EQ(caught, planted_runs);
}

// Control: the same wrapper planting nothing gives clean maps, so the failure above is
// the planted overlap and not the wrapper.
TEST(GenGenerator, WrapperWithoutPlantingIsClean) {
  allocator::Allocator real(SramAddr{0}, isa::NpuConfig{}.sram_bytes, isa::NpuConfig{}.alignment);
  OverlappingPlacer never(real, 1u << 30);
  const GeneratedProgram g = gen(profile("default"), 3, 300, &never);
  EXPECT_TRUE(planner::check_memmap(g.memmap()).ok());
}

// The fix-up checks every operand's extent against its buffer: a placer that reports
// nodes one unit shorter than it reserved (an allocator bug) stops generation with an
// error naming the instruction, field and symbol.
class ShortNodePlacer final : public allocator::Placer {
 public:
  explicit ShortNodePlacer(allocator::Allocator& a) : a_(a) {}
  allocator::AllocResult alloc(Bytes size) override {
    allocator::AllocResult r = a_.alloc(size);
    if (r.ok() && r.padded.value > a_.alignment().value) r.padded = r.padded - a_.alignment();
    return r;
  }
  allocator::AllocResult alloc_at(SramAddr addr, Bytes size) override { return a_.alloc_at(addr, size); }
  void free(allocator::NodeId node) override { a_.free(node); }
  allocator::Allocator& allocator() override { return a_; }

 private:
  allocator::Allocator& a_;
};

TEST(GenGenerator, FixupCatchesAnOperandOutsideItsBuffer) {
  allocator::Allocator real(SramAddr{0}, isa::NpuConfig{}.sram_bytes, isa::NpuConfig{}.alignment);
  ShortNodePlacer shorter(real);
  try {
    gen(profile("default"), 1, 300, &shorter);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("leave the symbol's node"), std::string::npos) << m;
    EXPECT_NE(m.find("field '"), std::string::npos) << m;
    EXPECT_NE(m.find("symbol '%"), std::string::npos) << m;
  }
}

TEST(GenGenerator, SmallNpuAndTinyLengths) {
  isa::NpuConfig npu;
  npu.sram_bytes = Bytes{16 * 1024};
  npu.alignment = Bytes{16};
  npu.ddr_bytes = Bytes{1 << 20};
  for (const char* name : {"default", "near-full", "stress-fragment"}) {
    for (uint64_t seed = 1; seed <= 50; ++seed) {
      GenOptions o;
      o.seed = seed;
      o.length = 300;
      const GeneratedProgram g = generate(isa(), npu, profile(name), o);
      const bundle::MemMap map = g.memmap();
      ASSERT_TRUE(planner::check_memmap(map).ok()) << name << " " << seed;
      const auto prog = check_program(g.bundle.instrs, map, npu.ddr_bytes.value);
      ASSERT_TRUE(prog.ok()) << name << " " << seed << "\n" << prog.report();
    }
  }
  GenOptions one;
  one.length = 1;
  const GeneratedProgram g = generate(isa(), npu, profile("default"), one);
  ASSERT_EQ(g.bundle.instrs.size(), 1u);
  EXPECT_EQ(g.bundle.instrs[0].spec->mnemonic, "halt");
}

}  // namespace
}  // namespace npuforge::gen
