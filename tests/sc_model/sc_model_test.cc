// The SystemC/TLM model and its --rtl mode. SystemC elaborates once per process, so every
// TEST runs one simulation (several NPUs side by side via run_together) and each TEST needs a
// process of its own: ctest starts one per TEST (gtest_discover_tests); run by hand with more
// than one test selected, main() below re-runs this binary once per test.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "gen/generator.h"
#include "gen/profile.h"
#include "util/error.h"
#include "sim/golden.h"
#include "sim/sc_model/sc_backend.h"
#include "sim_test_util.h"

namespace npuforge::sim::sc_model {
namespace {

using testing::buf;
using testing::gemm_buffers;
using testing::gemm_program;
using testing::make_program;

const Semantics& sem() {
  static const Semantics s(isa::builtin_isa());
  return s;
}

// main() gives every test its own process; reaching a used one is a harness bug, not a skip.
#define REQUIRE_FRESH_PROCESS() \
  ASSERT_TRUE(can_simulate()) << "one SystemC simulation per process: run one test per process"

// Element-wise add, max pool, move, strided load and store.
bundle::Program vector_program() {
  return make_program(
      ".equ %x, 0x0000\n.equ %y, 0x0400\n.equ %z, 0x0800\n.equ %w, 0x0c00\n"
      "load %x, ddr:0x0, rows=4, row_bytes=64, stride=96, signal=compute\n"
      "eltwise %y, %x, b=%x, len=256, op=add, scale=3, shift=2, wait=load\n"
      "pool %z, %y, h=8, w=8, c=4, window_h=2, window_w=2, stride_h=2, stride_w=2, mode=max\n"
      "move %w, %z, len=64, signal=store\n"
      "store ddr:0x2000, %w, rows=2, row_bytes=32, stride=48, wait=compute\n"
      "halt\n",
      {buf("x", 0x0000, 256, 0, 1), buf("y", 0x0400, 256, 1, 2), buf("z", 0x0800, 64, 2, 3),
       buf("w", 0x0c00, 64, 3, 4)},
      0x200, 11);
}

// A 3x3 convolution as im2col + GEMM with ReLU.
bundle::Program conv_program() {
  return make_program(
      ".equ %img, 0x1000\n.equ %col, 0x1040\n.equ %wt, 0x1200\n.equ %out, 0x1400\n"
      "load %img, ddr:0x100, rows=1, row_bytes=32, stride=32\n"
      "load %wt, ddr:0x140, rows=1, row_bytes=144, stride=144, signal=compute\n"
      "im2col %col, %img, h=4, w=4, c=2, kh=3, kw=3, pad_top=1, pad_left=1, pad_bottom=1, pad_right=1, wait=load\n"
      "gemm %out, %col, %wt, m=16, n=8, k=18, scale=5, shift=6, relu, signal=store\n"
      "store ddr:0x3000, %out, rows=1, row_bytes=128, stride=128, wait=compute\n"
      "halt\n",
      {buf("img", 0x1000, 64, 0, 2), buf("wt", 0x1200, 192, 1, 3), buf("col", 0x1040, 320, 2, 3),
       buf("out", 0x1400, 128, 3, 4)},
      0x200, 12);
}

// Odd sizes and unaligned operands: partial scratchpad words on the RTL port (byte enables).
bundle::Program odd_program() {
  return make_program(
      ".equ %p, 0x0000\n.equ %q, 0x0100\n"
      "load %p, ddr:0x3, rows=3, row_bytes=37, stride=41, signal=compute\n"
      "move %q+7, %p, len=111, wait=load, signal=store\n"
      "store ddr:0x405, %q+7, rows=3, row_bytes=37, stride=50, wait=compute\n"
      "halt\n",
      {buf("p", 0x0000, 128, 0, 1), buf("q", 0x0100, 128, 1, 2)}, 0x100, 14);
}

// `tiles` x (load -> relu -> store): the three queues overlap across tiles.
bundle::Program pipeline_program(int tiles) {
  std::ostringstream s;
  std::vector<bundle::MemBuffer> buffers;
  for (int t = 0; t < tiles; ++t) {
    const uint32_t x = 0x200 * t, y = 0x4000 + 0x200 * t;
    s << "load " << x << ", ddr:" << 0x100 * t << ", rows=2, row_bytes=128, stride=128, signal=compute\n"
      << "eltwise " << y << ", " << x << ", len=256, op=relu, wait=load, signal=store\n"
      << "store ddr:" << 0x8000 + 0x100 * t << ", " << y << ", rows=1, row_bytes=256, stride=256, wait=compute\n";
    buffers.push_back(buf("x" + std::to_string(t), x, 256, 3 * t, 3 * t + 1));
    buffers.push_back(buf("y" + std::to_string(t), y, 256, 3 * t + 1, 3 * t + 2));
  }
  s << "halt\n";
  return make_program(s.str(), buffers, 0x100 * tiles, 13);
}

std::vector<uint8_t> golden_ddr(const bundle::Program& p) { return run_golden(p, sem()).ddr; }

// A store reading 4 KiB while a load writes 4 KiB `16 * d` bytes into another buffer: the RTL
// ports collide on a bank or not, depending on the phase of the two streams.
bundle::Program collision_program(int d) {
  return make_program(
      ".equ %s, 0x0000\n.equ %t, 0x1000\n"
      "load %s, ddr:0x0, rows=1, row_bytes=4096, stride=4096, signal=store\n"
      "load %t+" + std::to_string(16 * d) + ", ddr:0x1000, rows=1, row_bytes=4096, stride=4096\n"
      "store ddr:0x4000, %s, rows=1, row_bytes=4096, stride=4096, wait=load\n"
      "halt\n",
      {buf("s", 0x0000, 4096, 0, 2), buf("t", 0x1000, 4096 + 128, 1, 1)}, 0x2000, 20 + d);
}

TEST(ScModel, TlmAndRtlGiveTheGoldenDdrImageOnFivePrograms) {
  REQUIRE_FRESH_PROCESS();
  std::vector<bundle::Program> programs;
  programs.push_back(make_program(gemm_program(), gemm_buffers()));
  programs.push_back(vector_program());
  programs.push_back(conv_program());
  programs.push_back(pipeline_program(4));
  programs.push_back(odd_program());
  std::vector<std::unique_ptr<Checkers>> checks;
  std::vector<ScJob> jobs;
  for (const bundle::Program& p : programs) {
    for (SramModel m : {SramModel::Tlm, SramModel::Rtl}) {
      checks.push_back(std::make_unique<Checkers>(p, sem()));
      ScOptions o;
      o.sram = m;
      jobs.push_back({&p, checks.back().get(), o});
    }
  }
  const std::vector<ScOutput> out = run_together(sem(), jobs);
  for (size_t k = 0; k < jobs.size(); ++k) {
    const bundle::Program& p = *jobs[k].program;
    const RunResult& r = out[k].result;
    SCOPED_TRACE("program " + std::to_string(k / 2) + (k % 2 ? " rtl" : " tlm"));
    EXPECT_TRUE(r.completed);
    EXPECT_EQ(r.instructions, p.instrs.size());
    EXPECT_TRUE(check_ddr(p, sem(), golden_ddr(p), r.ddr, "golden", *checks[k]));
    EXPECT_TRUE(checks[k]->clean()) << checks[k]->summary();
    for (unsigned q = 0; q < isa::kNumQueues; ++q) EXPECT_GT(r.busy_cycles[q], 0u) << "queue " << q;
    if (k % 2 == 1) {  // RTL: same DDR and SRAM as TLM, every word decoded alike
      EXPECT_EQ(r.ddr, out[k - 1].result.ddr);
      EXPECT_EQ(r.sram, out[k - 1].result.sram);
      EXPECT_GE(r.cycles, out[k - 1].result.cycles);  // the RTL port moves 16 B per cycle
      EXPECT_GT(out[k].stats.sram_words, 0u);
      EXPECT_EQ(out[k].stats.decoded_words, p.instrs.size());
      EXPECT_EQ(out[k].stats.decoder_mismatches, 0u);
    }
  }
}

// ScOptions::images off (the regression worker): no images are built, the final DDR is handed
// over as memory over the program's image, and comparing it with the golden memory gives
// the same verdict and finding as the images, for clean programs and a planted short store.
TEST(ScModel, ImagesOffHandsOverTheFinalDdrComparedLikeTheImages) {
  REQUIRE_FRESH_PROCESS();
  std::vector<bundle::Program> programs;
  programs.push_back(vector_program());
  programs.push_back(conv_program());
  programs.push_back(odd_program());
  std::vector<std::unique_ptr<Checkers>> checks;
  std::vector<ScJob> jobs;
  for (const bundle::Program& p : programs) {
    for (bool plant : {false, true}) {
      for (bool images : {true, false}) {
        checks.push_back(std::make_unique<Checkers>(p, sem()));
        ScOptions o;
        o.images = images;
        if (plant) o.plant = parse_plant("model-store-short");
        jobs.push_back({&p, checks.back().get(), o});
      }
    }
  }
  std::vector<ScOutput> out = run_together(sem(), jobs);
  size_t mismatches = 0;
  for (size_t k = 0; k < jobs.size(); k += 2) {
    const bundle::Program& p = *jobs[k].program;
    SCOPED_TRACE("job " + std::to_string(k));
    ASSERT_FALSE(out[k].ddr.has_value());
    ASSERT_TRUE(out[k + 1].ddr.has_value());
    EXPECT_TRUE(out[k + 1].result.ddr.empty());
    EXPECT_TRUE(out[k + 1].result.sram.empty());
    EXPECT_TRUE(bundle::compare_images(out[k + 1].ddr->image(), out[k].result.ddr).total_differing == 0);
    const GoldenMemory golden = run_golden_memory(p, sem());
    Checkers from_images(p, sem()), from_memory(p, sem());
    const bool same = check_ddr(p, sem(), golden_ddr(p), out[k].result.ddr, "golden", from_images);
    EXPECT_EQ(check_ddr(p, sem(), golden.memory.ddr, *out[k + 1].ddr, "golden", from_memory), same);
    ASSERT_EQ(from_memory.findings().size(), from_images.findings().size());
    for (size_t f = 0; f < from_images.findings().size(); ++f)
      EXPECT_EQ(format(from_memory.findings()[f]), format(from_images.findings()[f]));
    const bool planted = (k / 2) % 2 == 1;
    if (!planted) {
      EXPECT_TRUE(same);
    }
    mismatches += !same;
  }
  EXPECT_GT(mismatches, 0u);  // a planted short store changed the DDR: the comparison can fail
}

// A store reading 4 KiB while a load writes 4 KiB: the RTL ports collide on a bank, the
// adapter re-issues the dropped reads, and the data stays right. The phase of the two
// streams decides whether banks collide, so eight word offsets of the load cover all phases.
TEST(ScModel, RtlBankConflictsAreRetriedWithoutCorruption) {
  REQUIRE_FRESH_PROCESS();
  std::vector<bundle::Program> programs;
  for (int d = 0; d < 8; ++d) {
    programs.push_back(collision_program(d));
  }
  std::vector<std::unique_ptr<Checkers>> checks;
  std::vector<ScJob> jobs;
  for (const bundle::Program& p : programs) {
    checks.push_back(std::make_unique<Checkers>(p, sem()));
    ScOptions o;
    o.sram = SramModel::Rtl;
    jobs.push_back({&p, checks.back().get(), o});
  }
  const auto out = run_together(sem(), jobs);
  uint64_t conflicts = 0;
  for (size_t k = 0; k < jobs.size(); ++k) {
    const GoldenResult g = run_golden(programs[k], sem());
    EXPECT_EQ(out[k].result.ddr, g.ddr) << k;
    EXPECT_EQ(out[k].result.sram, g.sram) << k;
    conflicts += out[k].stats.sram_bank_conflicts;
  }
  EXPECT_GT(conflicts, 0u);
}

TEST(ScModel, TlmTimingMatchesTheSequentialModelAndQueuesOverlap) {
  REQUIRE_FRESH_PROCESS();
  const bundle::Program p = pipeline_program(6);
  Checkers seq_checks(p, sem());
  const RunResult seq = SequentialBackend(sem()).run(p, seq_checks);
  Checkers checks(p, sem());
  ScBackend backend(sem());
  const RunResult r = backend.run(p, checks);
  EXPECT_TRUE(checks.clean()) << checks.summary();
  EXPECT_EQ(r.cycles, seq.cycles);
  EXPECT_EQ(r.busy_cycles, seq.busy_cycles);
  // Concurrency: the run is shorter than the queues' work back to back.
  EXPECT_LT(r.cycles, r.busy_cycles[0] + r.busy_cycles[1] + r.busy_cycles[2]);
}

TEST(ScModel, StuckAddressBitScratchpadFailsTheDdrCompare) {
  REQUIRE_FRESH_PROCESS();
  const uint32_t alias = static_cast<uint32_t>(stuck_bit_alias_bytes(isa::NpuConfig{}));
  ASSERT_GE(alias, 0x100u);
  const bundle::Program p = make_program(
      ".equ %a, 0\n.equ %b, " + std::to_string(alias) + "\n"
      "load %a, ddr:0x0, rows=1, row_bytes=256, stride=256\n"
      "load %b, ddr:0x100, rows=1, row_bytes=256, stride=256, signal=store\n"
      "store ddr:0x1000, %a, rows=1, row_bytes=256, stride=256, wait=load\n"
      "store ddr:0x1100, %b, rows=1, row_bytes=256, stride=256\n"
      "halt\n",
      {buf("a", 0, 256, 0, 2), buf("b", alias, 256, 1, 3)}, 0x200, 5);
  Checkers good_checks(p, sem()), bad_checks(p, sem());
  ScOptions good, bad;
  good.sram = bad.sram = SramModel::Rtl;
  bad.plant = Plant{PlantId::RtlScratchpadStuckBit};
  const std::vector<ScJob> jobs = {{&p, &good_checks, good}, {&p, &bad_checks, bad}};
  const auto out = run_together(sem(), jobs);
  const auto expected = golden_ddr(p);
  EXPECT_TRUE(check_ddr(p, sem(), expected, out[0].result.ddr, "golden", good_checks));
  EXPECT_TRUE(good_checks.clean()) << good_checks.summary();
  EXPECT_FALSE(check_ddr(p, sem(), expected, out[1].result.ddr, "golden", bad_checks));
  ASSERT_EQ(bad_checks.count(FindingKind::DdrMismatch), 1u) << bad_checks.summary();
  EXPECT_EQ(bad_checks.findings().back().addr, 0x1000u);  // %a's store carries %b's bytes
}

// The rtl-mismatch finding fires on a decoder with a planted field bug, names the
// instruction, and stays silent with the real decoder on the same program.
TEST(ScModel, PlantedDecoderBugIsAnRtlMismatchFinding) {
  REQUIRE_FRESH_PROCESS();
  const bundle::Program p = make_program(gemm_program(), gemm_buffers());
  Checkers good_checks(p, sem()), bad_checks(p, sem());
  ScOptions good, bad;
  good.sram = bad.sram = SramModel::Rtl;
  bad.plant = Plant{PlantId::RtlDecoderFieldBit};
  const std::vector<ScJob> jobs = {{&p, &good_checks, good}, {&p, &bad_checks, bad}};
  const auto out = run_together(sem(), jobs);
  EXPECT_TRUE(good_checks.clean()) << good_checks.summary();
  // Every instruction with a field of its own (all but halt) decodes wrongly.
  EXPECT_EQ(bad_checks.count(FindingKind::RtlMismatch), p.instrs.size() - 1) << bad_checks.summary();
  ASSERT_FALSE(bad_checks.findings().empty());
  EXPECT_NE(format(bad_checks.findings().front()).find("[rtl/rtl-mismatch] #0"), std::string::npos)
      << format(bad_checks.findings().front());
  EXPECT_EQ(out[1].stats.decoder_mismatches, p.instrs.size() - 1);
}

TEST(ScModel, MissingTokenRacesAndTheHazardCheckerFires) {
  REQUIRE_FRESH_PROCESS();
  const bundle::Program good = make_program(gemm_program(), gemm_buffers());
  // load b no longer signals, gemm no longer waits: it reads b before the DMA wrote it.
  const bundle::Program bad = make_program(gemm_program(0x000, 0x080, 0x100, "signal=store", "wait=compute", "signal=none"),
                                   gemm_buffers());
  Checkers good_checks(good, sem()), bad_checks(bad, sem());
  const std::vector<ScJob> jobs = {{&good, &good_checks, {}}, {&bad, &bad_checks, {}}};
  const auto out = run_together(sem(), jobs);
  EXPECT_TRUE(check_ddr(good, sem(), golden_ddr(good), out[0].result.ddr, "golden", good_checks));
  EXPECT_TRUE(good_checks.clean()) << good_checks.summary();
  EXPECT_TRUE(out[1].result.completed);
  EXPECT_GT(bad_checks.count(FindingKind::Hazard), 0u) << bad_checks.summary();
  // The race really happened in the concurrent model: the result differs from program order.
  EXPECT_NE(out[1].result.ddr, golden_ddr(bad));
}

// Runs two programs whose DMAs race with a write to their source (no token orders them):
// the checkers see the races, and each DMA moved its source as it was when it started (the
// golden model's DDR).
void expect_racing_dmas_move_their_start_bytes(const bundle::Program& load_clobbered, const bundle::Program& store_clobbered) {
  Checkers load_checks(load_clobbered, sem()), store_checks(store_clobbered, sem());
  const std::vector<ScJob> jobs = {{&load_clobbered, &load_checks, {}}, {&store_clobbered, &store_checks, {}}};
  const auto out = run_together(sem(), jobs);
  ASSERT_TRUE(out[0].result.completed);
  ASSERT_TRUE(out[1].result.completed);
  // The races are real (the checkers see them) ...
  EXPECT_FALSE(load_checks.clean());
  EXPECT_FALSE(store_checks.clean());
  // ... and each DMA moved its source as it was when it started.
  EXPECT_EQ(out[0].result.ddr, golden_ddr(load_clobbered));
  EXPECT_EQ(out[1].result.ddr, golden_ddr(store_clobbered));
}

// A DMA moves its bytes with one copy at its end when nothing writes its source meanwhile
// (engine.cc, Plan::Deferred); a write that does must not change what it moves: the bytes are
// those of its start, as in program order (the golden model). Two races without tokens:
//  - `load_clobbered`: a 16-byte store writes DDR inside a 4 KiB load's source mid-flight
//    (cycle ~53 of ~178); the loaded bytes are stored again afterwards;
//  - `store_clobbered`: a move writes into a 4 KiB store's scratchpad source mid-flight (the
//    move waits for a small load that runs alongside the store).
// A model that copied the source at the DMA's end without taking a copy first on such a
// write stores the clobbered bytes, and the DDR differs from the golden model's.
TEST(ScModel, ADmaMovesItsSourceAsItWasAtItsStartWhenAnotherQueueWritesItMidFlight) {
  REQUIRE_FRESH_PROCESS();
  const bundle::Program load_clobbered = make_program(
      ".equ %a, 0x0000\n.equ %b, 0x1000\n"
      "load %a, ddr:0x0, rows=1, row_bytes=4096, stride=4096, signal=store\n"
      "store ddr:0x10, %b, rows=1, row_bytes=16, stride=16\n"
      "store ddr:0x2000, %a, rows=1, row_bytes=4096, stride=4096, wait=load\n"
      "halt\n",
      {buf("a", 0x0000, 4096, 0, 2), buf("b", 0x1000, 16, 0, 1)}, 0x3000, 31);
  const bundle::Program store_clobbered = make_program(
      ".equ %a, 0x0000\n.equ %z, 0x1000\n.equ %c, 0x1100\n"
      "load %a, ddr:0x0, rows=1, row_bytes=4096, stride=4096, signal=store\n"
      "store ddr:0x2000, %a, rows=1, row_bytes=4096, stride=4096, wait=load\n"
      "load %z, ddr:0x1000, rows=1, row_bytes=16, stride=16, signal=compute\n"
      "move %a+0x40, %c, len=64, wait=load\n"
      "halt\n",
      {buf("a", 0x0000, 4096, 0, 3), buf("z", 0x1000, 16, 2, 3), buf("c", 0x1100, 64, 0, 3)}, 0x3000, 32);
  expect_racing_dmas_move_their_start_bytes(load_clobbered, store_clobbered);
}

// The same with gaps between the DDR rows (the deferred DMA moves its rows one by one and
// leaves the gaps as they were): a 4-row load whose DDR source a store writes mid-flight, in a
// row and in a gap, and a 4-row store with gaps whose scratchpad source a move writes
// mid-flight. A model that copied the rows at the end without taking a copy first, or wrote
// anything but the rows (the general path reads the gaps and writes them back), stores bytes
// the golden model does not.
TEST(ScModel, AStridedDmaMovesItsRowsAsTheyWereAtItsStartAndKeepsItsGaps) {
  REQUIRE_FRESH_PROCESS();
  const bundle::Program load_clobbered = make_program(
      ".equ %a, 0x0000\n.equ %b, 0x1000\n"
      "load %a, ddr:0x0, rows=4, row_bytes=1024, stride=1280, signal=store\n"
      "store ddr:0x10, %b, rows=1, row_bytes=16, stride=16\n"
      "store ddr:0x410, %b, rows=1, row_bytes=16, stride=16\n"
      "store ddr:0x2000, %a, rows=4, row_bytes=1024, stride=1100, wait=load\n"
      "halt\n",
      {buf("a", 0x0000, 4096, 0, 3), buf("b", 0x1000, 16, 0, 2)}, 0x4000, 33);
  const bundle::Program store_clobbered = make_program(
      ".equ %a, 0x0000\n.equ %z, 0x1000\n.equ %c, 0x1100\n"
      "load %a, ddr:0x0, rows=1, row_bytes=4096, stride=4096, signal=store\n"
      "store ddr:0x2000, %a, rows=4, row_bytes=1024, stride=1200, wait=load\n"
      "load %z, ddr:0x1000, rows=1, row_bytes=16, stride=16, signal=compute\n"
      "move %a+0x440, %c, len=64, wait=load\n"
      "halt\n",
      {buf("a", 0x0000, 4096, 0, 3), buf("z", 0x1000, 16, 2, 3), buf("c", 0x1100, 64, 0, 3)}, 0x4000, 34);
  expect_racing_dmas_move_their_start_bytes(load_clobbered, store_clobbered);
}

// The dispatcher executes the word it fetched, not the program's instruction: with one ROM
// bit flipped (the first load's destination one allocation unit off), the run reports the
// misplaced write and its DDR differs from the golden model's. A dispatcher that skipped the
// decode for every instruction that round-trips (no fetched-word check) would pass it.
TEST(ScModel, PlantedFetchBitFlipIsExecutedAsFetched) {
  REQUIRE_FRESH_PROCESS();
  const bundle::Program p = vector_program();
  Checkers clean_checks(p, sem()), flip_checks(p, sem());
  ScOptions flip;
  flip.plant = parse_plant("model-fetch-bit-flip");
  const std::vector<ScJob> jobs = {{&p, &clean_checks, {}}, {&p, &flip_checks, flip}};
  const auto out = run_together(sem(), jobs);
  EXPECT_TRUE(check_ddr(p, sem(), golden_ddr(p), out[0].result.ddr, "golden", clean_checks));
  EXPECT_TRUE(clean_checks.clean()) << clean_checks.summary();
  EXPECT_TRUE(out[1].result.completed);
  EXPECT_FALSE(flip_checks.clean());
  EXPECT_NE(out[1].result.ddr, out[0].result.ddr);
  EXPECT_FALSE(check_ddr(p, sem(), golden_ddr(p), out[1].result.ddr, "golden", flip_checks));
  // The first finding is the load's write past its buffer (instruction #0).
  ASSERT_FALSE(flip_checks.findings().empty());
  EXPECT_NE(format(flip_checks.findings().front()).find("#0"), std::string::npos)
      << format(flip_checks.findings().front());
}

TEST(ScModel, UnsatisfiedWaitEndsTheRunIncompleteInBothModes) {
  REQUIRE_FRESH_PROCESS();
  const bundle::Program p = make_program(gemm_program(0x000, 0x080, 0x100, "wait=load, signal=store", "wait=compute",
                                              "signal=none"),
                                 gemm_buffers());
  Checkers tlm_checks(p, sem()), rtl_checks(p, sem());
  ScOptions tlm, rtl;
  tlm.watchdog_cycles = rtl.watchdog_cycles = 2000;
  rtl.sram = SramModel::Rtl;
  const std::vector<ScJob> jobs = {{&p, &tlm_checks, tlm}, {&p, &rtl_checks, rtl}};
  const auto out = run_together(sem(), jobs);
  for (size_t k = 0; k < 2; ++k) {
    EXPECT_FALSE(out[k].result.completed) << k;
    EXPECT_EQ(out[k].result.instructions, 2u) << k;  // the two loads
  }
  EXPECT_GT(tlm_checks.count(FindingKind::Deadlock), 0u) << tlm_checks.summary();
}

// Generated programs: 50 seeds of each of the four shipped profiles (configs/gen/*.yaml) in
// TLM mode and the first 6 of them again with the RTL scratchpad and decoder, all side by side
// in one elaboration; each must complete clean and match the golden DDR, and the RTL decoder
// must agree with the C++ decoder on every word it decoded.
TEST(ScModel, GeneratedSeedsRunCleanInTlmAndASubsetInRtl) {
  REQUIRE_FRESH_PROCESS();
  const isa::Isa& isa = isa::builtin_isa();
  const isa::NpuConfig npu;
  constexpr int kSeedsPerProfile = 50, kRtlSeeds = 6;
  std::vector<bundle::Program> programs;
  for (const char* name : {"default", "near-full", "stress-fragment", "tiny-buffers"}) {
    const gen::Profile profile =
        gen::Profile::load_file(std::string(NPUFORGE_SOURCE_DIR "/configs/gen/") + name + ".yaml");
    for (uint64_t seed = 1; seed <= kSeedsPerProfile; ++seed) {
      gen::GenOptions go;
      go.seed = seed;
      go.length = 400;
      gen::GeneratedProgram g = gen::generate(isa, npu, profile, go);
      g.with_memmap();  // the generator's bundle, with its memory map
      bundle::Program p = std::move(g.bundle);
      p.name = std::string(name) + ":" + std::to_string(seed);
      programs.push_back(std::move(p));
    }
  }
  std::vector<std::unique_ptr<Checkers>> checks;
  std::vector<ScJob> jobs;
  for (size_t k = 0; k < programs.size() + kRtlSeeds; ++k) {
    const bundle::Program& p = programs[k % programs.size()];
    checks.push_back(std::make_unique<Checkers>(p, sem()));
    ScOptions o;
    o.sram = k < programs.size() ? SramModel::Tlm : SramModel::Rtl;
    jobs.push_back({&p, checks.back().get(), o});
  }
  const auto out = run_together(sem(), jobs);
  size_t decoder_jobs = 0;  // jobs whose fetched words went through the RTL decoder
  for (size_t k = 0; k < jobs.size(); ++k) {
    const bundle::Program& p = *jobs[k].program;
    const bool rtl = k >= programs.size();
    SCOPED_TRACE(p.name + (rtl ? " rtl" : " tlm"));
    EXPECT_TRUE(out[k].result.completed);
    EXPECT_TRUE(check_ddr(p, sem(), golden_ddr(p), out[k].result.ddr, "golden", *checks[k]));
    EXPECT_TRUE(checks[k]->clean()) << checks[k]->summary();
    if (!rtl) {
      EXPECT_EQ(out[k].stats.decoded_words, 0u);  // TLM mode has no decoder to compare
      continue;
    }
    decoder_jobs += out[k].stats.decoded_words > 0;
    EXPECT_EQ(out[k].stats.decoded_words, p.instrs.size());
    EXPECT_EQ(out[k].stats.decoder_mismatches, 0u);
  }
  EXPECT_EQ(decoder_jobs, size_t(kRtlSeeds));
}

// --rtl under bank geometries other than the default: the Verilated scratchpad
// loads the NPU config's geometry into its configuration register, so one model serves them
// all. Generated programs must run clean under --rtl with the same DDR as the TLM run and the
// golden model, the port monitor (its bank from the same geometry) must see no violation
// while bank conflicts do happen, and the planted arbitration bug is still caught there.
TEST(ScModel, RtlRunsCleanUnderNonDefaultBankGeometries) {
  REQUIRE_FRESH_PROCESS();
  const isa::Isa& isa = isa::builtin_isa();
  const gen::Profile profile = gen::Profile::load_file(std::string(NPUFORGE_SOURCE_DIR "/configs/gen/default.yaml"));
  struct Geo {
    uint32_t banks, width;
    uint64_t sram_bytes;  // 0: the default
  };
  std::vector<bundle::Program> programs;
  for (const Geo geo : {Geo{1, 64, 0}, Geo{32, 4, 0}, Geo{64, 256, uint64_t{2} << 20}, Geo{2, 1, 0}}) {
    isa::NpuConfig npu;
    npu.sram_banks = geo.banks;
    npu.bank_width_bytes = geo.width;
    if (geo.sram_bytes) npu.sram_bytes.value = geo.sram_bytes;
    for (uint64_t seed = 1; seed <= 2; ++seed) {
      gen::GenOptions go;
      go.seed = seed;
      go.length = 150;
      gen::GeneratedProgram g = gen::generate(isa, npu, profile, go);
      g.with_memmap();  // the generator's bundle, with its memory map
      bundle::Program p = std::move(g.bundle);
      p.name = std::to_string(geo.banks) + "x" + std::to_string(geo.width) + "B:" + std::to_string(seed);
      ASSERT_EQ(p.config.sram_banks, geo.banks);
      ASSERT_EQ(p.config.bank_width_bytes, geo.width);
      programs.push_back(std::move(p));
    }
  }
  std::vector<std::unique_ptr<Checkers>> checks;
  std::vector<ScJob> jobs;
  const std::pair<SramModel, Plant> models[] = {
      {SramModel::Tlm, {}}, {SramModel::Rtl, {}}, {SramModel::Rtl, Plant{PlantId::RtlBankConflict}}};
  for (const auto& [sram, plant] : models) {
    for (const bundle::Program& p : programs) {
      checks.push_back(std::make_unique<Checkers>(p, sem()));
      ScOptions o;
      o.sram = sram;
      o.plant = plant;
      jobs.push_back({&p, checks.back().get(), o});
    }
  }
  const auto out = run_together(sem(), jobs);
  const size_t n = programs.size();
  uint64_t conflicts = 0;
  size_t caught = 0;
  for (size_t k = 0; k < n; ++k) {
    const bundle::Program& p = programs[k];
    SCOPED_TRACE(p.name);
    for (size_t j : {k, n + k}) {
      EXPECT_TRUE(out[j].result.completed);
      EXPECT_TRUE(check_ddr(p, sem(), golden_ddr(p), out[j].result.ddr, "golden", *checks[j]));
      EXPECT_TRUE(checks[j]->clean()) << checks[j]->summary();
    }
    EXPECT_EQ(out[n + k].result.ddr, out[k].result.ddr) << "rtl vs tlm";
    EXPECT_EQ(out[n + k].stats.monitor_errors, 0u);
    conflicts += out[n + k].stats.sram_bank_conflicts;
    caught += !checks[2 * n + k]->clean();
  }
  EXPECT_GT(conflicts, 0u);  // the monitor saw conflicts under the configured mappings
  EXPECT_GT(caught, 0u) << "the planted conflict arbitration went unnoticed";
}

// Zero-length operands: a GEMM's bias and qp without has_bias/per_channel and an
// ELTWISE's b for relu and clip hold addresses past the SRAM (its field's maximum, one past
// the last byte). They are not accessed, so nothing may report them: the model's range check
// skips operands of zero bytes (npu_top.cc, `e.bytes > 0`; without it this test fails with
// out_of_range findings in both modes).
bundle::Program zero_length_program() {
  return make_program(
      ".equ %a, 0x000\n.equ %b, 0x100\n.equ %c, 0x200\n.equ %d, 0x300\n.equ %e, 0x400\n"
      "load %a, ddr:0x0, rows=1, row_bytes=64, stride=64\n"
      "load %b, ddr:0x40, rows=1, row_bytes=64, stride=64, signal=compute\n"
      "gemm %c, %a, %b, bias=0xffffff, qp=0xffffff, m=8, n=8, k=8, scale=3, shift=4, wait=load\n"
      "eltwise %d, %c, b=0xffffff, len=64, op=relu\n"
      "eltwise %e, %d, b=0x80000, len=64, op=clip, lo=-5, hi=9, signal=store\n"
      "store ddr:0x1000, %e, rows=1, row_bytes=64, stride=64, wait=compute\n"
      "halt\n",
      {buf("a", 0x000, 64, 0, 2), buf("b", 0x100, 64, 1, 2), buf("c", 0x200, 64, 2, 3), buf("d", 0x300, 64, 3, 4),
       buf("e", 0x400, 64, 4, 5)},
      0x100, 21);
}

// Maximum-length operands: one 65535-byte DMA row, 65535 one-byte rows, a GEMM with
// k = 65535 (its field maximum) and a store of 65535 rows.
bundle::Program max_length_program() {
  return make_program(
      ".equ %big, 0x0\n.equ %w, 0x10000\n.equ %o, 0x20000\n"
      "load %big, ddr:0x0, rows=1, row_bytes=65535, stride=65535, signal=store\n"
      "load %w, ddr:0x10000, rows=65535, row_bytes=1, stride=1, signal=compute\n"
      "gemm %o, %big, %w, m=1, n=1, k=65535, scale=1, shift=8, wait=load, signal=store\n"
      "store ddr:0x30000, %big, rows=65535, row_bytes=1, stride=1, wait=load\n"
      "store ddr:0x40000, %o, rows=1, row_bytes=1, stride=1, wait=compute\n"
      "halt\n",
      {buf("big", 0x0, 65535, 0, 3), buf("w", 0x10000, 65535, 1, 2), buf("o", 0x20000, 1, 2, 4)}, 0x20000, 22);
}

// The two programs above and generated `extremes` seeds, in TLM and (a few) RTL mode: every
// run completes clean and matches the golden DDR image.
TEST(ScModel, ZeroAndMaximumLengthOperandsRunCleanInTlmAndRtl) {
  REQUIRE_FRESH_PROCESS();
  const isa::Isa& isa = isa::builtin_isa();
  std::vector<bundle::Program> programs;
  programs.push_back(zero_length_program());
  programs.push_back(max_length_program());
  const gen::Profile profile = gen::Profile::load_file(std::string(NPUFORGE_SOURCE_DIR "/configs/gen/extremes.yaml"));
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    gen::GenOptions go;
    go.seed = seed;
    go.length = 300;
    gen::GeneratedProgram g = gen::generate(isa, isa::NpuConfig{}, profile, go);
    g.with_memmap();  // the generator's bundle, with its memory map
    bundle::Program p = std::move(g.bundle);
    p.name = "extremes:" + std::to_string(seed);
    programs.push_back(std::move(p));
  }
  constexpr size_t kRtl = 4;  // the two hand-written programs and two seeds
  std::vector<std::unique_ptr<Checkers>> checks;
  std::vector<ScJob> jobs;
  for (size_t k = 0; k < programs.size() + kRtl; ++k) {
    const bundle::Program& p = programs[k % programs.size()];
    checks.push_back(std::make_unique<Checkers>(p, sem()));
    ScOptions o;
    o.sram = k < programs.size() ? SramModel::Tlm : SramModel::Rtl;
    jobs.push_back({&p, checks.back().get(), o});
  }
  const auto out = run_together(sem(), jobs);
  for (size_t k = 0; k < jobs.size(); ++k) {
    const bundle::Program& p = *jobs[k].program;
    SCOPED_TRACE(p.name + (k >= programs.size() ? " rtl" : " tlm"));
    EXPECT_TRUE(out[k].result.completed);
    EXPECT_EQ(out[k].result.instructions, p.instrs.size());
    EXPECT_TRUE(check_ddr(p, sem(), golden_ddr(p), out[k].result.ddr, "golden", *checks[k]));
    EXPECT_TRUE(checks[k]->clean()) << checks[k]->summary();
  }
}

TEST(ScModel, TraceWritesAVcdWithTheRtlPins) {
  REQUIRE_FRESH_PROCESS();
  const auto path = std::filesystem::temp_directory_path() / "npuforge_sc_trace_test.vcd";
  std::filesystem::remove(path);
  const bundle::Program p = make_program(gemm_program(), gemm_buffers());
  Checkers checks(p, sem());
  ScOptions o;
  o.sram = SramModel::Rtl;
  o.trace_path = path.string();
  {
    ScBackend backend(sem(), o);
    EXPECT_TRUE(backend.run(p, checks).completed);
  }
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  for (const char* name : {"$var", "wr_en", "rd_data", "busy", "pc", "fields"})
    EXPECT_NE(text.str().find(name), std::string::npos) << name;
  std::filesystem::remove(path);
}

TEST(ScModel, FstTraceIsRejectedWithAMessage) {
  REQUIRE_FRESH_PROCESS();
  const bundle::Program p = make_program(gemm_program(), gemm_buffers());
  Checkers checks(p, sem());
  ScOptions o;
  o.trace_path = "out.fst";
  ScBackend backend(sem(), o);
  EXPECT_THROW(backend.run(p, checks), Error);
}

// Generated programs for the planted-variant tests: `count` seeds of the default profile.
std::vector<bundle::Program> generated_programs(int count, uint64_t length) {
  const isa::Isa& isa = isa::builtin_isa();
  const isa::NpuConfig npu;
  const gen::Profile profile = gen::Profile::load_file(std::string(NPUFORGE_SOURCE_DIR "/configs/gen/default.yaml"));
  std::vector<bundle::Program> programs;
  for (int seed = 1; seed <= count; ++seed) {
    gen::GenOptions go;
    go.seed = static_cast<uint64_t>(seed);
    go.length = length;
    gen::GeneratedProgram g = gen::generate(isa, npu, profile, go);
    g.with_memmap();  // the generator's bundle, with its memory map
    bundle::Program p = std::move(g.bundle);
    p.name = "default:" + std::to_string(seed);
    programs.push_back(std::move(p));
  }
  return programs;
}

// The RTL variants are the RTL plants of the catalogue: `--rtl-variant` takes their names and
// no other, and names them all when it refuses one.
TEST(ScModel, RtlVariantsAreTheCataloguesRtlPlants) {
  EXPECT_FALSE(parse_rtl_plant("none").any());
  size_t rtl = 0;
  for (const PlantInfo& p : plant_catalogue()) {
    if (p.layer != PlantLayer::Rtl) {
      EXPECT_THROW(parse_rtl_plant(p.name), Error) << p.name;
      continue;
    }
    ++rtl;
    EXPECT_EQ(parse_rtl_plant(p.name), Plant{p.id});
    EXPECT_FALSE(p.rtl.module.empty()) << p.name;
  }
  EXPECT_GE(rtl, 6u);
  try {
    parse_rtl_plant("rtl-nope");
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("rtl-mac-sign"), std::string::npos) << e.what();
  }
}

