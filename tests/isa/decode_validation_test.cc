// decode_program (the binary decoder) refuses exactly the words the assembler refuses:
// field ranges, token masks, constraints, and also reserved bits and unknown
// opcodes, which the text form cannot even express. Each error names the word's index and
// byte offset and the field.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "isa/assembler.h"
#include "isa/instruction.h"
#include "util/error.h"
#include "util/rng.h"
#include "error_of.h"

namespace npuforge::isa {
namespace {

using testing::error_of;

// A binary of `before` valid nops, then `bad` (built from the mnemonic with `set` applied on
// top of its defaults, bypassing the assembler), then a halt.
std::vector<uint8_t> binary_with(std::string_view mnemonic, const std::vector<std::pair<std::string, uint32_t>>& set,
                                 unsigned before = 2) {
  const Isa& isa = builtin_isa();
  std::vector<Instruction> prog(before, Instruction::make(isa.require("nop")));
  Instruction bad = Instruction::make(isa.require(mnemonic));
  for (const auto& [field, raw] : set) bad.set(bad.spec->require_field(field), raw);
  prog.push_back(bad);
  prog.push_back(Instruction::make(isa.require("halt")));
  return encode_program(isa, prog);
}

std::string asm_error_text(std::string_view src) {
  return error_of([&] { assemble(builtin_isa(), src, "bad.s"); });
}

std::string decode_error(const std::vector<uint8_t>& bin) {
  return error_of([&] { decode_program(builtin_isa(), bin, "bad.bin"); });
}

TEST(DecodeProgramRejects, FieldBelowItsMinimumNamingWordAndField) {
  // rows has `min: 1`: a zero-row load assembles to an error, and decodes to one.
  const auto e = decode_error(binary_with("load", {{"rows", 0}, {"row_bytes", 64}}));
  EXPECT_HAS(e, "bad.bin: instruction 2 (byte offset 64): load: field 'rows' = 0 is out of range [1, 65535]");
  EXPECT_HAS(asm_error_text("load 0x0, ddr:0x0, rows=0, row_bytes=64"), "field 'rows' = 0 is out of range");
}

TEST(DecodeProgramRejects, FieldAboveItsMaximum) {
  // shift is a 6-bit field with `max: 40`: 63 fits the bits but not the ISA.
  const auto e = decode_error(binary_with("gemm", {{"m", 1}, {"n", 1}, {"k", 1}, {"shift", 63}}, 0));
  EXPECT_HAS(e, "bad.bin: instruction 0 (byte offset 0): gemm: field 'shift' = 63 is out of range [0, 40]");
}

TEST(DecodeProgramRejects, TokenToItsOwnQueueAndTokensOnControl) {
  const auto own = decode_error(binary_with("load", {{"rows", 1}, {"row_bytes", 1}, {"wait", 1}}, 1));
  EXPECT_HAS(own, "instruction 1 (byte offset 32): load: field 'wait' names its own queue 'load'");
  const auto control = decode_error(binary_with("sync", {{"signal", 4}}, 3));
  EXPECT_HAS(control, "instruction 3 (byte offset 96): sync: field 'signal' must be none");
}

TEST(DecodeProgramRejects, BrokenConstraint) {
  const auto e = decode_error(binary_with("load", {{"rows", 2}, {"row_bytes", 64}, {"stride", 8}}));
  EXPECT_HAS(e, "instruction 2 (byte offset 64): load: constraint 'rows == 1 || stride >= row_bytes' does not hold");
  const auto lohi = decode_error(binary_with("eltwise", {{"len", 1}, {"op", 3}, {"lo", 5}, {"hi", 4}}));
  EXPECT_HAS(lohi, "eltwise: constraint 'lo <= hi' does not hold");
}

TEST(DecodeProgramRejects, ReservedBitsNameTheWord) {
  std::vector<uint8_t> bin = binary_with("nop", {}, 4);
  bin[5 * 32 + 31] = 0x80;  // the halt's top bit is outside every field
  EXPECT_HAS(decode_error(bin), "bad.bin: instruction 5 (byte offset 160): halt: reserved bits set in byte 31");
}

// The property itself: over random field values of every instruction (field bits only, so
// the word always decodes), decode_program throws exactly when assembling the word's
// disassembly throws, and a word both accept comes back identical.
TEST(DecodeProgramRejects, ExactlyWhatTheAssemblerRejectsOnRandomWords) {
  const Isa& isa = builtin_isa();
  Rng rng(13);
  std::vector<uint8_t> word(isa.width_bytes());
  unsigned rejected = 0, accepted = 0;
  for (const InstrSpec& spec : isa.instructions()) {
    for (int n = 0; n < 400; ++n) {
      Instruction in = Instruction::make(spec);
      for (unsigned s = 1; s < spec.fields.size(); ++s) {
        // Half the words keep most defaults, so that valid words are common too.
        if (n % 2 == 0 && rng.chance(0.7)) continue;
        const unsigned w = spec.fields[s].width;
        in.set(s, static_cast<uint32_t>(rng.next() & ((uint64_t{1} << w) - 1)));
      }
      encode(in, word);
      bool dec_err = false, asm_err = false;
      std::vector<Instruction> decoded;
      try {
        decoded = decode_program(isa, word, "r.bin");
      } catch (const Error&) {
        dec_err = true;
      }
      const std::string text = disassemble(in);
      std::vector<Instruction> assembled;
      try {
        assembled = assemble(isa, text, "r.s").instrs;
      } catch (const Error&) {
        asm_err = true;
      }
      ASSERT_EQ(dec_err, asm_err) << text;
      if (!dec_err) {
        ASSERT_EQ(decoded, assembled) << text;
        ++accepted;
      } else {
        ++rejected;
      }
    }
  }
  // Both outcomes occur often enough for the comparison to mean something.
  EXPECT_GT(rejected, 200u);
  EXPECT_GT(accepted, 200u);
}

}  // namespace
}  // namespace npuforge::isa
