// The RTL stubs as plain --cc models (fast, no SystemC): the decoder against the C++ decoder
// on every opcode with random field values, the scratchpad against a byte-array reference
// under random traffic (bank conflicts included), and the planted stuck-address-bit variant.
#include <algorithm>
#include <array>
#include <bit>
#include <filesystem>
#include <vector>

#include <unistd.h>

#include <gtest/gtest.h>

#include "VRtlBankConflict.h"  // the RTL plants of npu_scratchpad (util/plant.h)
#include "VRtlScratchpadStuckBit.h"
#include "Vnpu_compute.h"
#include "Vnpu_decoder.h"
#include "Vnpu_decoder_extra.h"
#include "Vnpu_imem.h"
#include "Vnpu_scratchpad.h"
#include "isa/assembler.h"
#include "isa/instruction.h"
#include "isa/isa.h"
#include "isa/numerics.h"
#include "util/error.h"
#include "util/file_io.h"
#include "util/plant.h"
#include "util/rng.h"
#include "verilated.h"

namespace npuforge {
namespace {

template <class Dut>
void tick(Dut& dut) {
  dut.clk = 0;
  dut.eval();
  dut.clk = 1;
  dut.eval();
}

template <class Dut>
void reset(Dut& dut) {
  dut.rst_n = 0;
  tick(dut);
  tick(dut);
  dut.rst_n = 1;
}

template <class Dut>
struct DecoderBench {
  VerilatedContext ctx;
  Dut dut{&ctx};
  DecoderBench() { reset(dut); }