// Each RTL plant of the catalogue, side by side with the correct RTL on the same short
// generated programs (plus the bank-collision programs above for the arbitration bug): the
// correct RTL is clean and matches the golden DDR; the plant fails the golden compare or an
// rtl check.
class PlantedRtlVariant : public ::testing::TestWithParam<std::string> {};

TEST_P(PlantedRtlVariant, FailsTheGoldenOrRtlCheckAndTheCorrectRtlPasses) {
  REQUIRE_FRESH_PROCESS();
  const Plant variant = parse_rtl_plant(GetParam());
  std::vector<bundle::Program> programs = generated_programs(3, 120);
  for (int d = 0; d < 4; ++d) {  // a load writing while a store reads: bank collisions
    programs.push_back(collision_program(d));
  }
  std::vector<std::unique_ptr<Checkers>> checks;
  std::vector<ScJob> jobs;
  for (const bundle::Program& p : programs) {
    for (Plant v : {Plant{}, variant}) {
      checks.push_back(std::make_unique<Checkers>(p, sem()));
      ScOptions o;
      o.sram = SramModel::Rtl;
      o.plant = v;
      jobs.push_back({&p, checks.back().get(), o});
    }
  }
  const auto out = run_together(sem(), jobs);
  size_t caught = 0;
  uint64_t tiles = 0;
  for (size_t k = 0; k < jobs.size(); ++k) {
    const bundle::Program& p = *jobs[k].program;
    const bool planted = k % 2 == 1;
    const bool golden_ok = check_ddr(p, sem(), golden_ddr(p), out[k].result.ddr, "golden", *checks[k]);
    tiles += out[k].stats.compute_tiles;
    if (!planted) {
      SCOPED_TRACE(p.name + " correct RTL");
      EXPECT_TRUE(out[k].result.completed);
      EXPECT_TRUE(golden_ok);
      EXPECT_TRUE(checks[k]->clean()) << checks[k]->summary();
      EXPECT_EQ(out[k].stats.monitor_errors, 0u);
    } else if (!golden_ok || !checks[k]->clean()) {
      ++caught;
    }
  }
  EXPECT_GT(tiles, 0u) << "no GEMM/ELTWISE went through the RTL compute unit";
  EXPECT_GT(caught, 0u) << GetParam() << " survived every program";
}

