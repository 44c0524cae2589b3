// check_program against small hand-written programs: the correct one passes, and each
// planted bug (missing token, unpaired token, extent outside its buffer, DDR out of range,
// missing halt, write-after-read and DDR read-after-write races) is reported as such.
#include <gtest/gtest.h>

#include "bundle/memmap.h"
#include "gen/program_check.h"
#include "isa/assembler.h"

namespace npuforge::gen {
namespace {

constexpr uint64_t kDdr = 1 << 24;

struct Case {
  std::vector<isa::Instruction> prog;
  bundle::MemMap map;
};

bundle::MemBuffer buf(const char* name, uint32_t off, uint64_t size, int64_t prod, std::vector<int64_t> cons) {
  bundle::MemBuffer b;
  b.symbol = name;
  b.offset = SramAddr{off};
  b.size = Bytes{size};
  b.first = prod;
  b.last = cons.empty() ? prod : cons.back();
  b.producer = prod;
  b.consumers = std::move(cons);
  return b;
}

// load A; eltwise A -> B; store B; then `tail` (more instructions) and halt.
Case make(const std::string& load_tokens, const std::string& elt_tokens, const std::string& store_tokens,
          const std::string& tail = "", uint64_t b_size = 64) {
  const std::string text = "load 0x0, ddr:0x0, rows=1, row_bytes=64, stride=64" + load_tokens +
                           "\neltwise 0x40, 0x0, len=64, op=relu" + elt_tokens +
                           "\nstore ddr:0x100000, 0x40, rows=1, row_bytes=64, stride=64" + store_tokens + "\n" + tail +
                           "halt\n";
  Case c;
  c.prog = isa::assemble(isa::builtin_isa(), text, "t.s").instrs;
  c.map.sram_bytes = Bytes{4096};
  c.map.alignment = Bytes{64};
  c.map.instructions = static_cast<int64_t>(c.prog.size());
  c.map.buffers = {buf("A", 0, 64, 0, {1}), buf("B", 0x40, b_size, 1, {2})};
  return c;
}

ProgramCheckResult check(const Case& c) { return check_program(c.prog, c.map, kDdr); }

bool has(const ProgramCheckResult& r, ProgramOutcome o) {
  for (const auto& f : r.findings)
    if (f.outcome == o) return true;
  return false;
}

TEST(GenProgramCheck, CorrectProgramPasses) {
  const auto r = check(make(", signal=compute", ", wait=load, signal=store", ", wait=compute"));
  EXPECT_TRUE(r.ok()) << r.report();
}

TEST(GenProgramCheck, MissingTokenIsARace) {
  const auto r = check(make("", ", signal=store", ", wait=compute"));
  EXPECT_FALSE(r.ok());
  EXPECT_TRUE(has(r, ProgramOutcome::kRace)) << r.report();
  EXPECT_NE(r.report().find("instruction 1 (eltwise)"), std::string::npos) << r.report();
}

TEST(GenProgramCheck, WaitWithoutSignal) {
  const auto r = check(make("", ", wait=load, signal=store", ", wait=compute"));
  EXPECT_TRUE(has(r, ProgramOutcome::kWaitWithoutSignal)) << r.report();
}

TEST(GenProgramCheck, SignalNeverTaken) {
  const auto r = check(make(", signal=compute", ", wait=load, signal=store", ""));
  EXPECT_TRUE(has(r, ProgramOutcome::kUnmatchedSignal)) << r.report();
  EXPECT_TRUE(has(r, ProgramOutcome::kRace)) << r.report();  // the store no longer waits
}

TEST(GenProgramCheck, ExtentOutsideItsBuffer) {
  const auto r = check(make(", signal=compute", ", wait=load, signal=store", ", wait=compute", "", 32));
  EXPECT_EQ(r.outcome(), ProgramOutcome::kUnnamedAccess) << r.report();
  EXPECT_NE(r.report().find("B [0x40, 0x60)"), std::string::npos) << r.report();
}

TEST(GenProgramCheck, UnnamedBufferAccess) {
  Case c = make(", signal=compute", ", wait=load, signal=store", ", wait=compute");
  c.map.buffers[0].consumers.clear();  // the eltwise no longer names A
  c.map.buffers[0].last = 0;
  EXPECT_TRUE(has(check(c), ProgramOutcome::kUnnamedAccess));
}

TEST(GenProgramCheck, DdrOutOfRangeAndNoHalt) {
  Case c = make(", signal=compute", ", wait=load, signal=store", ", wait=compute");
  EXPECT_TRUE(check_program(c.prog, c.map, 0x100010).findings.size() > 0);
  EXPECT_EQ(check_program(c.prog, c.map, 0x100010).outcome(), ProgramOutcome::kDdrOutOfRange);
  c.prog.pop_back();
  EXPECT_EQ(check(c).outcome(), ProgramOutcome::kNoHalt);
}

// A LOAD that reuses A's bytes after A's last reader (the eltwise, in another queue)
// must wait for it.
TEST(GenProgramCheck, WriteAfterReadRace) {
  const std::string reload = "load 0x0, ddr:0x40, rows=1, row_bytes=64, stride=64";
  Case bad = make(", signal=compute", ", wait=load, signal=store", ", wait=compute", reload + "\n");
  bad.map.buffers.push_back(buf("C", 0, 64, 3, {}));
  const auto r = check(bad);
  EXPECT_TRUE(has(r, ProgramOutcome::kRace)) << r.report();
  EXPECT_NE(r.report().find("C reuses bytes of A"), std::string::npos) << r.report();

  Case good = make(", signal=compute", ", wait=load, signal=store+load", ", wait=compute", reload + ", wait=compute\n");
  good.map.buffers.push_back(buf("C", 0, 64, 3, {}));
  EXPECT_TRUE(check(good).ok()) << check(good).report();
}

// A LOAD reading DDR the STORE wrote (a spill reload) must wait for the STORE.
TEST(GenProgramCheck, DdrReadAfterWriteRace) {
  const std::string reload = "load 0x80, ddr:0x100000, rows=1, row_bytes=64, stride=64";
  Case bad = make(", signal=compute", ", wait=load, signal=store", ", wait=compute", reload + "\n");
  bad.map.buffers.push_back(buf("D", 0x80, 64, 3, {}));
  EXPECT_TRUE(has(check(bad), ProgramOutcome::kRace)) << check(bad).report();

  Case good = make(", signal=compute", ", wait=load, signal=store", ", wait=compute, signal=load",
                   reload + ", wait=store\n");
  good.map.buffers.push_back(buf("D", 0x80, 64, 3, {}));
  EXPECT_TRUE(check(good).ok()) << check(good).report();
}

// sync is a full barrier: it orders the eltwise after the load without tokens.
TEST(GenProgramCheck, SyncOrdersEverything) {
  const std::string text =
      "load 0x0, ddr:0x0, rows=1, row_bytes=64, stride=64\nsync\neltwise 0x40, 0x0, len=64, op=relu\nhalt\n";
  Case c;
  c.prog = isa::assemble(isa::builtin_isa(), text, "t.s").instrs;
  c.map.sram_bytes = Bytes{4096};
  c.map.alignment = Bytes{64};
  c.map.buffers = {buf("A", 0, 64, 0, {2}), buf("B", 0x40, 64, 2, {})};
  EXPECT_TRUE(check(c).ok()) << check(c).report();
  c.prog.erase(c.prog.begin() + 1);
  c.map.buffers = {buf("A", 0, 64, 0, {1}), buf("B", 0x40, 64, 1, {})};
  EXPECT_TRUE(has(check(c), ProgramOutcome::kRace));
}

}  // namespace
}  // namespace npuforge::gen
