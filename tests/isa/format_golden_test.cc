// The one encoder (isa::encode, reading InstrSpec::layout) and the one disassembler
// (isa::write_disassembly, reading InstrSpec::line) against known words and lines, worked out
// by hand from isa/npu_isa.yaml (and equal to what `npuforge asm`/`disasm` wrote before the
// per-ISA plans): a field straddling the 64-bit limb boundary (load's src, bits 71..40), a
// negative signed field (eltwise's lo), enum, token and default-omission texts.
#include <array>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "isa/assembler.h"
#include "isa/instruction.h"

namespace npuforge::isa {
namespace {

struct Golden {
  const char* text;
  std::array<uint8_t, 32> word;  // the built-in ISA's 256-bit words, byte 0 first
};

const Golden kGolden[] = {
    {"load 0x100, ddr:0x89abcdef, rows=2, row_bytes=16, stride=32, signal=compute",
     {0x01, 0x10, 0x00, 0x01, 0x00, 0xef, 0xcd, 0xab, 0x89, 0x02, 0x00, 0x10, 0x00, 0x20}},
    {"eltwise 0x200, 0x300, len=64, op=clip, lo=-5, hi=100, wait=load+store",
     {0x12, 0x05, 0x00, 0x02, 0x00, 0x00, 0x03, 0x00, 0x00, 0x00, 0x00, 0x40, 0x00, 0x00, 0x07, 0x00, 0x00, 0xfb,
      0x64}},
};

Instruction make_load() {
  const InstrSpec& s = builtin_isa().require("load");
  Instruction in = Instruction::make(s);
  in.set(s.require_field("dst"), 0x100);
  in.set(s.require_field("src"), 0x89abcdef);
  in.set(s.require_field("rows"), 2);
  in.set(s.require_field("row_bytes"), 16);
  in.set(s.require_field("stride"), 32);
  in.set(kSignalSlot, 1u << static_cast<unsigned>(Queue::Compute));
  return in;
}

Instruction make_eltwise() {
  const InstrSpec& s = builtin_isa().require("eltwise");
  Instruction in = Instruction::make(s);
  in.set(s.require_field("dst"), 0x200);
  in.set(s.require_field("a"), 0x300);
  in.set(s.require_field("len"), 64);
  in.set(s.require_field("op"), 3);  // clip
  in.set_value(s.require_field("lo"), -5);
  in.set_value(s.require_field("hi"), 100);
  in.set(kWaitSlot, (1u << static_cast<unsigned>(Queue::Load)) | (1u << static_cast<unsigned>(Queue::Store)));
  return in;
}

TEST(FormatGolden, EncodesKnownWords) {
  const Instruction program[] = {make_load(), make_eltwise()};
  for (size_t i = 0; i < 2; ++i) {
    std::vector<uint8_t> word(32, 0xa5);
    encode(program[i], word);
    EXPECT_EQ(word, std::vector<uint8_t>(kGolden[i].word.begin(), kGolden[i].word.end())) << kGolden[i].text;
  }
  std::vector<uint8_t> all(kGolden[0].word.begin(), kGolden[0].word.end());
  all.insert(all.end(), kGolden[1].word.begin(), kGolden[1].word.end());
  EXPECT_EQ(encode_program(builtin_isa(), program), all);
}

TEST(FormatGolden, DropsBitsPastTheWord) {
  // A shorter buffer keeps the low bytes: load's src straddles byte 8, cut after byte 6.
  std::vector<uint8_t> word(7, 0xa5);
  encode(make_load(), word);
  EXPECT_EQ(word, std::vector<uint8_t>(kGolden[0].word.begin(), kGolden[0].word.begin() + 7));
}

TEST(FormatGolden, DisassemblesKnownLines) {
  const Instruction program[] = {make_load(), make_eltwise()};
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(disassemble(program[i]), kGolden[i].text);
    std::string line(program[i].spec->max_line_bytes, '#');
    char* end = write_disassembly(line.data(), program[i]);
    EXPECT_EQ(std::string(line.data(), end), kGolden[i].text);
  }
  EXPECT_EQ(disassemble_program(program), std::string(kGolden[0].text) + "\n" + kGolden[1].text + "\n");
}

TEST(FormatGolden, BareFlagsAndBothTokenFields) {
  const std::string text =
      "pool 0x10, 0x20, h=4, w=4, c=8, window_h=2, window_w=2, stride_h=2, stride_w=2, pad_top=1, mode=avg, "
      "count_pad, wait=load, signal=store";
  EXPECT_EQ(disassemble(assemble(builtin_isa(), text, "pool.s").instrs.at(0)), text);
}

TEST(FormatGolden, DecodesAndAssemblesKnownWords) {
  std::vector<uint8_t> bytes;
  std::string text;
  for (const Golden& g : kGolden) {
    bytes.insert(bytes.end(), g.word.begin(), g.word.end());
    text += std::string(g.text) + "\n";
  }
  EXPECT_EQ(disassemble_program(decode_program(builtin_isa(), bytes, "golden.bin")), text);
  EXPECT_EQ(encode_program(builtin_isa(), assemble(builtin_isa(), text, "golden.s").instrs), bytes);
}

TEST(FormatGolden, EveryLineFitsItsPlan) {
  // All ones in every field: the longest numbers, unnamed enum codes, every token.
  for (const InstrSpec& s : builtin_isa().instructions()) {
    Instruction in = Instruction::make(s);
    for (unsigned i = 1; i < s.fields.size(); ++i) in.set_value(i, -1);
    EXPECT_LE(disassemble(in).size(), s.max_line_bytes) << s.mnemonic;
  }
}

TEST(FormatGolden, IndexOfFindsOnlyItsOwnInstructions) {
  const Isa& isa = builtin_isa();
  for (size_t i = 0; i < isa.instructions().size(); ++i) EXPECT_EQ(isa.index_of(isa.instructions()[i]), i);
  const Isa other = Isa::load_string(builtin_isa_yaml(), "copy.yaml");
  EXPECT_FALSE(isa.index_of(other.instructions()[0]).has_value());
  const InstrSpec copy = isa.instructions()[0];
  EXPECT_FALSE(isa.index_of(copy).has_value());
}

}  // namespace
}  // namespace npuforge::isa