// Every RTL plant of the catalogue: a new one is tested with no edit here.
std::vector<std::string> rtl_plant_names() {
  std::vector<std::string> names;
  for (const PlantInfo& p : plant_catalogue())
    if (p.layer == PlantLayer::Rtl) names.emplace_back(p.name);
  return names;
}

INSTANTIATE_TEST_SUITE_P(ScModel, PlantedRtlVariant, ::testing::ValuesIn(rtl_plant_names()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string name = info.param;
                           for (char& c : name) c = c == '-' ? '_' : c;
                           return name;
                         });

// A queue waits for a token nobody sends: the watchdog (deadlock_cycles from the NPU config)
// reports a `deadlock` naming the waiting queue and the token, and the run is incomplete, in
// TLM and RTL mode alike.
TEST(ScModel, WatchdogReportsATokenDeadlockNamingTheQueueAndToken) {
  REQUIRE_FRESH_PROCESS();
  bundle::Program p = make_program(gemm_program(0x000, 0x080, 0x100, "wait=load, signal=store", "wait=compute", "signal=none"),
                           gemm_buffers());
  p.config.deadlock_cycles = 5000;
  Checkers tlm_checks(p, sem()), rtl_checks(p, sem());
  ScOptions tlm, rtl;
  rtl.sram = SramModel::Rtl;
  const std::vector<ScJob> jobs = {{&p, &tlm_checks, tlm}, {&p, &rtl_checks, rtl}};
  const auto out = run_together(sem(), jobs);
  for (size_t k = 0; k < 2; ++k) {
    const Checkers& c = k ? rtl_checks : tlm_checks;
    SCOPED_TRACE(k ? "rtl" : "tlm");
    EXPECT_FALSE(out[k].result.completed);
    const Finding* watchdog = nullptr;
    for (const Finding& f : c.findings())
      if (f.kind == FindingKind::Deadlock && f.detail.find("watchdog") != std::string::npos) watchdog = &f;
    ASSERT_NE(watchdog, nullptr) << c.summary();
    EXPECT_NE(watchdog->detail.find("no instruction retired for 5000 cycles"), std::string::npos) << watchdog->detail;
    EXPECT_NE(watchdog->detail.find("gemm waits for a token from load"), std::string::npos) << watchdog->detail;
    EXPECT_NE(watchdog->detail.find("dispatch at"), std::string::npos) << watchdog->detail;
  }
}

