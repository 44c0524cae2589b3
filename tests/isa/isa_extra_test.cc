// The ISA is data: tests/data/isa_extra.yaml is isa/npu_isa.yaml plus `move2`, a copy of
// `move` under a new opcode. With no code change it loads, assembles, encodes, decodes and
// disassembles; the built-in ISA refuses it. (The Verilated decoder built from its
// generated package: tests/sc_model/rtl_stubs_test.cc.)
#include <string>

#include <gtest/gtest.h>

#include "isa/assembler.h"
#include "isa/instruction.h"
#include "util/error.h"

namespace npuforge::isa {
namespace {

const Isa& extra() {
  static const Isa isa = Isa::load_file(std::string(NPUFORGE_SOURCE_DIR) + "/tests/data/isa_extra.yaml");
  return isa;
}

// Same encoding and meaning; the mnemonic, opcode and doc are not compared.
void expect_same_layout(const InstrSpec& a, const InstrSpec& b) {
  EXPECT_EQ(a.queue, b.queue) << a.mnemonic;
  ASSERT_EQ(a.fields.size(), b.fields.size()) << a.mnemonic;
  for (size_t i = 0; i < a.fields.size(); ++i) {
    const FieldSpec &x = a.fields[i], &y = b.fields[i];
    EXPECT_EQ(x.name, y.name) << a.mnemonic;
    EXPECT_EQ(x.lsb, y.lsb) << a.mnemonic << "." << x.name;
    EXPECT_EQ(x.width, y.width) << a.mnemonic << "." << x.name;
    EXPECT_EQ(x.kind, y.kind) << a.mnemonic << "." << x.name;
    EXPECT_EQ(x.is_signed, y.is_signed) << a.mnemonic << "." << x.name;
    EXPECT_EQ(x.min, y.min) << a.mnemonic << "." << x.name;
    EXPECT_EQ(x.max, y.max) << a.mnemonic << "." << x.name;
    EXPECT_EQ(x.default_value, y.default_value) << a.mnemonic << "." << x.name;
    EXPECT_EQ(x.enum_values, y.enum_values) << a.mnemonic << "." << x.name;
  }
  ASSERT_EQ(a.operands.size(), b.operands.size()) << a.mnemonic;
  for (size_t i = 0; i < a.operands.size(); ++i) {
    EXPECT_EQ(a.operands[i].field, b.operands[i].field) << a.mnemonic;
    EXPECT_EQ(a.operands[i].access, b.operands[i].access) << a.mnemonic;
    EXPECT_EQ(a.operands[i].space, b.operands[i].space) << a.mnemonic;
    EXPECT_EQ(a.operands[i].bytes.text(), b.operands[i].bytes.text()) << a.mnemonic;
  }
  ASSERT_EQ(a.constraints.size(), b.constraints.size()) << a.mnemonic;
  for (size_t i = 0; i < a.constraints.size(); ++i)
    EXPECT_EQ(a.constraints[i].text(), b.constraints[i].text()) << a.mnemonic;
}

TEST(IsaExtra, IsTheBuiltinIsaPlusACopyOfMove) {
  const Isa& base = builtin_isa();
  ASSERT_EQ(extra().instructions().size(), base.instructions().size() + 1);
  for (const InstrSpec& b : base.instructions()) {
    const InstrSpec* e = extra().by_mnemonic(b.mnemonic);
    ASSERT_NE(e, nullptr) << b.mnemonic;
    EXPECT_EQ(e->opcode, b.opcode) << b.mnemonic;
    expect_same_layout(*e, b);
  }
  const InstrSpec& move2 = extra().require("move2");
  EXPECT_EQ(base.by_opcode(move2.opcode), nullptr);  // a new opcode
  expect_same_layout(move2, base.require("move"));
}

TEST(IsaExtra, NewInstructionAssemblesEncodesDecodesAndDisassembles) {
  const std::string text =
      "move2 0x100, 0x40, len=64, wait=load, signal=store\n"
      "move2 0xffffc0, 0x0, len=16777215\n"
      "halt\n";
  const AsmProgram prog = assemble(extra(), text, "extra.s");
  ASSERT_EQ(prog.instrs.size(), 3u);
  EXPECT_EQ(prog.instrs[0].spec->mnemonic, "move2");
  const std::vector<uint8_t> bin = encode_program(extra(), prog.instrs);
  EXPECT_EQ(bin[0], extra().require("move2").opcode);
  const std::vector<Instruction> back = decode_program(extra(), bin, "extra.bin");
  EXPECT_EQ(disassemble_program(back), text);
  // The operand extents come from the YAML too: move2 reads src and writes dst, len bytes.
  const auto ex = extents(back[0]);
  ASSERT_EQ(ex.count, 2u);
  EXPECT_EQ(ex.items[0].addr, 0x40u);
  EXPECT_EQ(ex.items[0].bytes, 64u);
  EXPECT_EQ(ex.items[1].addr, 0x100u);
  EXPECT_EQ(ex.items[1].access, Access::Write);
}

TEST(IsaExtra, TheBuiltinIsaRefusesTheNewInstruction) {
  const std::vector<uint8_t> bin =
      encode_program(extra(), assemble(extra(), "move2 0x100, 0x40, len=64\n", "extra.s").instrs);
  EXPECT_THROW(decode_program(builtin_isa(), bin, "extra.bin"), Error);
  EXPECT_THROW(assemble(builtin_isa(), "move2 0x100, 0x40, len=64\n", "extra.s"), Error);
}

}  // namespace
}  // namespace npuforge::isa
