// check_program's kInvalidInstruction: an instruction the assembler would refuse (a field out
// of range, a broken constraint, a token to its own queue) that reached the program anyway,
// say through a fix-up or a hand-edited binary, is reported with its index and the reason.
// The other outcomes have their planted bugs in gen_program_check_test.cc.
#include <gtest/gtest.h>

#include <functional>

#include "bundle/memmap.h"
#include "gen/program_check.h"
#include "isa/assembler.h"

namespace npuforge::gen {
namespace {

// load A; relu A -> B; store B; halt, with correct tokens and memory map.
struct Good {
  std::vector<isa::Instruction> prog = isa::assemble(isa::builtin_isa(),
                                                     "load 0x0, ddr:0x0, rows=1, row_bytes=64, stride=64, signal=compute\n"
                                                     "eltwise 0x40, 0x0, len=64, op=relu, wait=load, signal=store\n"
                                                     "store ddr:0x1000, 0x40, rows=1, row_bytes=64, stride=64, wait=compute\n"
                                                     "halt\n",
                                                     "t.s")
                                           .instrs;
  bundle::MemMap map;
  Good() {
    map.sram_bytes = Bytes{4096};
    map.alignment = Bytes{64};
    map.instructions = int64_t(prog.size());
    for (auto [name, off, first, last] : {std::tuple{"A", 0u, 0, 1}, std::tuple{"B", 0x40u, 1, 2}}) {
      bundle::MemBuffer b;
      b.symbol = name;
      b.offset = SramAddr{off};
      b.size = Bytes{64};
      b.first = b.producer = first;
      b.last = last;
      b.consumers = {last};
      map.buffers.push_back(b);
    }
  }
  ProgramCheckResult check() const { return check_program(prog, map, 1 << 20); }
};

void set(isa::Instruction& in, const char* field, uint32_t raw) { in.raw[in.spec->require_field(field)] = raw; }

TEST(GenInvalidInstruction, UnbrokenProgramPasses) {
  const auto r = Good().check();
  EXPECT_TRUE(r.ok()) << r.report();
}

TEST(GenInvalidInstruction, ReportedWithIndexAndReason) {
  struct Plant {
    size_t instr;
    std::function<void(isa::Instruction&)> breaks;
    const char* reason;
  };
  const std::vector<Plant> plants = {
      {0, [](auto& in) { set(in, "rows", 0); }, "field 'rows' = 0 is out of range"},
      {2, [](auto& in) { set(in, "rows", 2), set(in, "stride", 8); }, "constraint 'rows == 1 || stride >= row_bytes'"},
      {1, [](auto& in) { set(in, "signal", 0b110); }, "names its own queue 'compute'"},
      {3, [](auto& in) { set(in, "wait", 0b001); }, "control instructions take no tokens"},
      {1, [](auto& in) { set(in, "op", 0xff); }, "field 'op'"},
  };
  for (const Plant& p : plants) {
    Good g;
    p.breaks(g.prog[p.instr]);
    const ProgramCheckResult r = g.check();
    ASSERT_FALSE(r.ok()) << p.reason;
    const ProgramFinding* f = nullptr;
    for (const auto& x : r.findings)
      if (x.outcome == ProgramOutcome::kInvalidInstruction) f = f ? f : &x;
    ASSERT_NE(f, nullptr) << p.reason << "\n" << r.report();
    EXPECT_EQ(f->instr, int64_t(p.instr)) << r.report();
    EXPECT_NE(f->message.find(p.reason), std::string::npos) << f->message;
    EXPECT_NE(f->message.find("instruction " + std::to_string(p.instr)), std::string::npos) << f->message;
    EXPECT_STREQ(to_string(f->outcome), "invalid-instruction");
  }
}

}  // namespace
}  // namespace npuforge::gen
