// Every checker against the planted bug it exists for, and a clean program with no findings.
#include <algorithm>

#include <gtest/gtest.h>

#include "sim/backend.h"
#include "sim/golden.h"
#include "sim_test_util.h"

namespace npuforge::sim {
namespace {

using testing::buf;
using testing::gemm_buffers;
using testing::gemm_program;
using testing::make_program;

const Semantics& sem() {
  static const Semantics s(isa::builtin_isa());
  return s;
}

std::string all(const Checkers& c) { return c.summary(); }

const Finding* find(const Checkers& c, FindingKind kind) {
  for (const auto& f : c.findings()) {
    if (f.kind == kind) return &f;
  }
  return nullptr;
}

uint64_t count_checker(const Checkers& c, std::string_view checker) {
  uint64_t n = 0;
  for (const auto& f : c.findings()) n += checker_of(f.kind) == checker;
  return n;
}

TEST(Clean, GoldenFeedAndBackendHaveNoFindings) {
  const bundle::Program p = make_program(gemm_program(), gemm_buffers());
  Checkers golden_checks(p, sem());
  const GoldenResult g = run_golden(p, sem(), &golden_checks);
  EXPECT_TRUE(golden_checks.clean()) << all(golden_checks);
  EXPECT_EQ(g.instructions, 5u);

  Checkers checks(p, sem());
  SequentialBackend backend(sem());
  const RunResult r = backend.run(p, checks);
  EXPECT_TRUE(check_ddr(p, sem(), g.ddr, r.ddr, "golden", checks));
  EXPECT_TRUE(checks.clean()) << all(checks);
  EXPECT_TRUE(r.completed);
  EXPECT_EQ(r.instructions, 5u);
  ASSERT_EQ(r.ddr.size(), 0x1040u);  // the store extended DDR
  EXPECT_TRUE(std::any_of(r.ddr.begin() + 0x1000, r.ddr.end(), [](uint8_t b) { return b != 0; }));
}

TEST(Clean, SequentialTimingIsHandComputed) {
  // Default NPU: dispatch 1/instr, DMA 50 + bytes/32, GEMM 8 + ceil(8/16)^2 * k(16).
  // load a [1, 55), load b [55, 109), gemm [109, 133), store [133, 185), halt [185, 186).
  const bundle::Program p = make_program(gemm_program(), gemm_buffers());
  Checkers checks(p, sem());
  const RunResult r = SequentialBackend(sem()).run(p, checks);
  EXPECT_EQ(r.cycles, 186u);
  EXPECT_EQ(r.busy_cycles[0], 108u);
  EXPECT_EQ(r.busy_cycles[1], 24u);
  EXPECT_EQ(r.busy_cycles[2], 52u);
}

TEST(OverlapChecker, CatchesBuffersOverlappingByOneAlignmentUnit) {
  // The broken allocator placed b one 64-byte unit inside a while a is still live.
  auto buffers = gemm_buffers();
  buffers[1].offset = SramAddr{0x40};
  const bundle::Program p = make_program(gemm_program(0x000, 0x040), buffers);
  Checkers checks(p, sem());
  run_golden(p, sem(), &checks);
  ASSERT_EQ(checks.count(FindingKind::LiveOverlap), 1u) << all(checks);
  const Finding* f = find(checks, FindingKind::LiveOverlap);
  EXPECT_EQ(f->instr, 1);
  EXPECT_EQ(f->symbol, "b");
  EXPECT_EQ(f->other_symbol, "a");
  EXPECT_EQ(f->addr, 0x40u);
  EXPECT_EQ(f->bytes, 64u);
  EXPECT_NE(format(*f).find("[overlap/live-overlap] #1 load %b sram[0x40, 0x80)"), std::string::npos)
      << format(*f);
}

TEST(OverlapChecker, CatchesBuffersAboveAndBelowTheNewOne) {
  // c placed at 0x60 when it becomes live (#2): it covers a's tail (a starts below c) and
  // b's head (b starts inside c); both pairs are reported, each with the shared bytes.
  auto buffers = gemm_buffers();
  buffers[2].offset = SramAddr{0x60};
  const bundle::Program p = make_program(gemm_program(0x000, 0x080, 0x060), buffers);
  Checkers checks(p, sem());
  run_golden(p, sem(), &checks);
  ASSERT_EQ(checks.count(FindingKind::LiveOverlap), 2u) << all(checks);
  bool over_a = false, over_b = false;
  for (const auto& f : checks.findings()) {
    if (f.kind != FindingKind::LiveOverlap) continue;
    EXPECT_EQ(f.instr, 2);
    EXPECT_EQ(f.symbol, "c");
    over_a |= f.other_symbol == "a" && f.addr == 0x60 && f.bytes == 0x20;
    over_b |= f.other_symbol == "b" && f.addr == 0x80 && f.bytes == 0x20;
  }
  EXPECT_TRUE(over_a) << all(checks);
  EXPECT_TRUE(over_b) << all(checks);
}

TEST(OverlapChecker, MoveHandOverIsAllowed) {
  // Compaction: x moved down by 0x40 onto its own old bytes by the MOVE that ends x.
  const std::string text =
      ".equ %x, 0x40\n.equ %y, 0x0\n"
      "load %x, ddr:0x0, rows=1, row_bytes=128, stride=128, signal=compute\n"
      "move %y, %x, len=128, wait=load, signal=store\n"
      "store ddr:0x200, %y, rows=1, row_bytes=128, stride=128, wait=compute\n"
      "halt\n";
  const bundle::Program p = make_program(text, {buf("x", 0x40, 128, 0, 1), buf("y", 0x0, 128, 1, 2)});
  Checkers checks(p, sem());
  const GoldenResult g = run_golden(p, sem(), &checks);
  EXPECT_TRUE(checks.clean()) << all(checks);
  EXPECT_TRUE(std::equal(g.ddr.begin() + 0x200, g.ddr.begin() + 0x280, p.ddr_init.begin()));
}

TEST(HazardChecker, CatchesARemovedDependencyToken) {
  // gemm -> store token removed: the store may read c while the gemm writes it.
  const bundle::Program p = make_program(gemm_program(0, 0x80, 0x100, "wait=load", "wait=none"), gemm_buffers());
  for (bool use_backend : {false, true}) {
    Checkers checks(p, sem());
    if (use_backend) {
      SequentialBackend(sem()).run(p, checks);
    } else {
      run_golden(p, sem(), &checks);
    }
    ASSERT_EQ(checks.count(FindingKind::Hazard), 1u) << all(checks);
    const Finding* f = find(checks, FindingKind::Hazard);
    EXPECT_EQ(std::min(f->instr, f->other_instr), 2);
    EXPECT_EQ(std::max(f->instr, f->other_instr), 3);
    EXPECT_EQ(f->symbol, "c");
    EXPECT_EQ(f->addr, 0x100u);
    EXPECT_EQ(f->bytes, 64u);
    EXPECT_EQ(checks.count(FindingKind::Deadlock) + checks.count(FindingKind::UnconsumedSignal), 0u);
    if (!use_backend) {
      EXPECT_EQ(checks.total(), 1u) << all(checks);  // program order hides the race
    }
  }
}

TEST(HazardChecker, BackendRaceAlsoBreaksTheDdrCompare) {
  const bundle::Program p = make_program(gemm_program(0, 0x80, 0x100, "wait=load", "wait=none"), gemm_buffers());
  Checkers checks(p, sem());
  const RunResult r = SequentialBackend(sem()).run(p, checks);
  // The store ran before the gemm: it read bytes c had not written yet.
  EXPECT_GE(checks.count(FindingKind::ReadUnwritten), 1u) << all(checks);
  EXPECT_FALSE(check_ddr(p, sem(), run_golden(p, sem()).ddr, r.ddr, "golden", checks));
}

TEST(HazardChecker, WaitWithoutSignalIsADeadlock) {
  const bundle::Program p = make_program(gemm_program(0, 0x80, 0x100, "wait=load, signal=store",
                                                      "wait=compute", "wait=none"),
                                         gemm_buffers());
  Checkers checks(p, sem());
  const RunResult r = SequentialBackend(sem()).run(p, checks);
  EXPECT_FALSE(r.completed);
  ASSERT_EQ(checks.count(FindingKind::Deadlock), 1u) << all(checks);
  EXPECT_EQ(find(checks, FindingKind::Deadlock)->instr, 2);
}

TEST(HazardChecker, SignalWithoutWaitIsReported) {
  const bundle::Program p = make_program(gemm_program(0, 0x80, 0x100, "signal=store"), gemm_buffers());
  Checkers checks(p, sem());
  run_golden(p, sem(), &checks);
  ASSERT_EQ(checks.count(FindingKind::UnconsumedSignal), 1u) << all(checks);
  EXPECT_EQ(find(checks, FindingKind::UnconsumedSignal)->instr, 1);
  EXPECT_EQ(checks.count(FindingKind::Hazard), 2u) << all(checks);  // gemm vs both loads
}

TEST(HazardChecker, SpillAndReloadThroughDdr) {
  // c is spilled to DDR 0x2000 and reloaded into d: without a store -> load token the reload
  // may read DDR before the spill wrote it.
  auto text = [](std::string_view store_tokens, std::string_view load_tokens) {
    return ".equ %c, 0x0\n.equ %d, 0x40\n"
           "load %c, ddr:0x0, rows=1, row_bytes=64, stride=64, signal=store\n"
           "store ddr:0x2000, %c, rows=2, row_bytes=32, stride=64, wait=load, " + std::string(store_tokens) + "\n"
           "load %d, ddr:0x2000, rows=2, row_bytes=32, stride=64, " + std::string(load_tokens) + "\n"
           "halt\n";
  };
  const std::vector<bundle::MemBuffer> bufs = {buf("c", 0x0, 64, 0, 1), buf("d", 0x40, 64, 2, 3)};
  const bundle::Program racy = make_program(text("signal=none", "wait=none"), bufs);
  Checkers checks(racy, sem());
  SequentialBackend(sem()).run(racy, checks);
  ASSERT_EQ(checks.count(FindingKind::Hazard), 1u) << all(checks);
  const Finding* f = find(checks, FindingKind::Hazard);
  EXPECT_EQ(f->space, isa::Space::Ddr);
  EXPECT_EQ(f->addr, 0x2000u);
  EXPECT_EQ(std::min(f->instr, f->other_instr), 1);
  EXPECT_EQ(std::max(f->instr, f->other_instr), 2);

  const bundle::Program ordered = make_program(text("signal=load", "wait=store"), bufs);
  Checkers ok(ordered, sem());
  SequentialBackend(sem()).run(ordered, ok);
  EXPECT_TRUE(ok.clean()) << all(ok);
  // Interleaved 2-D rows in the same DDR span do not conflict: only the rows count.
  const bundle::Program gaps = make_program(
      ".equ %c, 0x0\n.equ %d, 0x40\n"
      "load %c, ddr:0x0, rows=1, row_bytes=64, stride=64, signal=store\n"
      "store ddr:0x2000, %c, rows=2, row_bytes=32, stride=64, wait=load\n"
      "load %d, ddr:0x2020, rows=2, row_bytes=32, stride=64\n"
      "halt\n",
      bufs);
  Checkers gap_checks(gaps, sem());
  run_golden(gaps, sem(), &gap_checks);
  EXPECT_TRUE(gap_checks.clean()) << all(gap_checks);
}

TEST(TokenOrder, CycleIsStuckAndLaterSignalsOrder) {
  const auto& isa = isa::builtin_isa();
  const auto cyc = isa::assemble(isa,
                                 "load 0x0, ddr:0x0, rows=1, row_bytes=4, wait=compute, signal=compute\n"
                                 "move 0x40, 0x0, len=4, wait=load, signal=load\n",
                                 "c.s");
  const TokenOrder cycle(cyc.instrs);
  EXPECT_EQ(cycle.stuck().size(), 2u);
  EXPECT_TRUE(cycle.unmatched_waits().empty());
  // A wait on a signal later in program order is legal and orders the two.
  const auto fwd = isa::assemble(isa,
                                 "load 0x0, ddr:0x0, rows=1, row_bytes=4, wait=compute\n"
                                 "move 0x40, 0x80, len=4, signal=load\n",
                                 "f.s");
  const TokenOrder order(fwd.instrs);
  EXPECT_TRUE(order.stuck().empty());
  EXPECT_TRUE(order.happens_before(1, 0));
  EXPECT_FALSE(order.happens_before(0, 1));
  EXPECT_EQ(order.latest_before(0, 1), 1);
}

TEST(ShadowChecker, CatchesABufferFreedBeforeItsLastRead) {
  // The map frees a after instruction 1, but the gemm (instruction 2) still reads it.
  auto buffers = gemm_buffers();
  buffers[0].last = 1;
  const bundle::Program p = make_program(gemm_program(), buffers);
  Checkers checks(p, sem());
  run_golden(p, sem(), &checks);
  ASSERT_EQ(checks.count(FindingKind::AfterLastUse), 1u) << all(checks);
  const Finding* f = find(checks, FindingKind::AfterLastUse);
  EXPECT_EQ(f->instr, 2);
  EXPECT_EQ(f->symbol, "a");
  EXPECT_EQ(f->addr, 0u);
  EXPECT_EQ(f->bytes, 128u);
  EXPECT_EQ(checks.count(FindingKind::LiveOverlap), 0u);
}

TEST(ShadowChecker, CatchesReuseOfAFreedBuffersBytes) {
  // Same bug, and the allocator handed a's bytes to c: the gemm reads c's unwritten bytes.
  auto buffers = gemm_buffers();
  buffers[0].last = 1;
  buffers[2].offset = SramAddr{0};
  const bundle::Program p = make_program(gemm_program(0, 0x80, 0x0), buffers);
  Checkers checks(p, sem());
  run_golden(p, sem(), &checks);
  const Finding* f = find(checks, FindingKind::ReadUnwritten);
  ASSERT_NE(f, nullptr) << all(checks);
  EXPECT_EQ(f->instr, 2);
  EXPECT_EQ(f->other_symbol, "a");  // the bytes still hold a's data
  EXPECT_EQ(checks.count(FindingKind::LiveOverlap), 0u) << all(checks);
  EXPECT_EQ(count_checker(checks, "hazard"), 0u) << all(checks);
}

TEST(ShadowChecker, CatchesAccessesPastTheBufferEnd) {
  // m = 9: the gemm reads 144 bytes of the 128-byte a and writes 72 bytes into the 64-byte c.
  auto buffers = gemm_buffers();
  buffers.push_back(buf("d", 0x140, 64, 0, 4));
  const bundle::Program p = make_program(gemm_program(0, 0x80, 0x100, "wait=load, signal=store", "wait=compute",
                                                      "signal=compute", 9),
                                         buffers);
  Checkers checks(p, sem());
  run_golden(p, sem(), &checks);
  ASSERT_EQ(checks.count(FindingKind::OutsideBuffer), 2u) << all(checks);
  bool read_into_b = false, write_into_d = false;
  for (const auto& f : checks.findings()) {
    if (f.kind != FindingKind::OutsideBuffer) continue;
    read_into_b |= f.symbol == "a" && f.other_symbol == "b" && f.addr == 0x80 && f.bytes == 16;
    write_into_d |= f.symbol == "c" && f.other_symbol == "d" && f.addr == 0x140 && f.bytes == 8;
  }
  EXPECT_TRUE(read_into_b) << all(checks);
  EXPECT_TRUE(write_into_d) << all(checks);
}

TEST(ShadowChecker, ReadOfNeverWrittenBytes) {
  // The first load is dropped: the gemm reads a, which nothing wrote.
  std::string text = gemm_program();
  text.replace(text.find("load %a"), 0, "nop ; ");
  const bundle::Program p = make_program(text, gemm_buffers());
  Checkers checks(p, sem());
  run_golden(p, sem(), &checks);
  const Finding* f = find(checks, FindingKind::ReadUnwritten);
  ASSERT_NE(f, nullptr) << all(checks);
  EXPECT_EQ(f->symbol, "a");
  EXPECT_EQ(f->bytes, 128u);
  EXPECT_TRUE(f->other_symbol.empty());
}

TEST(ShadowChecker, ReadUnwrittenNamesTheFirstUnwrittenRun) {
  // a is written in two pieces, [0, 32) and [64, 128): the gemm's read of a finds the hole
  // [32, 64) (the shadow keeps written ranges, not bytes: the finding is still exact).
  std::string text = gemm_program();
  const std::string whole = "load %a, ddr:0x0, rows=1, row_bytes=128, stride=128";
  text.replace(text.find(whole), whole.size(),
               "load %a, ddr:0x0, rows=1, row_bytes=32, stride=32\n"
               "load 64, ddr:0x40, rows=1, row_bytes=64, stride=64");
  auto buffers = gemm_buffers();  // one more instruction before the gemm
  buffers[0].last = 3;
  buffers[1].first = 2, buffers[1].last = 3;
  buffers[2].first = 3, buffers[2].last = 4;
  const bundle::Program p = make_program(text, buffers);
  Checkers checks(p, sem());
  run_golden(p, sem(), &checks);
  ASSERT_EQ(checks.count(FindingKind::ReadUnwritten), 1u) << all(checks);
  const Finding* f = find(checks, FindingKind::ReadUnwritten);
  EXPECT_EQ(f->symbol, "a");
  EXPECT_EQ(f->addr, 32u);
  EXPECT_EQ(f->bytes, 32u);
  EXPECT_TRUE(f->other_symbol.empty());
}

TEST(ShadowChecker, CatchesAnOperandNoBufferOwns) {
  // The map lost c: the gemm writes and the store reads bytes no buffer of the map holds.
  auto buffers = gemm_buffers();
  buffers.pop_back();
  const bundle::Program p = make_program(gemm_program(), buffers);
  Checkers checks(p, sem());
  run_golden(p, sem(), &checks);
  ASSERT_EQ(checks.count(FindingKind::UnownedAccess), 2u) << all(checks);
  const Finding* f = find(checks, FindingKind::UnownedAccess);
  EXPECT_EQ(f->instr, 2);
  EXPECT_EQ(f->addr, 0x100u);
  EXPECT_EQ(f->bytes, 64u);
  EXPECT_TRUE(f->symbol.empty());
  EXPECT_NE(f->detail.find("write of operand"), std::string::npos) << f->detail;
  EXPECT_EQ(checks.count(FindingKind::AfterLastUse) + checks.count(FindingKind::BeforeFirstUse), 0u);
}

TEST(ShadowChecker, CatchesAnAccessBeforeTheBuffersFirstUse) {
  // The map makes c live only from the store (#3), but the gemm (#2) already writes it.
  auto buffers = gemm_buffers();
  buffers[2].first = buffers[2].producer = 3;
  const bundle::Program p = make_program(gemm_program(), buffers);
  Checkers checks(p, sem());
  run_golden(p, sem(), &checks);
  ASSERT_EQ(checks.count(FindingKind::BeforeFirstUse), 1u) << all(checks);
  const Finding* f = find(checks, FindingKind::BeforeFirstUse);
  EXPECT_EQ(f->instr, 2);
  EXPECT_EQ(f->symbol, "c");
  EXPECT_EQ(f->addr, 0x100u);
  EXPECT_NE(f->detail.find("%c becomes live at #3"), std::string::npos) << f->detail;
  EXPECT_EQ(checks.count(FindingKind::UnownedAccess), 0u) << all(checks);
}

// A DUT with a wrong requantization shift (one too many) in its compute engine.
class WrongShiftBackend : public Backend {
 public:
  std::string_view name() const override { return "wrong-shift"; }
  RunResult run(const bundle::Program& program, Checkers& checkers) override {
    bundle::Program broken = program;
    for (auto& in : broken.instrs) {
      if (sem().op(in) == Op::Gemm) in.set(sem().gemm_slots().shift, in.get(sem().gemm_slots().shift) + 1);
    }
    return SequentialBackend(sem()).run(broken, checkers);
  }
};

TEST(GoldenCompare, CatchesAWrongRequantizationShift) {
  const bundle::Program p = make_program(gemm_program(), gemm_buffers());
  Checkers checks(p, sem());
  WrongShiftBackend dut;
  const RunResult r = dut.run(p, checks);
  EXPECT_TRUE(checks.clean()) << all(checks);  // the memory checkers cannot see arithmetic
  EXPECT_FALSE(check_ddr(p, sem(), run_golden(p, sem()).ddr, r.ddr, "the golden model", checks));
  ASSERT_EQ(checks.count(FindingKind::DdrMismatch), 1u);
  const Finding* f = find(checks, FindingKind::DdrMismatch);
  EXPECT_EQ(f->instr, 3);  // the store that wrote the first differing byte
  EXPECT_EQ(f->space, isa::Space::Ddr);
  EXPECT_GE(f->addr, 0x1000u);
  EXPECT_LT(f->addr, 0x1040u);
}

TEST(Executor, OrderViolationAndOutOfRange) {
  const bundle::Program p = make_program(gemm_program(), gemm_buffers());
  Checkers checks(p, sem());
  checks.on_start(0, 0);
  checks.on_finish(0, 10);
  checks.on_start(1, 10);
  checks.on_start(2, 11);  // before load b (its signaller) finished
  ASSERT_EQ(checks.count(FindingKind::OrderViolation), 1u) << all(checks);
  EXPECT_EQ(find(checks, FindingKind::OrderViolation)->other_instr, 1);

  const bundle::Program far = make_program(
      "load 0x7fff0, ddr:0x0, rows=1, row_bytes=64, stride=64\nhalt\n", {buf("z", 0x7fff0, 16, 0, 1)});
  Checkers c2(far, sem());
  const RunResult r = SequentialBackend(sem()).run(far, c2);
  ASSERT_EQ(c2.count(FindingKind::OutOfRange), 1u) << all(c2);
  EXPECT_EQ(r.instructions, 2u);
}

TEST(Options, MaxErrorsKeepsCountingAndShadowCanBeOff) {
  auto buffers = gemm_buffers();
  buffers[0].last = 1;
  buffers[1].offset = SramAddr{0x40};
  const bundle::Program p = make_program(gemm_program(0, 0x40, 0x100, "wait=load", "wait=none"), buffers);
  Checkers limited(p, sem(), CheckerOptions{.max_errors = 1});
  run_golden(p, sem(), &limited);
  EXPECT_EQ(limited.findings().size(), 1u);
  EXPECT_GE(limited.total(), 3u);
  EXPECT_NE(limited.summary().find("more"), std::string::npos);

  Checkers no_shadow(p, sem(), CheckerOptions{.shadow = false});
  run_golden(p, sem(), &no_shadow);
  EXPECT_EQ(count_checker(no_shadow, "shadow"), 0u);
  EXPECT_GE(no_shadow.count(FindingKind::LiveOverlap), 1u);
}

}  // namespace
}  // namespace npuforge::sim