// The compute unit runs a tile's cycles in zero time and then waits them out at once; with a
// trace open it waits per cycle instead. Both must give the same cycles, tiles and data, and
// the cycle count the adapter documents (GEMM: 1 reset cycle, then ceil(m/ROWS) *
// ceil(n/COLS) * k + 1; ELTWISE: ceil(len/LANES)).
TEST(ScModel, RtlComputeRunsTheSameCyclesWithAndWithoutAPerCycleTrace) {
  REQUIRE_FRESH_PROCESS();
  const auto path = std::filesystem::temp_directory_path() / "npuforge_sc_compute_trace_test.vcd";
  std::filesystem::remove(path);
  const std::vector<bundle::Program> programs = {conv_program(), vector_program()};
  std::vector<std::unique_ptr<Checkers>> checks;
  std::vector<ScJob> jobs;
  for (const bundle::Program& p : programs) {
    for (bool traced : {false, true}) {
      checks.push_back(std::make_unique<Checkers>(p, sem()));
      ScOptions o;
      o.sram = SramModel::Rtl;
      if (traced && &p == &programs[0]) o.trace_path = path.string();
      jobs.push_back({&p, checks.back().get(), o});
    }
  }
  const auto out = run_together(sem(), jobs);
  for (size_t k = 0; k < jobs.size(); ++k) {
    SCOPED_TRACE("job " + std::to_string(k));
    EXPECT_TRUE(out[k].result.completed);
    EXPECT_TRUE(check_ddr(*jobs[k].program, sem(), golden_ddr(*jobs[k].program), out[k].result.ddr, "golden",
                          *checks[k]));
    EXPECT_TRUE(checks[k]->clean()) << checks[k]->summary();
    EXPECT_EQ(out[k].stats.monitor_errors, 0u);
  }
  // conv: gemm m=16, n=8, k=18 on the 16x16 array; vector: eltwise len=256 on 32 lanes.
  EXPECT_EQ(out[0].stats.compute_cycles, 1u + 1 * 18 + 1);
  EXPECT_EQ(out[0].stats.compute_tiles, 1u);
  EXPECT_EQ(out[2].stats.compute_cycles, 1u + 256 / 32);
  EXPECT_EQ(out[2].stats.compute_tiles, 256u / 32);
  for (size_t k = 1; k < jobs.size(); k += 2) {
    EXPECT_EQ(out[k].result.cycles, out[k - 1].result.cycles) << "job " << k;
    EXPECT_EQ(out[k].result.busy_cycles, out[k - 1].result.busy_cycles) << "job " << k;
    EXPECT_EQ(out[k].result.ddr, out[k - 1].result.ddr) << "job " << k;
    EXPECT_EQ(out[k].stats.compute_cycles, out[k - 1].stats.compute_cycles) << "job " << k;
    EXPECT_EQ(out[k].stats.compute_tiles, out[k - 1].stats.compute_tiles) << "job " << k;
  }
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  for (const char* name : {"compute_clk", "mac_en", "gemm_valid", "elt_valid"})
    EXPECT_NE(text.str().find(name), std::string::npos) << name;
  std::filesystem::remove(path);
}