  void decode(std::span<const uint8_t> word) {
    for (unsigned i = 0; i < 8; ++i) {
      dut.instr[i] = uint32_t{word[4 * i]} | uint32_t{word[4 * i + 1]} << 8 |
                     uint32_t{word[4 * i + 2]} << 16 | uint32_t{word[4 * i + 3]} << 24;
    }
    dut.in_valid = 1;
    tick(dut);
    dut.in_valid = 0;
  }
};

// The .hex file the tools write loads with Verilog $readmemh: every word read back from the
// RTL memory equals the encoded instruction, bit for bit.
TEST(RtlImem, ReadmemhLoadsTheHexFileBitExactly) {
  const isa::Isa& isa = isa::builtin_isa();
  const auto prog = isa::assemble(isa,
                                   "load 0x40, ddr:0x1000, rows=4, row_bytes=256, stride=256, signal=compute\n"
                                   "gemm 0x1000, 0x40, 0x2000, m=4, n=16, k=64, scale=3, shift=8, relu, wait=load\n"
                                   "eltwise 0x3000, 0x1000, len=64, op=clip, lo=-5, hi=9\n"
                                   "store ddr:0x8000, 0x3000, rows=1, row_bytes=64\nhalt\n",
                                   "imem.s").instrs;
  const auto path = std::filesystem::temp_directory_path() / ("npuforge_imem_" + std::to_string(::getpid()) + ".hex");
  util::write_file(path, isa::to_readmemh(isa, prog, "rtl_stubs_test"));
  VerilatedContext ctx;
  const std::string arg = "+hex=" + path.string();
  const char* argv[] = {"rtl_stubs_test", arg.c_str()};
  ctx.commandArgs(2, argv);
  Vnpu_imem dut{&ctx};
  std::vector<uint8_t> expect(isa.width_bytes());
  for (size_t i = 0; i <= prog.size(); ++i) {
    dut.addr = static_cast<uint16_t>(i);
    tick(dut);
    std::fill(expect.begin(), expect.end(), uint8_t{0});  // past the program: zero words
    if (i < prog.size()) isa::encode(prog[i], expect);
    for (unsigned w = 0; w < 8; ++w) {
      const uint32_t want = uint32_t{expect[4 * w]} | uint32_t{expect[4 * w + 1]} << 8 |
                            uint32_t{expect[4 * w + 2]} << 16 | uint32_t{expect[4 * w + 3]} << 24;
      ASSERT_EQ(dut.word[w], want) << "instruction " << i << " word " << w;
    }
  }
  std::filesystem::remove(path);
}

// Slot by slot: the RTL decode of the last word against the C++ decode `cpp`.
template <class Dut>
void expect_same_decode(const DecoderBench<Dut>& b, const isa::Instruction& cpp) {
  const isa::InstrSpec& spec = *cpp.spec;
  ASSERT_TRUE(b.dut.out_valid);
  ASSERT_FALSE(b.dut.illegal) << spec.mnemonic;
  ASSERT_EQ(b.dut.queue_id, static_cast<unsigned>(spec.queue)) << spec.mnemonic;
  ASSERT_EQ(b.dut.field_count, spec.fields.size()) << spec.mnemonic;
  for (unsigned s = 0; s < isa::kMaxFields; ++s) {
    const uint32_t expected = s < spec.fields.size() ? cpp.raw[s] : 0;
    ASSERT_EQ(b.dut.fields[s], expected)
        << spec.mnemonic << " slot " << s << (s < spec.fields.size() ? " " + spec.fields[s].name : "");
  }
}

// Every instruction of `isa`, 1,000 words each with random field values.
template <class Dut>
void expect_agrees_on_every_opcode(const isa::Isa& isa) {
  DecoderBench<Dut> b;
  Rng rng(2024);
  std::vector<uint8_t> word(isa.width_bytes());
  uint64_t checked = 0;
  for (const isa::InstrSpec& spec : isa.instructions()) {
    for (int n = 0; n < 1000; ++n) {
      isa::Instruction in = isa::Instruction::make(spec);
      for (unsigned s = 1; s < spec.fields.size(); ++s) {
        const unsigned w = spec.fields[s].width;
        in.set(s, static_cast<uint32_t>(rng.next() & ((uint64_t{1} << w) - 1)));
      }
      isa::encode(in, word);
      const isa::Instruction cpp = isa::decode(isa, word, "random");
      b.decode(word);
      ASSERT_NO_FATAL_FAILURE(expect_same_decode(b, cpp));
      ++checked;
    }
  }
  EXPECT_EQ(checked, 1000 * isa.instructions().size());
}

// All 256 opcodes (other bits 0): `illegal` exactly for those outside `isa`.
template <class Dut>
void expect_flags_opcodes_outside(const isa::Isa& isa) {
  DecoderBench<Dut> b;
  std::vector<uint8_t> word(isa.width_bytes(), 0);
  unsigned illegal = 0;
  for (unsigned op = 0; op < 256; ++op) {
    word[0] = static_cast<uint8_t>(op);
    b.decode(word);
    EXPECT_EQ(bool(b.dut.illegal), isa.by_opcode(op) == nullptr) << "opcode " << op;
    illegal += b.dut.illegal;
  }
  EXPECT_EQ(illegal, 256 - isa.instructions().size());
}

TEST(RtlDecoder, AgreesWithCppDecoderOnEveryOpcodeWithRandomFields) {
  expect_agrees_on_every_opcode<Vnpu_decoder>(isa::builtin_isa());
}

TEST(RtlDecoder, FlagsEveryOpcodeOutsideTheIsa) { expect_flags_opcodes_outside<Vnpu_decoder>(isa::builtin_isa()); }

// Directed illegal stimulus: every opcode, with random words (reserved bits set almost
// surely), words with only field bits set, and words with exactly one reserved bit set. The
// RTL's `illegal` output agrees with the C++ decoder's error (unknown opcode or reserved
// bits) on every word, and legal words decode alike.
TEST(RtlDecoder, IllegalOutputAgreesWithCppDecoderErrorOnIllegalOpcodesAndReservedBits) {
  const isa::Isa& isa = isa::builtin_isa();
  ASSERT_EQ(isa.opcode_field().lsb, 0u);
  ASSERT_EQ(isa.opcode_field().width, 8u);
  DecoderBench<Vnpu_decoder> b;
  Rng rng(31);
  std::vector<uint8_t> word(isa.width_bytes());
  uint64_t illegal = 0, reserved = 0, legal = 0;
  for (unsigned op = 0; op < 256; ++op) {
    const isa::InstrSpec* spec = isa.by_opcode(op);
    std::vector<uint8_t> field_bits(word.size(), 0);
    std::vector<unsigned> spare;
    if (spec) {
      for (const auto& f : spec->fields)
        for (unsigned bit = f.lsb; bit <= f.msb(); ++bit) field_bits[bit / 8] |= static_cast<uint8_t>(1u << (bit % 8));
      for (unsigned bit = 0; bit < 8 * word.size(); ++bit)
        if (!(field_bits[bit / 8] >> (bit % 8) & 1)) spare.push_back(bit);
    }
    for (int n = 0; n < 30; ++n) {
      for (auto& x : word) x = static_cast<uint8_t>(rng.next());
      word[0] = static_cast<uint8_t>(op);
      if (spec && n % 3 != 0) {  // only field bits, plus one reserved bit for n % 3 == 2
        for (size_t i = 0; i < word.size(); ++i) word[i] &= field_bits[i];
        if (n % 3 == 2 && !spare.empty()) {
          const unsigned bit = spare[rng.below(spare.size())];
          word[bit / 8] |= static_cast<uint8_t>(1u << (bit % 8));
        }
      }
      bool cpp_error = false;
      isa::Instruction cpp;
      try {
        cpp = isa::decode(isa, word, "directed");
      } catch (const Error&) {
        cpp_error = true;
      }
      b.decode(word);
      ASSERT_TRUE(b.dut.out_valid);
      ASSERT_EQ(bool(b.dut.illegal), cpp_error) << "opcode " << op << " word " << n;
      if (cpp_error) {
        (spec ? reserved : illegal) += 1;
      } else {
        ASSERT_NO_FATAL_FAILURE(expect_same_decode(b, cpp)) << "opcode " << op << " word " << n;
        ++legal;
      }
    }
  }
  EXPECT_EQ(illegal, 30 * (256 - isa.instructions().size()));
  EXPECT_EQ(reserved, 20 * isa.instructions().size());  // every instruction has spare bits
  EXPECT_EQ(legal, 10 * isa.instructions().size());
}

// The ISA is data: tests/data/isa_extra.yaml adds `move2` (a copy of `move` under a new
// opcode). The same npu_decoder.sv, Verilated against the package generated from that file,
// decodes it like the C++ decoder of that ISA; nothing but the YAML differs.
const isa::Isa& extra_isa() {
  static const isa::Isa isa = isa::Isa::load_file(NPUFORGE_ISA_EXTRA_YAML);
  return isa;
}

TEST(RtlDecoderExtra, AgreesWithCppDecoderOnEveryOpcodeOfTheExtraIsa) {
  ASSERT_NE(extra_isa().by_mnemonic("move2"), nullptr);
  expect_agrees_on_every_opcode<Vnpu_decoder_extra>(extra_isa());
}

TEST(RtlDecoderExtra, NewOpcodeIsLegalThereAndIllegalInTheBuiltinDecoder) {
  const uint32_t op = extra_isa().require("move2").opcode;
  ASSERT_EQ(isa::builtin_isa().by_opcode(op), nullptr);
  expect_flags_opcodes_outside<Vnpu_decoder_extra>(extra_isa());
  DecoderBench<Vnpu_decoder> builtin;
  std::vector<uint8_t> word(extra_isa().width_bytes(), 0);
  word[0] = static_cast<uint8_t>(op);
  builtin.decode(word);
  EXPECT_TRUE(builtin.dut.illegal);
}

// Whole random words with the new opcode: the RTL flags the set spare bits as illegal, like
// the C++ decoder, and agrees with the C++ decode of the word with them cleared.
TEST(RtlDecoderExtra, DecodesRandomWordsOfTheNewOpcode) {
  const isa::Isa& isa = extra_isa();
  const isa::InstrSpec& spec = isa.require("move2");
  ASSERT_EQ(isa.opcode_field().lsb, 0u);  // the opcode is byte 0
  ASSERT_EQ(isa.opcode_field().width, 8u);
  std::vector<uint8_t> field_bits(isa.width_bytes(), 0);
  for (const auto& f : spec.fields)
    for (unsigned bit = f.lsb; bit <= f.msb(); ++bit) field_bits[bit / 8] |= static_cast<uint8_t>(1u << (bit % 8));
  DecoderBench<Vnpu_decoder_extra> b;
  Rng rng(99);
  std::vector<uint8_t> word(isa.width_bytes()), masked(isa.width_bytes());
  for (int n = 0; n < 2000; ++n) {
    for (auto& x : word) x = static_cast<uint8_t>(rng.next());
    word[0] = static_cast<uint8_t>(spec.opcode);
    for (size_t i = 0; i < word.size(); ++i) masked[i] = word[i] & field_bits[i];
    const isa::Instruction cpp = isa::decode(isa, masked, "random move2");
    ASSERT_EQ(cpp.spec, &spec);
    b.decode(word);
    ASSERT_EQ(bool(b.dut.illegal), word != masked) << "word " << n;
    EXPECT_THROW(isa::decode(isa, word, "random move2"), Error);
    b.decode(masked);
    ASSERT_NO_FATAL_FAILURE(expect_same_decode(b, cpp)) << "word " << n;
  }
}

// A byte-array model of npu_scratchpad: single-ported banks, write wins on a conflict. The
// geometry is the model's configuration register, loaded in reset (any the NPU config allows).
struct Geometry {
  unsigned banks = 8, bytes = 16;  // the default NPU config's
};
constexpr unsigned kBankBytes = 16;  // the default geometry, for the directed tests
constexpr unsigned kMaxLaneBytes = 256;  // npu_scratchpad MAX_BANK_BYTES: the data ports' width

template <class Dut>
struct SpadBench {
  VerilatedContext ctx;
  Dut dut{&ctx};
  Geometry g;
  explicit SpadBench(Geometry geo = {}) : g(geo) {
    dut.cfg_bank_bits = static_cast<uint8_t>(std::countr_zero(g.banks));
    dut.cfg_width_bits = static_cast<uint8_t>(std::countr_zero(g.bytes));
    reset(dut);
  }

