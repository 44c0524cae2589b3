// The ISA table itself: extents follow the YAML formulas, and the docs are up to date.
#include <cctype>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "isa/assembler.h"
#include "isa/emit.h"
#include "isa/instruction.h"

namespace npuforge::isa {
namespace {

Instruction asm1(std::string_view text) { return assemble(builtin_isa(), text, "t.s").instrs.at(0); }

TEST(Extents, GemmOperandsAreItsShapes) {
  const auto in = asm1("gemm 0x1000, 0x2000, 0x3000, m=4, n=8, k=16, bias=0x4000, has_bias");
  const auto r = reads(in);
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(r[0].addr, 0x2000u);
  EXPECT_EQ(r[0].bytes, 64u);  // m*k
  EXPECT_EQ(r[1].bytes, 128u);  // k*n
  EXPECT_EQ(r[2].addr, 0x4000u);
  EXPECT_EQ(r[2].bytes, 32u);  // n int32
  const auto w = writes(in);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0].addr, 0x1000u);
  EXPECT_EQ(w[0].bytes, 32u);  // m*n
  // Without bias the bias operand is unused.
  EXPECT_EQ(reads(asm1("gemm 0x1000, 0x2000, 0x3000, m=4, n=8, k=16")).size(), 2u);
}

TEST(Extents, DmaAndWindowedOps) {
  const auto ld = asm1("load 0x40, ddr:0x100, rows=3, row_bytes=10, stride=100");
  EXPECT_EQ(writes(ld).at(0).bytes, 30u);
  EXPECT_EQ(reads(ld).at(0).bytes, 210u);  // (rows-1)*stride + row_bytes in DDR
  EXPECT_EQ(reads(ld).at(0).space, Space::Ddr);
  const auto ic = asm1("im2col 0x0, 0x1000, h=8, w=8, c=4, kh=3, kw=3, pad_top=1, pad_left=1, pad_bottom=1, pad_right=1");
  EXPECT_EQ(writes(ic).at(0).bytes, 8u * 8 * 9 * 4);
  const auto pl = asm1("pool 0x0, 0x1000, h=7, w=5, c=3, window_h=3, window_w=3, stride_h=2, stride_w=2, mode=avg");
  EXPECT_EQ(writes(pl).at(0).bytes, 3u * 2 * 3);
  EXPECT_EQ(reads(asm1("eltwise 0x0, 0x10, len=9, op=relu")).size(), 1u);
  EXPECT_EQ(reads(asm1("eltwise 0x0, 0x10, b=0x20, len=9, op=add")).size(), 2u);
}

TEST(Table, EveryInstructionOfTheIssueExists) {
  for (const char* m : {"load", "store", "gemm", "im2col", "eltwise", "pool", "lut", "move", "sync", "nop", "halt"})
    EXPECT_NE(builtin_isa().by_mnemonic(m), nullptr) << m;
}

TEST(Docs, CommittedReferenceMatchesTheTable) {
  std::ifstream in(std::string(NPUFORGE_SOURCE_DIR) + "/docs/isa.md");
  std::stringstream ss;
  ss << in.rdbuf();
  EXPECT_EQ(ss.str(), isa_markdown(builtin_isa()))
      << "docs/isa.md is stale: run `build/tools/npuforge isa --markdown > docs/isa.md`";
}

TEST(SvPackage, NamesEveryOpcodeAndField) {
  const std::string sv = isa_sv_package(builtin_isa());
  EXPECT_NE(sv.find("package npu_isa_pkg;"), std::string::npos);
  EXPECT_NE(sv.find("localparam int INSTR_WIDTH = 256;"), std::string::npos);
  EXPECT_NE(sv.find("OP_GEMM = 8'h10;"), std::string::npos);
  EXPECT_NE(sv.find("localparam int GEMM_K_LSB = 168;"), std::string::npos);
  EXPECT_NE(sv.find("localparam int GEMM_K_WIDTH = 16;"), std::string::npos);
}

// The decoder's per-opcode table (npu_isa_pkg::decode): one case arm per instruction with
// its queue, field count and every field in its slot, so npu_decoder.sv has no hand-made list.
TEST(SvPackage, DecodeTableHasEveryInstructionAndField) {
  const Isa& isa = builtin_isa();
  const std::string sv = isa_sv_package(isa);
  EXPECT_NE(sv.find("function automatic decoded_t decode(input logic [INSTR_WIDTH-1:0] w);"), std::string::npos);
  for (const InstrSpec& s : isa.instructions()) {
    std::string m = s.mnemonic;
    for (char& c : m) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    const size_t arm = sv.find("      OP_" + m + ": begin\n");
    ASSERT_NE(arm, std::string::npos) << s.mnemonic;
    const std::string body = sv.substr(arm, sv.find("      end\n", arm) - arm);
    EXPECT_NE(body.find("d.queue_id = 2'(" + m + "_QUEUE);"), std::string::npos) << body;
    EXPECT_NE(body.find("d.field_count = 5'd" + std::to_string(s.fields.size()) + ";"), std::string::npos) << body;
    for (size_t i = 3; i < s.fields.size(); ++i) {
      std::string f = s.fields[i].name;
      for (char& c : f) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      EXPECT_NE(body.find("d.fields[32*" + std::to_string(i) + " +: 32] = 32'(w[" + m + "_" + f + "_LSB +: " + m + "_" +
                          f + "_WIDTH]);"),
                std::string::npos)
          << s.mnemonic << "." << s.fields[i].name;
    }
  }
  EXPECT_NE(sv.find("localparam int WAIT_WIDTH = 3;"), std::string::npos);
}

}  // namespace
}  // namespace npuforge::isa