// The scratchpad and decoder are driven directly: their cycles are evaluated only while a
// port is busy, and a caller waits once per transaction. With a trace open the same ports are
// evaluated cycle by cycle on a free-running clock's falling edges. Both must agree on
// everything a run reports: cycles, busy cycles, data, port words, bank conflicts (the
// collision programs have some), decoded words and findings, for the correct RTL and for a
// planted scratchpad bug whose reads the monitor flags.
TEST(ScModel, RtlDirectDriveAgreesWithThePerCycleTrace) {
  REQUIRE_FRESH_PROCESS();
  std::vector<bundle::Program> programs = generated_programs(1, 120);
  for (int d : {2, 5}) {  // 2: the phase with a bank conflict
    programs.push_back(collision_program(d));
    programs.back().config.sram_bytes.value = 0x4000;  // a short read-out, a small VCD
  }
  programs.push_back(odd_program());
  programs.back().config.sram_bytes.value = 0x4000;
  struct Case {
    const bundle::Program* program;
    Plant plant;
  };
  std::vector<Case> cases;
  for (const bundle::Program& p : programs) cases.push_back({&p, Plant{}});
  cases.push_back({&programs[0], Plant{PlantId::RtlBankConflict}});
  std::vector<std::unique_ptr<Checkers>> checks;
  std::vector<ScJob> jobs;
  std::vector<std::filesystem::path> vcds;
  for (const Case& c : cases) {
    for (bool traced : {false, true}) {
      checks.push_back(std::make_unique<Checkers>(*c.program, sem()));
      ScOptions o;
      o.sram = SramModel::Rtl;
      o.plant = c.plant;
      if (traced) {
        vcds.push_back(std::filesystem::temp_directory_path() /
                       ("npuforge_sc_direct_" + std::to_string(jobs.size()) + ".vcd"));
        o.trace_path = vcds.back().string();
      }
      jobs.push_back({c.program, checks.back().get(), o});
    }
  }
  const auto out = run_together(sem(), jobs);
  uint64_t conflicts = 0;
  for (size_t k = 0; k < jobs.size(); k += 2) {
    SCOPED_TRACE("case " + std::to_string(k / 2));
    const ScOutput& direct = out[k];
    const ScOutput& traced = out[k + 1];
    EXPECT_TRUE(direct.result.completed);
    EXPECT_EQ(direct.result.cycles, traced.result.cycles);
    EXPECT_EQ(direct.result.busy_cycles, traced.result.busy_cycles);
    EXPECT_EQ(direct.result.ddr, traced.result.ddr);
    EXPECT_EQ(direct.result.sram, traced.result.sram);
    EXPECT_EQ(direct.stats.sram_words, traced.stats.sram_words);
    EXPECT_EQ(direct.stats.sram_bank_conflicts, traced.stats.sram_bank_conflicts);
    EXPECT_EQ(direct.stats.decoded_words, traced.stats.decoded_words);
    EXPECT_EQ(direct.stats.monitor_errors, traced.stats.monitor_errors);
    EXPECT_EQ(direct.stats.compute_cycles, traced.stats.compute_cycles);
    EXPECT_EQ(checks[k]->summary(), checks[k + 1]->summary());
    EXPECT_GT(direct.stats.sram_words, 0u);
    conflicts += direct.stats.sram_bank_conflicts;
    if (!cases[k / 2].plant.any()) {
      EXPECT_TRUE(check_ddr(*jobs[k].program, sem(), golden_ddr(*jobs[k].program), direct.result.ddr, "golden",
                            *checks[k]));
      EXPECT_TRUE(checks[k]->clean()) << checks[k]->summary();
    } else {
      EXPECT_GT(direct.stats.monitor_errors, 0u) << "the planted arbitration bug went unseen";
    }
  }
  EXPECT_GT(conflicts, 0u);
  for (const auto& path : vcds) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    for (const char* name : {"wr_en", "rd_valid", "conflict", "in_valid", "fields"})
      EXPECT_NE(text.str().find(name), std::string::npos) << path << ": " << name;
    std::filesystem::remove(path);
  }
}

