// The ISA is data: tests/data/isa_extra.yaml is an overlay on isa/npu_isa.yaml that adds
// `move2`, a copy of `move` under a new opcode. With no code change it loads, assembles,
// encodes, decodes and disassembles; the built-in ISA refuses it. (The Verilated decoder
// built from its generated package: tests/sc_model/rtl_stubs_test.cc.) Overlays that clash
// with their base are errors naming both; the queries that code derives limits and codes
// from answer from the tables.
#include <unistd.h>

#include <cctype>
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "isa/assembler.h"
#include "isa/emit.h"
#include "isa/instruction.h"
#include "util/error.h"
#include "util/file_io.h"
#include "error_of.h"

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

// One more copy of move under `opcode`, as an overlay's instruction list entry.
std::string move3(unsigned opcode) {
  return "  - name: move3\n    opcode: " + std::to_string(opcode) +
         "\n    queue: compute\n    fields:\n"
         "      - {name: dst, bits: [39, 16], kind: sram_addr}\n"
         "      - {name: src, bits: [63, 40], kind: sram_addr}\n"
         "      - {name: len, bits: [87, 64], kind: size, min: 1}\n";
}

using testing::error_of;

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

// The overlay's own name; everything else of the base, unchanged.
TEST(IsaExtra, OverlayKeepsTheBasesHeaderUnlessItSetsIt) {
  EXPECT_EQ(extra().name(), "npuforge-ref-extra");
  EXPECT_EQ(extra().version(), builtin_isa().version());
  EXPECT_EQ(extra().width_bits(), builtin_isa().width_bits());
  const Isa v9 = Isa::load_string("base: builtin\nversion: 9\ninstructions:\n" + move3(0x17), "v9.yaml");
  EXPECT_EQ(v9.version(), 9u);
  EXPECT_EQ(v9.name(), builtin_isa().name());
}

std::string overlay_error(const std::string& yaml) {
  return error_of([&] { Isa::load_string(yaml, "overlay.yaml"); });
}

TEST(IsaExtra, OverlayClashesWithItsBaseAreErrorsNamingBoth) {
  std::string e = overlay_error("base: builtin\ninstructions:\n" + move3(0x14));  // move's opcode
  EXPECT_HAS(e, "overlay.yaml:3:");
  EXPECT_HAS(e, "instructions 'move' (defined by the base ISA, built-in isa/npu_isa.yaml) and 'move3' share opcode 0x14");
  std::string same_name = move3(0x17);
  same_name.replace(same_name.find("move3"), 5, "gemm");
  e = overlay_error("base: builtin\ninstructions:\n" + same_name);
  EXPECT_HAS(e, "overlay.yaml:3:");
  EXPECT_HAS(e, "instruction 'gemm' is defined twice (defined by the base ISA, built-in isa/npu_isa.yaml)");
  e = overlay_error("base: builtin\nwidth: 512\ninstructions:\n" + move3(0x17));
  EXPECT_HAS(e, "overlay.yaml:2: an ISA overlay ('base:') takes 'width' from its base ISA");
  EXPECT_HAS(overlay_error("base: builtin\ncolour: red\ninstructions:\n" + move3(0x17)), "unknown key 'colour'");
  EXPECT_HAS(overlay_error("base: builtin\ninstructions: []\n"), "must be a non-empty list");
  e = overlay_error("base: no/such/isa.yaml\ninstructions:\n" + move3(0x17));
  EXPECT_HAS(e, "overlay.yaml:1: base 'no/such/isa.yaml': no ISA file at");
  EXPECT_HAS(e, "expected 'builtin' or the path of an ISA file");
}