  // `be`: bit i enables byte i of the bank word.
  void write(uint32_t word, const std::vector<uint8_t>& data, const std::vector<bool>& be) {
    dut.wr_en = 1;
    dut.wr_addr = word;
    for (unsigned i = 0; i < kMaxLaneBytes / 4; ++i) dut.wr_data[i] = 0;
    for (unsigned i = 0; i < kMaxLaneBytes / 32; ++i) dut.wr_be[i] = 0;
    for (unsigned i = 0; i < g.bytes; ++i) {
      dut.wr_data[i / 4] |= uint32_t{data[i]} << (8 * (i % 4));
      dut.wr_be[i / 32] |= uint32_t{be[i]} << (i % 32);
    }
  }
  void write(uint32_t word, const std::vector<uint8_t>& data) { write(word, data, std::vector<bool>(g.bytes, true)); }
  std::vector<uint8_t> rd_data() const {
    std::vector<uint8_t> out(g.bytes);
    for (unsigned i = 0; i < g.bytes; ++i) out[i] = static_cast<uint8_t>(dut.rd_data[i / 4] >> (8 * (i % 4)));
    return out;
  }
  uint64_t bank_bit(uint32_t word) const { return uint64_t{1} << (word % g.banks); }
};

// Random traffic on a small window of words (so that reads hit written data and banks
// collide often) against the byte-array reference, under one geometry.
void expect_matches_reference(Geometry g, int cycles) {
  SpadBench<Vnpu_scratchpad> b(g);
  const unsigned window = std::max(64u, 2 * g.banks);
  std::vector<std::vector<uint8_t>> ref(window, std::vector<uint8_t>(g.bytes, 0));
  Rng rng(7 + g.banks * 1000 + g.bytes);
  uint64_t conflicts = 0, reads = 0;
  for (int cycle = 0; cycle < cycles; ++cycle) {
    const bool wr = rng.chance(0.6), rd = rng.chance(0.6);
    // Same-bank pairs are made likely even with 64 banks: half the reads pick the write's bank.
    const uint32_t wa = static_cast<uint32_t>(rng.below(window));
    uint32_t ra = static_cast<uint32_t>(rng.below(window));
    if (rng.chance(0.5)) ra = (ra - ra % g.banks + wa % g.banks) % window;
    std::vector<uint8_t> data(g.bytes);
    std::vector<bool> be(g.bytes);
    for (unsigned i = 0; i < g.bytes; ++i) {
      data[i] = static_cast<uint8_t>(rng.next());
      be[i] = rng.chance(0.7);
    }
    b.dut.wr_en = 0;
    if (wr) b.write(wa, data, be);
    b.dut.rd_en = rd;
    b.dut.rd_addr = ra;
    const bool clash = wr && rd && wa % g.banks == ra % g.banks;
    const auto expected = ref[ra];  // a read sees the bank before this edge's write
    tick(b.dut);
    if (wr) {
      for (unsigned i = 0; i < g.bytes; ++i)
        if (be[i]) ref[wa][i] = data[i];
    }
    ASSERT_EQ(bool(b.dut.rd_valid), rd && !clash) << "cycle " << cycle;
    ASSERT_EQ(uint64_t{b.dut.conflict}, clash ? b.bank_bit(wa) : 0u) << "cycle " << cycle;
    if (rd && !clash) {
      ASSERT_EQ(b.rd_data(), expected) << "cycle " << cycle << " word " << ra;
      ++reads;
    }
    conflicts += clash;
  }
  EXPECT_GT(conflicts, uint64_t(cycles) / 40);  // the traffic really exercised the conflict path
  EXPECT_GT(reads, uint64_t(cycles) / 8);  // one bank: only cycles without a write serve a read
}

TEST(RtlScratchpad, MatchesReferenceUnderRandomTrafficWithConflicts) { expect_matches_reference({}, 20000); }

// The same model under other geometries of the NPU config's range (its configuration
// register, not a rebuild): one byte-wide bank, narrow banks, the widest and most banks.
TEST(RtlScratchpad, MatchesReferenceUnderNonDefaultGeometries) {
  for (const Geometry g : {Geometry{1, 64}, Geometry{32, 4}, Geometry{64, 256}, Geometry{2, 1}, Geometry{1, 1}}) {
    SCOPED_TRACE(testing::Message() << g.banks << " banks x " << g.bytes << " B");
    expect_matches_reference(g, 3000);
  }
}

// Words 0 and 8 share bank 0 with 8 banks and fall in banks 0 and 8 with 16: the conflict
// port follows the configured bank mapping.
TEST(RtlScratchpad, ConflictFollowsTheConfiguredBankMapping) {
  auto probe = [](Geometry g) {
    SpadBench<Vnpu_scratchpad> b(g);
    b.write(0, std::vector<uint8_t>(g.bytes, 0x44));
    b.dut.rd_en = 1;
    b.dut.rd_addr = 8;
    tick(b.dut);
    return std::pair<bool, uint64_t>(b.dut.rd_valid, b.dut.conflict);
  };
  EXPECT_EQ(probe({8, 16}), std::make_pair(false, uint64_t{1}));
  EXPECT_EQ(probe({16, 16}), std::make_pair(true, uint64_t{0}));
  EXPECT_EQ(probe({4, 1}), std::make_pair(false, uint64_t{1}));
  EXPECT_EQ(probe({64, 256}), std::make_pair(true, uint64_t{0}));
}

// Writes word A then word A + (1 << stuck bit) and reads A back.
template <class Dut>
std::vector<uint8_t> alias_probe() {
  SpadBench<Dut> b;
  const std::vector<uint8_t> first(kBankBytes, 0x11), second(kBankBytes, 0x22);
  const uint32_t a = 0x3;
  b.write(a, first);
  tick(b.dut);
  b.write(a | 1u << plant_info(PlantId::RtlScratchpadStuckBit).rtl.value, second);
  tick(b.dut);
  b.dut.wr_en = 0;
  b.dut.rd_en = 1;
  b.dut.rd_addr = a;
  tick(b.dut);
  EXPECT_TRUE(b.dut.rd_valid);
  return b.rd_data();
}

TEST(RtlScratchpad, StuckAddressBitVariantAliasesTwoWords) {
  const std::vector<uint8_t> first(kBankBytes, 0x11), second(kBankBytes, 0x22);
  EXPECT_EQ(alias_probe<Vnpu_scratchpad>(), first);
  EXPECT_EQ(alias_probe<VRtlScratchpadStuckBit>(), second);  // the planted bug
}

// Reset in the middle of traffic: on the reset edge rd_valid and conflict go to their
// documented reset values (0) although a read and a colliding write are driven, and the
// memory keeps its contents (the README: reset clears rd_valid and conflict, not the memory).
TEST(RtlScratchpad, ResetMidTrafficGivesTheDocumentedResetValuesAndKeepsTheMemory) {
  SpadBench<Vnpu_scratchpad> b;
  const std::vector<uint8_t> data(kBankBytes, 0x5a);
  b.write(9, data);
  tick(b.dut);
  for (int round = 0; round < 3; ++round) {
    b.write(1, data);  // bank 1, as the read below: a conflict if not in reset
    b.dut.rd_en = 1;
    b.dut.rd_addr = 9;
    b.dut.rst_n = 0;
    tick(b.dut);
    EXPECT_FALSE(b.dut.rd_valid) << round;
    EXPECT_EQ(b.dut.conflict, 0u) << round;
    b.dut.rst_n = 1;
    b.dut.wr_en = 0;
    tick(b.dut);  // out of reset: the read is served
    ASSERT_TRUE(b.dut.rd_valid) << round;
    EXPECT_EQ(b.rd_data(), data) << round;
    b.write(1, data);  // and now the same collision flags bank 1
    tick(b.dut);
    EXPECT_FALSE(b.dut.rd_valid) << round;
    EXPECT_EQ(b.dut.conflict, uint64_t{1} << 1) << round;
    b.dut.wr_en = 0;
  }
}

// The planted arbitration bug: the read that lost its bank is reported served.
TEST(RtlScratchpad, ConflictVariantServesTheLosingRead) {
  auto probe = [](auto& b) {
    b.write(2, std::vector<uint8_t>(kBankBytes, 0x33));
    b.dut.rd_en = 1;
    b.dut.rd_addr = 10;  // bank 2 too
    tick(b.dut);
    return std::pair<bool, uint64_t>(b.dut.rd_valid, b.dut.conflict);
  };
  SpadBench<Vnpu_scratchpad> good;
  SpadBench<VRtlBankConflict> bad;
  EXPECT_EQ(probe(good), std::make_pair(false, uint64_t{1} << 2));
  EXPECT_EQ(probe(bad), std::make_pair(true, uint64_t{1} << 2));
}

// npu_compute against a direct reference of the ISA text (isa::requant for the rounding and
// clamp): random GEMM tiles with bias and per-column requant, and every ELTWISE op.
constexpr unsigned kRows = NPUFORGE_COMPUTE_ROWS, kCols = NPUFORGE_COMPUTE_COLS, kLanes = NPUFORGE_COMPUTE_LANES;

template <size_t N>
void put(VlWide<N>& w, unsigned byte, uint8_t v) {
  w[byte / 4] = (w[byte / 4] & ~(0xffu << (8 * (byte % 4)))) | uint32_t{v} << (8 * (byte % 4));
}
template <size_t N>
uint8_t get(const VlWide<N>& w, unsigned byte) {
  return static_cast<uint8_t>(w[byte / 4] >> (8 * (byte % 4)));
}

TEST(RtlCompute, GemmTilesMatchTheIsaArithmetic) {
  static_assert(kRows == 16 && kCols == 16, "the bench below packs 16 x 16 tiles");
  VerilatedContext ctx;
  Vnpu_compute dut{&ctx};
  reset(dut);
  Rng rng(21);
  for (int trial = 0; trial < 40; ++trial) {
    const unsigned k = 1 + static_cast<unsigned>(rng.below(40));
    std::vector<int8_t> a(kRows * k), bm(k * kCols);
    for (auto& x : a) x = static_cast<int8_t>(rng.next());
    for (auto& x : bm) x = static_cast<int8_t>(rng.next());
    std::array<int32_t, kCols> bias{};
    std::array<isa::RequantParams, kCols> rq{};
    const bool relu = rng.chance(0.5);
    for (unsigned c = 0; c < kCols; ++c) {
      bias[c] = static_cast<int32_t>(rng.next());
      if (rng.chance(0.5)) bias[c] %= 5000;
      rq[c].scale = rng.chance(0.3) ? static_cast<uint32_t>(rng.next()) : static_cast<uint32_t>(rng.below(1 << 16));
      rq[c].shift = static_cast<uint32_t>(rng.below(64));
      rq[c].relu = relu;
      dut.bias[c] = static_cast<uint32_t>(bias[c]);
      dut.scale[c] = rq[c].scale;
    }
    for (unsigned w = 0; w < 3; ++w) dut.shift[w] = 0;
    for (unsigned c = 0; c < kCols; ++c) dut.shift[(6 * c) / 32] |= rq[c].shift << ((6 * c) % 32);
    for (unsigned c = 0; c < kCols; ++c)  // a shift field straddling two words
      if ((6 * c) % 32 > 26) dut.shift[(6 * c) / 32 + 1] |= rq[c].shift >> (32 - (6 * c) % 32);
    dut.relu = relu;
    for (unsigned p = 0; p < k; ++p) {
      for (unsigned r = 0; r < kRows; ++r) put(dut.a_col, r, static_cast<uint8_t>(a[r * k + p]));
      for (unsigned c = 0; c < kCols; ++c) put(dut.b_row, c, static_cast<uint8_t>(bm[p * kCols + c]));
      dut.mac_en = 1;
      dut.mac_first = p == 0;
      tick(dut);
    }
    dut.mac_en = 0;
    dut.gemm_out_req = 1;
    tick(dut);
    dut.gemm_out_req = 0;
    ASSERT_TRUE(dut.gemm_valid);
    for (unsigned r = 0; r < kRows; ++r) {
      for (unsigned c = 0; c < kCols; ++c) {
        uint32_t acc = static_cast<uint32_t>(bias[c]);
        for (unsigned p = 0; p < k; ++p) acc += static_cast<uint32_t>(int32_t{a[r * k + p]} * bm[p * kCols + c]);
        const int8_t want = isa::requant(static_cast<int32_t>(acc), rq[c]);
        ASSERT_EQ(static_cast<int8_t>(get(dut.gemm_out, r * kCols + c)), want)
            << "trial " << trial << " cell " << r << "," << c << " acc " << static_cast<int32_t>(acc) << " scale "
            << rq[c].scale << " shift " << rq[c].shift;
      }
    }
  }
}

TEST(RtlCompute, EltwiseLanesMatchTheIsaArithmetic) {
  VerilatedContext ctx;
  Vnpu_compute dut{&ctx};
  reset(dut);
  Rng rng(22);
  // The unit takes the ISA's codes (npu_isa_pkg): every named value of eltwise.op, by name.
  const auto& ops = isa::builtin_isa().field("eltwise", "op").enum_values;
  for (int trial = 0; trial < 400; ++trial) {
    const auto& [op, code] = ops[static_cast<size_t>(trial) % ops.size()];
    const isa::RequantParams rq{static_cast<uint32_t>(rng.below(1 << 16)), static_cast<uint32_t>(rng.below(41)), false};
    const auto lo = static_cast<int8_t>(rng.next()), hi = static_cast<int8_t>(rng.next());
    std::array<int8_t, kLanes> a{}, bv{};
    for (unsigned l = 0; l < kLanes; ++l) {
      a[l] = static_cast<int8_t>(rng.next());
      bv[l] = static_cast<int8_t>(rng.next());
      put(dut.elt_a, l, static_cast<uint8_t>(a[l]));
      put(dut.elt_b, l, static_cast<uint8_t>(bv[l]));
    }
    dut.elt_op = static_cast<uint8_t>(code);
    dut.elt_scale = rq.scale;
    dut.elt_shift = rq.shift;
    dut.elt_lo = static_cast<uint8_t>(lo);
    dut.elt_hi = static_cast<uint8_t>(hi);
    dut.elt_en = 1;
    tick(dut);
    ASSERT_TRUE(dut.elt_valid);
    for (unsigned l = 0; l < kLanes; ++l) {
      int8_t want = 0;
      if (op == "add") want = isa::requant(int64_t{a[l]} + bv[l], rq);
      else if (op == "mul") want = isa::requant(int64_t{a[l]} * bv[l], rq);
      else if (op == "relu") want = std::max<int8_t>(a[l], 0);
      else if (op == "clip") want = static_cast<int8_t>(std::clamp<int>(a[l], lo, std::max(lo, hi)));
      else FAIL() << "eltwise op '" << op << "' has no reference here";
      ASSERT_EQ(static_cast<int8_t>(get(dut.elt_out, l)), want) << "trial " << trial << " op " << op << " lane " << l;
    }
  }
  dut.elt_en = 0;
}

}  // namespace
}  // namespace npuforge