// Short watchdog limits (600 cycles) on runs that complete: the final read-out of the RTL
// scratchpad (sram_bytes / 16 port cycles, after the last retirement) is no deadlock, nor is
// an RTL compute unit that needs 16x the cycles the timing model gives a GEMM (an NPU config
// with a 64x64 MAC array against the built 16x16 one; it is making progress all along).
TEST(ScModel, WatchdogStaysQuietThroughTheReadOutAndALongRtlGemm) {
  REQUIRE_FRESH_PROCESS();
  const std::string text =
      ".equ %a, 0x0000\n.equ %b, 0x1000\n.equ %c, 0x2000\n"
      "load %a, ddr:0x0, rows=1, row_bytes=4096, stride=4096\n"
      "load %b, ddr:0x1000, rows=1, row_bytes=4096, stride=4096, signal=compute\n"
      "gemm %c, %a, %b, m=64, n=64, k=64, scale=3, shift=9, wait=load, signal=store\n"
      "store ddr:0x4000, %c, rows=1, row_bytes=4096, stride=4096, wait=compute\n"
      "halt\n";
  const std::vector<bundle::MemBuffer> buffers = {buf("a", 0x0000, 4096, 0, 2), buf("b", 0x1000, 4096, 1, 2),
                                                     buf("c", 0x2000, 4096, 2, 3)};
  bundle::Program big = make_program(text, buffers, 0x5000, 21);
  big.config.mac_rows = big.config.mac_cols = 64;  // budget: 8 + 64 cycles; the 16x16 RTL: 1 + 16 * 64 + 1
  big.config.deadlock_cycles = 600;
  bundle::Program plain = make_program(text, buffers, 0x5000, 21);
  plain.config.deadlock_cycles = 600;
  ASSERT_GT(plain.config.sram_bytes.value / 16, 10 * plain.config.deadlock_cycles) << "the read-out must outlast it";
  Checkers big_checks(big, sem()), plain_checks(plain, sem());
  ScOptions o;
  o.sram = SramModel::Rtl;
  const std::vector<ScJob> jobs = {{&big, &big_checks, o}, {&plain, &plain_checks, o}};
  const auto out = run_together(sem(), jobs);
  for (size_t k = 0; k < 2; ++k) {
    const Checkers& c = k ? plain_checks : big_checks;
    SCOPED_TRACE(k ? "16x16 config" : "64x64 config");
    EXPECT_TRUE(out[k].result.completed);
    EXPECT_TRUE(c.clean()) << c.summary();
    EXPECT_TRUE(check_ddr(*jobs[k].program, sem(), golden_ddr(*jobs[k].program), out[k].result.ddr, "golden",
                          *jobs[k].checkers));
    EXPECT_EQ(out[k].stats.compute_cycles, 1u + 16 * 64 + 1);
    EXPECT_EQ(out[k].stats.compute_tiles, 16u);
  }
}

