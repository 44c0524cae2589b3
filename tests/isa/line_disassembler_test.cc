// isa::LineDisassembler, the per-ISA tables `npuforge gen` writes its assembly with, against
// the general isa::append_disassembly: every instruction of the built-in and the extended ISA
// with field values drawn to reach each branch (defaults, enum codes and unnamed codes, flags
// 0/1/other, every token mask, signed extremes, all-ones).
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "isa/assembler.h"
#include "isa/instruction.h"
#include "util/error.h"
#include "util/rng.h"

namespace npuforge::isa {
namespace {

uint32_t mask_of(unsigned width) { return width >= 32 ? ~0u : (1u << width) - 1; }

// A value of field `f` chosen to reach one of the disassembler's branches.
uint32_t pick(const FieldSpec& f, Rng& rng) {
  const uint32_t mask = mask_of(f.width);
  switch (rng.below(8)) {
    case 0: return f.default_value ? static_cast<uint32_t>(*f.default_value) & mask : 0;
    case 1:
      if (!f.enum_values.empty()) return f.enum_values[rng.below(f.enum_values.size())].second;
      return 1;
    case 2: return 0;
    case 3: return mask;  // all ones: the most negative -1 of a signed field
    case 4: return static_cast<uint32_t>(f.max) & mask;
    case 5: return static_cast<uint32_t>(f.min) & mask;
    case 6: return static_cast<uint32_t>(rng.below(8)) & mask;  // token masks, small codes
    default: return static_cast<uint32_t>(rng.next()) & mask;
  }
}

void expect_same_lines(const Isa& isa, uint64_t seed) {
  const LineDisassembler fast(isa);
  Rng rng(seed);
  std::vector<char> line(fast.max_line_bytes() + 64, '#');
  size_t checked = 0;
  for (const InstrSpec& spec : isa.instructions()) {
    for (int n = 0; n < 2000; ++n) {
      Instruction in = Instruction::make(spec);
      for (unsigned i = 1; i < spec.fields.size(); ++i) in.raw[i] = pick(spec.fields[i], rng);
      std::string expected;
      append_disassembly(expected, in);
      char* end = fast.write(in, line.data());
      ASSERT_LE(static_cast<size_t>(end - line.data()), fast.max_line_bytes()) << expected;
      ASSERT_EQ(std::string(line.data(), end), expected) << spec.mnemonic;
      ++checked;
    }
  }
  EXPECT_GT(checked, 0u);
}

TEST(LineDisassembler, MatchesAppendDisassemblyOnTheBuiltinIsa) { expect_same_lines(builtin_isa(), 1); }

TEST(LineDisassembler, MatchesAppendDisassemblyOnTheExtendedIsa) {
  const Isa extra = Isa::load_file(std::string(NPUFORGE_SOURCE_DIR) + "/tests/data/isa_extra.yaml");
  expect_same_lines(extra, 2);
}

TEST(LineDisassembler, RefusesAnInstructionOfAnotherIsa) {
  const Isa extra = Isa::load_file(std::string(NPUFORGE_SOURCE_DIR) + "/tests/data/isa_extra.yaml");
  const LineDisassembler fast(builtin_isa());
  std::vector<char> line(fast.max_line_bytes());
  const Instruction in = Instruction::make(extra.require("move2"));
  EXPECT_THROW(fast.write(in, line.data()), Error);
}

}  // namespace
}  // namespace npuforge::isa
