// Bad input: every error names where it is and what was expected, and never crashes.
#include <gtest/gtest.h>

#include "isa/assembler.h"
#include "util/error.h"
#include "isa/instruction.h"
#include "isa/npu_config.h"
#include "error_of.h"

namespace npuforge::isa {
namespace {

using testing::error_of;

std::string asm_error(std::string_view src) {
  return error_of([&] { assemble(builtin_isa(), src, "bad.s"); });
}

TEST(AsmErrors, UnknownMnemonic) {
  const auto e = asm_error("nop\n  frobnicate 0x10\n");
  EXPECT_HAS(e, "bad.s:2:3:");
  EXPECT_HAS(e, "unknown mnemonic 'frobnicate'");
  EXPECT_HAS(e, "gemm");  // lists what is known
}

TEST(AsmErrors, FieldOutOfRangeGivesTheRange) {
  const auto e = asm_error("gemm 0x0, 0x0, 0x0, m=70000, n=1, k=1");
  EXPECT_HAS(e, "bad.s:1:");
  EXPECT_HAS(e, "'m' = 70000 is out of range [1, 65535]");
}

TEST(AsmErrors, MissingOperand) {
  EXPECT_HAS(asm_error("load 0x40, rows=1, row_bytes=4"), "missing operand 'src' (ddr_addr)");
  EXPECT_HAS(asm_error("gemm 0x0, 0x0, 0x0, m=1, n=1"), "missing operand 'k'");
}

TEST(AsmErrors, OtherMistakes) {
  EXPECT_HAS(asm_error("gemm 0x0, 0x0, 0x0, m=1, n=1, k=1, q=3"), "has no field 'q'");
  EXPECT_HAS(asm_error("gemm 0x0, 0x0, 0x0, 0x0, m=1, n=1, k=1"), "one too many");
  EXPECT_HAS(asm_error("gemm 0x0, 0x0, 0x0, m=1, m=2, n=1, k=1"), "given twice");
  EXPECT_HAS(asm_error("eltwise 0x0, 0x0, len=4, op=divide"), "not one of: add, mul, relu, clip");
  EXPECT_HAS(asm_error("load 0x0, ddr:0, rows=1, row_bytes=4, wait=dma"), "unknown queue 'dma'");
  EXPECT_HAS(asm_error("load 0x0, ddr:0, rows=1, row_bytes=4, wait=load"), "names its own queue");
  EXPECT_HAS(asm_error("halt wait=load"), "control instructions take no tokens");
  EXPECT_HAS(asm_error("load 0x0, ddr:0, rows=2, row_bytes=64, stride=16"), "constraint");
  EXPECT_HAS(asm_error("x:\nx: nop"), "label 'x' is defined twice");
  EXPECT_HAS(asm_error("move 0x0, %a+z, len=4"), "bad symbol offset");
}

TEST(AsmErrors, UnresolvedSymbolIsReportedOnResolve) {
  auto prog = assemble(builtin_isa(), "move %dst, %src, len=64", "s.s");
  ASSERT_EQ(prog.symbol_refs.size(), 2u);
  EXPECT_HAS(error_of([&] { resolve_symbols(prog, {{"dst", 0x40}}); }), "'%src' has no address");
  resolve_symbols(prog, {{"dst", 0x40}, {"src", 0x80}});
  EXPECT_EQ(prog.instrs[0].get(builtin_isa().require("move").require_field("src")), 0x80u);
}

TEST(BinaryErrors, TruncatedBinary) {
  std::vector<uint8_t> bytes(32 * 3 + 5, 0);
  const auto e = error_of([&] { decode_program(builtin_isa(), bytes, "t.bin"); });
  EXPECT_HAS(e, "t.bin: truncated binary: 101 bytes is not a multiple of the 32-byte instruction width");
}

TEST(BinaryErrors, UnknownOpcode) {
  std::vector<uint8_t> bytes(64, 0);
  bytes[32] = 0x77;
  const auto e = error_of([&] { decode_program(builtin_isa(), bytes, "u.bin"); });
  EXPECT_HAS(e, "u.bin: instruction 1 (byte offset 32): unknown opcode 0x77");
}

std::string isa_error(std::string yaml) {
  return error_of([&] { Isa::load_string(yaml, "my_isa.yaml"); });
}

// The built-in YAML with one text replaced: broken ISAs start from the real one.
std::string patched(std::string_view from, std::string_view to) {
  std::string y(builtin_isa_yaml());
  const size_t at = y.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return y.replace(at, from.size(), to);
}

TEST(IsaErrors, MalformedYamlNamesFileAndLine) {
  const auto e = isa_error("name: x\nwidth: [1, 2\nversion: 1\n");
  EXPECT_HAS(e, "my_isa.yaml:");
  EXPECT_HAS(e, "malformed YAML");
}

TEST(IsaErrors, OverlappingFields) {
  const auto e = isa_error(patched("{name: m, bits: [151, 136]", "{name: m, bits: [153, 134]"));
  EXPECT_HAS(e, "my_isa.yaml:");
  EXPECT_HAS(e, "instruction 'gemm': fields 'qp' [135, 112] and 'm' [153, 134] overlap");
}

TEST(IsaErrors, FieldBeyondWidth) {
  EXPECT_HAS(isa_error(patched("{name: stride, bits: [135, 104], kind: size, default: 0}", "{name: stride, bits: [270, 260], kind: size, default: 0}")),
             "field 'stride': bits [270, 260] exceed the instruction width of 256 bits");
}

TEST(IsaErrors, OtherMistakes) {
  EXPECT_HAS(isa_error(patched("opcode: 0x3f", "opcode: 0x10")), "share opcode 0x10");
  EXPECT_HAS(isa_error(patched("kind: shape, min: 1}\n      - {name: n", "kind: shapes, min: 1}\n      - {name: n")),
             "unknown field kind 'shapes'");
  EXPECT_HAS(isa_error(patched("bytes: \"m * k\"", "bytes: \"m * kk\"")), "unknown field 'kk'");
  EXPECT_HAS(isa_error(patched("bytes: \"m * k\"", "bytes: \"m * (k\"")), "expected ')'");
  EXPECT_HAS(isa_error(patched("name: npuforge-ref", "name: npuforge-ref\ncolour: blue")), "unknown key 'colour'");
  EXPECT_HAS(isa_error(patched("queue: compute", "queue: vector")), "unknown queue 'vector'");
}

TEST(ConfigErrors, NamesTheField) {
  auto cfg_error = [](std::string yaml) {
    return error_of([&] { NpuConfig::load_string(yaml, "npu.yaml"); });
  };
  EXPECT_HAS(cfg_error("alignment: 48\n"), "npu.yaml:1: 'alignment' = 48 must be a power of two");
  EXPECT_HAS(cfg_error("sram_bytes: 512\n"), "'sram_bytes' = 512 is out of range [1024, 16777216]");
  EXPECT_HAS(cfg_error("sram_byte: 4096\n"), "unknown key 'sram_byte'");
  EXPECT_HAS(cfg_error("mac_rows: lots\n"), "'mac_rows' must be an integer, got 'lots'");
  EXPECT_HAS(cfg_error("mac_rows: [1\n"), "malformed YAML");
  // The check across fields also applies to a value kept from the built-in file (64).
  EXPECT_HAS(cfg_error("sram_bytes: 1056\n"), "'sram_bytes' = 1056 must be a multiple of 'alignment' (64)");
}

}  // namespace
}  // namespace npuforge::isa