TEST(ScModel, ASecondSimulationInOneProcessIsRefused) {
  REQUIRE_FRESH_PROCESS();
  const bundle::Program p = make_program(gemm_program(), gemm_buffers());
  Checkers first(p, sem()), second(p, sem());
  ScBackend backend(sem());
  EXPECT_TRUE(backend.run(p, first).completed);
  EXPECT_FALSE(can_simulate());
#ifndef __SANITIZE_ADDRESS__
  // Under ASan, unwinding an exception after SystemC switched coroutine stacks gives a known
  // false positive (google/sanitizers#189), so the throw is only exercised without it.
  EXPECT_THROW(backend.run(p, second), Error);
#endif
}

// The regression worker simulates many programs in one process, each on a fresh kernel
// (restart_kernel). A program run after a deadlocked one (its threads left blocked
// mid-instruction) must give exactly what the process's first kernel gave: cycles, busy
// cycles, RTL stats, findings and the final DDR, in TLM and RTL mode.
TEST(ScModel, RestartKernelGivesARunAfterADeadlockTheVerdictOfTheFirstKernel) {
  REQUIRE_FRESH_PROCESS();
  const bundle::Program p = conv_program();
  bundle::Program stuck = make_program(gemm_program(0x000, 0x080, 0x100, "wait=load, signal=store", "wait=compute",
                                            "signal=none"),
                               gemm_buffers());
  stuck.config.deadlock_cycles = 3000;
  ScOptions tlm, rtl;
  rtl.sram = SramModel::Rtl;
  auto run_pair = [&](const bundle::Program& prog, std::vector<std::string>& findings) {
    Checkers a(prog, sem()), b(prog, sem());
    const std::vector<ScJob> jobs = {{&prog, &a, tlm}, {&prog, &b, rtl}};
    std::vector<ScOutput> out = run_together(sem(), jobs);
    for (const Checkers* c : {&a, &b})
      for (const Finding& f : c->findings()) findings.push_back(format(f));
    return out;
  };
  std::vector<std::string> first_findings, stuck_findings, again_findings;
  const std::vector<ScOutput> first = run_pair(p, first_findings);
  EXPECT_FALSE(can_simulate());
  restart_kernel();
  ASSERT_TRUE(can_simulate());
  const std::vector<ScOutput> dead = run_pair(stuck, stuck_findings);
  EXPECT_FALSE(dead[0].result.completed);
  EXPECT_FALSE(stuck_findings.empty());
  restart_kernel();
  const std::vector<ScOutput> again = run_pair(p, again_findings);
  EXPECT_EQ(first_findings, again_findings);
  for (size_t k = 0; k < 2; ++k) {
    SCOPED_TRACE(k ? "rtl" : "tlm");
    EXPECT_TRUE(again[k].result.completed);
    EXPECT_EQ(first[k].result.cycles, again[k].result.cycles);
    EXPECT_GT(again[k].result.cycles, 0u);
    EXPECT_EQ(first[k].result.instructions, again[k].result.instructions);
    EXPECT_EQ(first[k].result.busy_cycles, again[k].result.busy_cycles);
    EXPECT_EQ(first[k].result.ddr, again[k].result.ddr);
    EXPECT_EQ(first[k].stats.sram_words, again[k].stats.sram_words);
    EXPECT_EQ(first[k].stats.sram_bank_conflicts, again[k].stats.sram_bank_conflicts);
    EXPECT_EQ(first[k].stats.compute_cycles, again[k].stats.compute_cycles);
    EXPECT_EQ(first[k].stats.decoded_words, again[k].stats.decoded_words);
  }
  EXPECT_GT(again[1].stats.sram_words, 0u) << "the RTL scratchpad was not used";
}

}  // namespace
}  // namespace npuforge::sim::sc_model

