// Encoding: exact bits pinned for a few instructions, and round trips over every opcode.
#include <gtest/gtest.h>

#include "isa/assembler.h"
#include "util/error.h"
#include "isa/instruction.h"
#include "util/rng.h"

namespace npuforge::isa {
namespace {

std::string hex_of(const Instruction& in) {
  const std::string h = to_readmemh(builtin_isa(), std::span<const Instruction>(&in, 1));
  return h.substr(h.find('\n') + 1, builtin_isa().width_bits() / 4);
}

Instruction asm1(std::string_view text) {
  const auto prog = assemble(builtin_isa(), text, "test.s");
  EXPECT_EQ(prog.instrs.size(), 1u);
  return prog.instrs.at(0);
}

// Hand-computed from the bit ranges in npu_isa.yaml: if these change, the ISA changed.
TEST(Golden, LoadBits) {
  EXPECT_EQ(hex_of(asm1("load 0x40, ddr:0x1000, rows=4, row_bytes=256, stride=256, signal=compute")),
            "000000000000000000000000000000"
            "0000010001000004000010000000401001");
}

TEST(Golden, GemmBits) {
  EXPECT_EQ(hex_of(asm1("gemm 0x100, 0x200, 0x300, m=1, n=2, k=3, relu, wait=load")),
            "0000000000004000010003000200010000000000000003000002000001000110");
  // ISA v2: 16-bit m/n/k, the qp operand and per_channel.
  EXPECT_EQ(hex_of(asm1("gemm 0x100, 0x200, 0x300, qp=0x400, m=0x1234, n=0xabcd, k=0xffff, per_channel, "
                        "signal=store")),
            "000000000001000001ffffabcd12340004000000000003000002000001002010");
}

TEST(Golden, Im2colPoolLutBits) {
  EXPECT_EQ(hex_of(asm1("im2col 0x40, 0x80, h=5, w=6, c=7, kh=3, kw=2, stride_h=2, stride_w=3, pad_top=1, "
                        "pad_left=2, pad_bottom=3, pad_right=4, dil_h=3, dil_w=7")),
            "000000000000000000000000000003b432132230070060050000800000400011");
  EXPECT_EQ(hex_of(asm1("pool 0x40, 0x80, h=9, w=10, c=11, window_h=12, window_w=3, stride_h=2, stride_w=15, "
                        "pad_top=1, pad_left=2, pad_bottom=3, pad_right=4, mode=avg, count_pad")),
            "000000000000000000000000000034321f2030c00b00a0090000800000400013");
  EXPECT_EQ(hex_of(asm1("lut 0x40, 0x80, 0xfff00, len=300, wait=load, signal=store")),
            "00000000000000000000000000000000000000012c0fff000000800000402115");
}

TEST(Golden, HaltAndNopBits) {
  EXPECT_EQ(hex_of(asm1("halt")), std::string(62, '0') + "3f");
  EXPECT_EQ(hex_of(asm1("nop")), std::string(64, '0'));
}

TEST(Golden, WidthIs256Bits) {
  EXPECT_EQ(builtin_isa().width_bits(), 256u);
  EXPECT_EQ(builtin_isa().width_bytes(), 32u);
}

// A random instruction that satisfies every range and constraint (by rejection).
Instruction random_valid(const InstrSpec& spec, Rng& rng) {
  for (int attempt = 0; attempt < 10000; ++attempt) {
    Instruction in = Instruction::make(spec);
    for (unsigned i = 1; i < spec.fields.size(); ++i) {
      const FieldSpec& f = spec.fields[i];
      if (!f.enum_values.empty()) {
        in.set(i, f.enum_values[rng.below(f.enum_values.size())].second);
      } else if (f.kind == FieldKind::Tokens) {
        const uint32_t own = spec.queue == Queue::Control ? 7u : 1u << static_cast<unsigned>(spec.queue);
        in.set(i, static_cast<uint32_t>(rng.below(8)) & ~own);
      } else {
        // Small values half the time so that shape constraints hold often enough.
        const int64_t hi = rng.chance(0.5) ? std::min<int64_t>(f.max, f.min + 15) : f.max;
        in.set_value(i, rng.range(f.min, hi));
      }
    }
    if (validate(in).empty()) return in;
  }
  ADD_FAILURE() << "could not make a valid " << spec.mnemonic;
  return Instruction::make(spec);
}

TEST(RoundTrip, EncodeDecodeEveryOpcode) {
  const Isa& isa = builtin_isa();
  Rng rng(1);
  std::vector<uint8_t> word(isa.width_bytes());
  for (const auto& spec : isa.instructions()) {
    for (int n = 0; n < 3000; ++n) {
      const Instruction in = random_valid(spec, rng);
      encode(in, word);
      ASSERT_EQ(decode(isa, word), in) << disassemble(in);
    }
  }
}

TEST(RoundTrip, AssembleDisassembleEveryOpcode) {
  const Isa& isa = builtin_isa();
  Rng rng(2);
  for (const auto& spec : isa.instructions()) {
    for (int n = 0; n < 2000; ++n) {
      const Instruction in = random_valid(spec, rng);
      const std::string text = disassemble(in);
      const auto prog = assemble(isa, text, "roundtrip.s");
      ASSERT_EQ(prog.instrs.size(), 1u) << text;
      ASSERT_EQ(prog.instrs[0], in) << text;
    }
  }
}

TEST(RoundTrip, ProgramBinaryAndHex) {
  const Isa& isa = builtin_isa();
  Rng rng(3);
  std::vector<Instruction> prog;
  for (int n = 0; n < 500; ++n) prog.push_back(random_valid(isa.instructions()[rng.below(isa.instructions().size())], rng));
  const auto bin = encode_program(isa, prog);
  ASSERT_EQ(bin.size(), prog.size() * 32);
  EXPECT_EQ(decode_program(isa, bin, "p.bin"), prog);
  const std::string hex = to_readmemh(isa, prog, "seed 3");
  EXPECT_EQ(hex.rfind("// seed 3\n", 0), 0u);
  size_t lines = 0;
  for (char c : hex) lines += c == '\n';
  EXPECT_EQ(lines, prog.size() + 2);  // two comment lines
}

TEST(Decode, RejectsReservedBits) {
  const Isa& isa = builtin_isa();
  std::vector<uint8_t> word(32, 0);
  word[0] = 0x3f;  // halt
  word[31] = 0x80;
  try {
    decode(isa, word, "x.bin");
    FAIL() << "reserved bits accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("reserved bits"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace npuforge::isa