// An overlay may extend a file (its path relative to the overlay), itself an overlay; a chain
// that comes back to a file it passed is refused, not followed for ever.
TEST(IsaExtra, OverlayOfAFileAndCyclesAreRefused) {
  const auto dir = std::filesystem::temp_directory_path() / ("npuforge_overlay_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir / "sub");
  util::write_file(dir / "sub" / "more.yaml",
                   "base: ../extra_copy.yaml\nname: more\ninstructions:\n" + move3(0x17), "test ISA");
  util::write_file(dir / "extra_copy.yaml",
                   util::read_file(std::string(NPUFORGE_SOURCE_DIR) + "/tests/data/isa_extra.yaml", "test ISA"),
                   "test ISA");
  const Isa more = Isa::load_file(dir / "sub" / "more.yaml");
  EXPECT_EQ(more.name(), "more");
  EXPECT_EQ(more.instructions().size(), builtin_isa().instructions().size() + 2);
  EXPECT_EQ(more.require("move2").opcode, 0x16u);
  EXPECT_EQ(more.require("move3").opcode, 0x17u);
  util::write_file(dir / "a.yaml", "base: b.yaml\ninstructions:\n" + move3(0x17), "test ISA");
  util::write_file(dir / "b.yaml", "base: a.yaml\ninstructions:\n" + move3(0x18), "test ISA");
  EXPECT_HAS(error_of([&] { Isa::load_file(dir / "a.yaml"); }),
             "b.yaml:1: base 'a.yaml' is an overlay that leads back here (a cycle)");
  std::filesystem::remove_all(dir);
}

// The SystemVerilog package names every value of an enum field, so the RTL compares fields
// with names (npu_compute.sv: ELTWISE_OP_ADD, ...), never with literal codes.
TEST(IsaExtra, SvPackageNamesEveryEnumValue) {
  const std::string sv = isa_sv_package(builtin_isa());
  size_t values = 0;
  for (const InstrSpec& s : builtin_isa().instructions())
    for (const FieldSpec& f : s.fields)
      for (const auto& [name, code] : f.enum_values) {
        std::string id = s.mnemonic + "_" + f.name + "_" + name;
        for (char& c : id) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
        const std::string want = "localparam logic [" + id.substr(0, id.size() - name.size() - 1) + "_WIDTH-1:0] " + id +
                                 " = " + std::to_string(f.width) + "'d" + std::to_string(code) + ";";
        EXPECT_NE(sv.find(want), std::string::npos) << want;
        ++values;
      }
  EXPECT_GE(values, 6u);  // eltwise op (4) and pool mode (2) at least
}

// Limits and codes come from the tables: the width and min:/max: of a field, the code of a
// named value; what the ISA lacks is an error naming it.
TEST(IsaExtra, FieldQueriesAnswerFromTheTables) {
  const Isa& isa = builtin_isa();
  EXPECT_EQ(isa.max_value("gemm", "k"), 65535);
  EXPECT_EQ(isa.min_value("gemm", "k"), 1);
  EXPECT_EQ(isa.max_value("gemm", "shift"), 40);  // max: narrows the width
  EXPECT_EQ(isa.min_value("eltwise", "lo"), -128);  // signed
  EXPECT_EQ(isa.max_value("im2col", "dil_h"), 7);
  EXPECT_EQ(isa.enum_value("eltwise", "op", "clip"), 3u);
  EXPECT_EQ(isa.enum_value("pool", "mode", "avg"), 1u);
  EXPECT_EQ(extra().max_value("move2", "len"), (1 << 24) - 1);
  EXPECT_EQ(isa.addressable_bytes(Space::Sram), uint64_t{1} << 24);  // 24-bit sram_addr fields
  EXPECT_EQ(isa.addressable_bytes(Space::Ddr), uint64_t{1} << 32);
  EXPECT_HAS(error_of([&] { isa.max_value("gemm", "kk"); }), "instruction 'gemm' has no field 'kk'");
  EXPECT_HAS(error_of([&] { isa.max_value("gemm3", "k"); }), "unknown instruction 'gemm3'");
  EXPECT_HAS(error_of([&] { isa.enum_value("eltwise", "op", "div"); }),
             "eltwise.op has no value 'div' (it has: add, mul, relu, clip)");
}

}  // namespace
}  // namespace npuforge::isa
