// Generator output through the simulator: clean seeds run with zero findings and match the
// golden model; the planted bugs, applied to generated programs, are caught.
#include <cstdio>

#include <gtest/gtest.h>

#include "gen/generator.h"
#include "sim/backend.h"
#include "sim/golden.h"
#include "sim/verify/verify.h"
#include "sim_test_util.h"

namespace npuforge::sim {
namespace {

const Semantics& sem() {
  static const Semantics s(isa::builtin_isa());
  return s;
}

// The whole path (the backend, every checker, the golden compare) on the sequential backend.
verify::Options sequential() {
  verify::Options o;
  o.backend = verify::BackendKind::Sequential;
  return o;
}

bundle::Program generated(const std::string& profile_name, uint64_t seed, int64_t length) {
  const auto profile = gen::Profile::load_file(std::string(NPUFORGE_SOURCE_DIR) + "/configs/gen/" +
                                               profile_name + ".yaml");
  gen::GenOptions o;
  o.seed = seed;
  o.length = length;
  const isa::NpuConfig npu;
  gen::GeneratedProgram g = gen::generate(isa::builtin_isa(), npu, profile, o);
  g.with_memmap();  // the generator's bundle, with its memory map
  bundle::Program p = std::move(g.bundle);
  p.name = profile_name + "/" + std::to_string(seed);
  return p;
}

TEST(Generated, SeedsRunCleanAndMatchGolden) {
  for (const char* profile : {"default", "stress-fragment", "tiny-buffers", "extremes"}) {
    for (uint64_t seed = 1; seed <= 12; ++seed) {
      const bundle::Program p = generated(profile, seed, 300);
      ASSERT_EQ(p.validate(), "");
      Checkers golden_checks(p, sem());
      run_golden(p, sem(), &golden_checks);
      ASSERT_TRUE(golden_checks.clean()) << p.name << "\n" << golden_checks.summary();
      const verify::Verdict v = verify::run(p, sequential());
      ASSERT_TRUE(v.pass) << p.name << "\n" << verify::report(v);
    }
  }
}

// Zero-length operands at addresses past the SRAM (a GEMM's unused bias and qp, an
// ELTWISE's b for relu/clip) and maximum-length ones (65535-byte rows, 65535 rows, k =
// 65535): the golden model and the sequential backend run them clean and agree.
TEST(Generated, ZeroAndMaximumLengthOperandsRunClean) {
  using testing::buf;
  const bundle::Program zero = testing::make_program(
      ".equ %a, 0x000\n.equ %b, 0x100\n.equ %c, 0x200\n.equ %d, 0x300\n"
      "load %a, ddr:0x0, rows=1, row_bytes=64, stride=64\n"
      "load %b, ddr:0x40, rows=1, row_bytes=64, stride=64, signal=compute\n"
      "gemm %c, %a, %b, bias=0xffffff, qp=0x80000, m=8, n=8, k=8, scale=3, shift=4, wait=load\n"
      "eltwise %d, %c, b=0xffffff, len=64, op=clip, lo=-5, hi=9, signal=store\n"
      "store ddr:0x1000, %d, rows=1, row_bytes=64, stride=64, wait=compute\n"
      "halt\n",
      {buf("a", 0x000, 64, 0, 2), buf("b", 0x100, 64, 1, 2), buf("c", 0x200, 64, 2, 3), buf("d", 0x300, 64, 3, 4)});
  const bundle::Program big = testing::make_program(
      ".equ %big, 0x0\n.equ %w, 0x10000\n.equ %o, 0x20000\n"
      "load %big, ddr:0x0, rows=1, row_bytes=65535, stride=65535, signal=store\n"
      "load %w, ddr:0x10000, rows=65535, row_bytes=1, stride=1, signal=compute\n"
      "gemm %o, %big, %w, m=1, n=1, k=65535, scale=1, shift=8, wait=load, signal=store\n"
      "store ddr:0x30000, %big, rows=65535, row_bytes=1, stride=1, wait=load\n"
      "store ddr:0x40000, %o, rows=1, row_bytes=1, stride=1, wait=compute\n"
      "halt\n",
      {buf("big", 0x0, 65535, 0, 3), buf("w", 0x10000, 65535, 1, 2), buf("o", 0x20000, 1, 2, 4)}, 0x20000);
  for (const bundle::Program* p : {&zero, &big}) {
    Checkers golden_checks(*p, sem());
    run_golden(*p, sem(), &golden_checks);
    EXPECT_TRUE(golden_checks.clean()) << golden_checks.summary();
    const verify::Verdict v = verify::run(*p, sequential());
    EXPECT_TRUE(v.pass) << verify::report(v);
  }
  // The big store wrote the 65535 loaded bytes back, byte for byte.
  const GoldenResult g = run_golden(big, sem());
  ASSERT_GE(g.ddr.size(), 0x30000u + 65535);
  EXPECT_TRUE(std::equal(g.ddr.begin(), g.ddr.begin() + 65535, g.ddr.begin() + 0x30000));
}

// The index of the signal a wait consumes (k-th wait of q on p <- k-th signal of p to q).
int64_t matched_signal(const bundle::Program& p, size_t waiter, unsigned from) {
  const unsigned to = static_cast<unsigned>(p.instrs[waiter].spec->queue);
  int64_t k = 0;
  for (size_t i = 0; i < waiter; ++i) {
    const auto& in = p.instrs[i];
    k += static_cast<unsigned>(in.spec->queue) == to && (in.wait_mask() >> from & 1u);
  }
  for (size_t i = 0; i < p.instrs.size(); ++i) {
    const auto& in = p.instrs[i];
    if (static_cast<unsigned>(in.spec->queue) == from && (in.signal_mask() >> to & 1u) && k-- == 0) {
      return static_cast<int64_t>(i);
    }
  }
  return -1;
}

TEST(Generated, RemovedTokensAreCaughtAsHazards) {
  int mutations = 0, caught = 0;
  for (uint64_t seed = 1; seed <= 10; ++seed) {
    const bundle::Program clean = generated("default", seed, 300);
    // Remove every 5th wait (with the signal it consumes), one program per removal.
    int waits = 0;
    for (size_t w = 0; w < clean.instrs.size() && mutations < 60; ++w) {
      for (unsigned from = 0; from < isa::kNumQueues; ++from) {
        if (!(clean.instrs[w].wait_mask() >> from & 1u) || ++waits % 5 != 0) continue;
        const int64_t s = matched_signal(clean, w, from);
        ASSERT_GE(s, 0);
        bundle::Program p = clean;
        const unsigned to = static_cast<unsigned>(p.instrs[w].spec->queue);
        p.instrs[w].set(isa::kWaitSlot, p.instrs[w].wait_mask() & ~(1u << from));
        p.instrs[static_cast<size_t>(s)].set(isa::kSignalSlot, p.instrs[static_cast<size_t>(s)].signal_mask() & ~(1u << to));
        Checkers checks(p, sem());
        SequentialBackend(sem()).run(p, checks);
        EXPECT_EQ(checks.count(FindingKind::Deadlock) + checks.count(FindingKind::UnconsumedSignal), 0u);
        ++mutations;
        if (checks.count(FindingKind::Hazard) > 0) ++caught;
      }
    }
  }
  std::printf("%d of %d removed tokens caught as hazards\n", caught, mutations);
  ASSERT_GT(mutations, 20);
  // A removed token is harmless only when other tokens still order the pair transitively.
  EXPECT_GE(caught * 10, mutations * 7) << caught << " of " << mutations;
}

TEST(Generated, OverlapAndEarlyFreeAreCaught) {
  const bundle::Program clean = generated("default", 3, 300);
  const auto& bufs = clean.memmap->buffers;
  const uint64_t unit = clean.memmap->alignment.value;
  // Overlap: place a buffer one alignment unit inside another one live when it is born.
  bool planted_overlap = false, planted_free = false;
  for (size_t b = 0; b < bufs.size() && !planted_overlap; ++b) {
    for (size_t c = 0; c < bufs.size(); ++c) {
      if (c == b || !bufs[c].live_at(bufs[b].first) || bufs[c].first >= bufs[b].first) continue;
      bundle::Program p = clean;
      auto& nb = p.memmap->buffers[b];
      nb.offset = SramAddr{static_cast<uint32_t>(bufs[c].offset.value + bufs[c].size.value - unit)};
      Checkers checks(p, sem());
      run_golden(p, sem(), &checks);
      ASSERT_GE(checks.count(FindingKind::LiveOverlap), 1u) << checks.summary();
      planted_overlap = true;
      break;
    }
  }
  // Early free: a buffer's lifetime ends one instruction before its last consumer.
  for (size_t b = 0; b < bufs.size() && !planted_free; ++b) {
    if (bufs[b].consumers.empty() || bufs[b].consumers.back() != bufs[b].last || bufs[b].last <= bufs[b].first) continue;
    bundle::Program p = clean;
    p.memmap->buffers[b].last -= 1;
    Checkers checks(p, sem());
    run_golden(p, sem(), &checks);
    bool at_last_read = false;
    for (const auto& f : checks.findings()) {
      at_last_read |= checker_of(f.kind) == "shadow" && f.instr == bufs[b].last;
    }
    EXPECT_TRUE(at_last_read) << checks.summary();
    planted_free = true;
  }
  EXPECT_TRUE(planted_overlap);
  EXPECT_TRUE(planted_free);
}

}  // namespace
}  // namespace npuforge::sim
