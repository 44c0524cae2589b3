// DDR ownership: a STORE into bytes of another live DDR tensor and a LOAD of bytes last
// written for another tensor are findings naming both tensors, the instruction and the cycle;
// the static check of the same memory map (planner::check_memmap_ddr) says the same; a legal
// map is clean both ways.
#include <gtest/gtest.h>

#include "isa/assembler.h"
#include "planner/ddr_check.h"
#include "sim/backend.h"
#include "sim/checkers.h"
#include "sim/golden.h"

namespace npuforge::sim {
namespace {

const Semantics& sem() {
  static const Semantics s(isa::builtin_isa());
  return s;
}

bundle::MemDdrBuffer ddr_buf(std::string name, uint64_t offset, int64_t first, int64_t last,
                             std::vector<int64_t> writers, std::vector<int64_t> readers) {
  bundle::MemDdrBuffer b;
  b.name = std::move(name);
  b.region = "arena";
  b.offset = DdrAddr{offset};
  b.size = Bytes{64};
  b.first = first;
  b.last = last;
  b.writers = std::move(writers);
  b.readers = std::move(readers);
  return b;
}

bundle::MemBuffer sram_buf(std::string symbol, uint32_t offset, int64_t first, int64_t last) {
  bundle::MemBuffer b;
  b.symbol = std::move(symbol);
  b.offset = SramAddr{offset};
  b.size = Bytes{64};
  b.first = first;
  b.last = last;
  b.producer = first;
  return b;
}

// Tensor "a" (DDR 0x0) is loaded (#0), the tile stored as tensor "b" (#1, DDR b_addr), and
// "a" loaded again (#2): with b at a's bytes while a is live, #1 clobbers a and #2 reads b's.
bundle::Program program(uint64_t b_addr) {
  bundle::Program p;
  p.name = "ddr_owner";
  p.isa = &isa::builtin_isa();
  const std::string text =
      ".equ %t, 0x0\n.equ %u, 0x40\n"
      "load %t, ddr:0x0, rows=1, row_bytes=64, stride=64, signal=store\n"
      "store ddr:" + std::to_string(b_addr) + ", %t, rows=1, row_bytes=64, stride=64, wait=load, signal=load\n"
      "load %u, ddr:0x0, rows=1, row_bytes=64, stride=64, wait=store\n"
      "halt\n";
  p.instrs = isa::assemble(*p.isa, text, "ddr_owner.s").instrs;
  bundle::MemMap map;
  map.sram_bytes = p.config.sram_bytes;
  map.alignment = p.config.alignment;
  map.instructions = static_cast<int64_t>(p.instrs.size());
  map.buffers = {sram_buf("t", 0x0, 0, 1), sram_buf("u", 0x40, 2, 3)};
  map.ddr_buffers = {ddr_buf("a", 0x0, 0, 2, {}, {0, 2}), ddr_buf("b", b_addr, 1, 3, {1}, {})};
  p.memmap = std::move(map);
  p.ddr_init.assign(0x200, 7);
  return p;
}

std::string all(const Checkers& c) { return c.summary(); }

const Finding* find(const Checkers& c, FindingKind k) {
  for (const Finding& f : c.findings())
    if (f.kind == k) return &f;
  return nullptr;
}

TEST(DdrOwnership, LegalPlanIsClean) {
  const bundle::Program p = program(0x80);
  Checkers checks(p, sem());
  SequentialBackend(sem()).run(p, checks);
  EXPECT_TRUE(checks.clean()) << all(checks);
  EXPECT_TRUE(planner::check_memmap_ddr(*p.memmap).ok());
}

TEST(DdrOwnership, OverlappingTensorsAreCaughtNamingBoth) {
  const bundle::Program p = program(0x0);
  Checkers checks(p, sem());
  SequentialBackend(sem()).run(p, checks);
  ASSERT_EQ(checks.count(FindingKind::DdrClobber), 1u) << all(checks);
  ASSERT_EQ(checks.count(FindingKind::DdrStaleRead), 1u) << all(checks);
  const Finding* clobber = find(checks, FindingKind::DdrClobber);
  EXPECT_EQ(clobber->instr, 1);
  EXPECT_EQ(clobber->symbol, "b");
  EXPECT_EQ(clobber->other_symbol, "a");
  EXPECT_EQ(clobber->space, isa::Space::Ddr);
  EXPECT_EQ(clobber->addr, 0u);
  EXPECT_EQ(clobber->bytes, 64u);
  EXPECT_NE(clobber->detail.find("at cycle "), std::string::npos) << clobber->detail;
  const Finding* stale = find(checks, FindingKind::DdrStaleRead);
  EXPECT_EQ(stale->instr, 2);
  EXPECT_EQ(stale->symbol, "a");
  EXPECT_EQ(stale->other_symbol, "b");
  EXPECT_EQ(stale->other_instr, 1);
  EXPECT_NE(format(*stale).find("[ddr/ddr-stale-read] #2 load %a ddr[0x0, 0x40)"), std::string::npos)
      << format(*stale);

  const planner::PlanCheckResult r = planner::check_memmap_ddr(*p.memmap);
  ASSERT_EQ(r.total_findings, 1u) << r.report();
  EXPECT_EQ(r.findings[0].outcome, planner::PlanOutcome::kOverlap);
  EXPECT_NE(r.findings[0].message.find("'a'"), std::string::npos) << r.findings[0].message;
  EXPECT_NE(r.findings[0].message.find("'b'"), std::string::npos) << r.findings[0].message;
}

TEST(DdrOwnership, TheCycleIsTheStartCycleOfTheInstruction) {
  const bundle::Program p = program(0x0);
  Checkers golden_checks(p, sem());
  run_golden(p, sem(), &golden_checks);  // the golden feed: cycle = instruction index
  const Finding* f = find(golden_checks, FindingKind::DdrClobber);
  ASSERT_NE(f, nullptr) << all(golden_checks);
  EXPECT_NE(f->detail.find("at cycle 1 "), std::string::npos) << f->detail;
}

TEST(DdrOwnership, OffWithoutDdrBuffersOrWithoutTheShadowChecker) {
  bundle::Program p = program(0x0);
  Checkers no_shadow(p, sem(), CheckerOptions{.shadow = false});
  SequentialBackend(sem()).run(p, no_shadow);
  EXPECT_EQ(no_shadow.count(FindingKind::DdrClobber), 0u);
  p.memmap->ddr_buffers.clear();
  Checkers none(p, sem());
  SequentialBackend(sem()).run(p, none);
  EXPECT_TRUE(none.clean()) << all(none);
  EXPECT_TRUE(planner::check_memmap_ddr(*p.memmap).ok());
}

}  // namespace
}  // namespace npuforge::sim