// One SystemC elaboration per process: when the command line selects more than one test
// (say, the binary run by hand with no filter), run this binary again once per test with
// --gtest_filter naming just that test, and fail if any of them fails.
namespace {

// Runs `args` (args[0] the program) without a shell; its stdout goes to `out` when given.
int run_process(const std::vector<std::string>& args, std::string* out) {
  std::vector<char*> cargs;
  for (const auto& a : args) cargs.push_back(const_cast<char*>(a.c_str()));
  cargs.push_back(nullptr);
  int fds[2] = {-1, -1};
  if (out && pipe(fds) != 0) return 1;
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    if (out) {
      dup2(fds[1], STDOUT_FILENO);
      close(fds[0]);
      close(fds[1]);
    }
    execv(cargs[0], cargs.data());
    _exit(127);
  }
  if (out) {
    close(fds[1]);
    char chunk[4096];
    for (ssize_t n; (n = read(fds[0], chunk, sizeof chunk)) > 0;) out->append(chunk, size_t(n));
    close(fds[0]);
  }
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) < 0) return 1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

// The selected tests as "Suite.Name", from this binary's own --gtest_list_tests with the same
// arguments (so the user's --gtest_filter applies).
std::vector<std::string> selected_tests(std::vector<std::string> args) {
  args.push_back("--gtest_list_tests");
  std::string listing;
  if (run_process(args, &listing) != 0) return {};
  std::vector<std::string> names;
  std::istringstream lines(listing);
  std::string suite;
  for (std::string s; std::getline(lines, s);) {
    s = s.substr(0, s.find('#'));
    while (!s.empty() && s.back() == ' ') s.pop_back();
    if (s.empty()) continue;
    if (s[0] != ' ') suite = s;  // "Suite." (its tests follow, indented)
    else names.push_back(suite + s.substr(s.find_first_not_of(' ')));
  }
  return names;
}

}  // namespace

// libsystemc.so has its own main() (it calls sc_main); this one wins, being linked first, and
// runs the tests.
int main(int argc, char** argv) {
  std::vector<std::string> args(argv, argv + argc);  // before gtest removes its flags
  ::testing::InitGoogleTest(&argc, argv);
  if (GTEST_FLAG_GET(list_tests)) return RUN_ALL_TESTS();
  args[0] = std::filesystem::read_symlink("/proc/self/exe").string();
  const std::vector<std::string> tests = selected_tests(args);
  if (tests.size() <= 1) return RUN_ALL_TESTS();
  std::vector<std::string> failed;
  for (const std::string& t : tests) {
    std::vector<std::string> child = args;
    child.push_back("--gtest_filter=" + t);  // the last --gtest_filter wins
    if (run_process(child, nullptr) != 0) failed.push_back(t);
  }
  std::printf("[==========] %zu tests, each in its own process: %zu passed, %zu failed\n", tests.size(),
              tests.size() - failed.size(), failed.size());
  for (const std::string& t : failed) std::printf("[  FAILED  ] %s\n", t.c_str());
  return failed.empty() ? 0 : 1;
}
