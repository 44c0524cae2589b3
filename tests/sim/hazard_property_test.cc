// Property test of the hazard checker against a brute-force oracle: random programs with
// random (consistent) tokens, every pair of instructions checked by plain reachability.
#include <algorithm>
#include <set>
#include <string>

#include <fmt/core.h>
#include <gtest/gtest.h>

#include "isa/assembler.h"
#include "util/rng.h"
#include "sim/backend.h"
#include "sim/golden.h"

namespace npuforge::sim {
namespace {

const Semantics& sem() {
  static const Semantics s(isa::builtin_isa());
  return s;
}

// Random program over a 1 KiB scratchpad window. A wait is only emitted when an earlier
// signal on that channel is still unconsumed, so program order respects the tokens.
Program random_program(uint64_t seed, int length) {
  Rng rng(seed);
  std::string text;
  int tokens[3][3] = {};  // [from][to] signalled, not yet waited for
  const char* qn[3] = {"load", "compute", "store"};
  auto tok = [&](unsigned q) {
    std::string w, s;
    for (unsigned p = 0; p < 3; ++p) {
      if (p == q) continue;
      if (tokens[p][q] > 0 && rng.chance(0.6)) {
        --tokens[p][q];
        w += (w.empty() ? "" : "+") + std::string(qn[p]);
      }
      if (rng.chance(0.4)) {
        ++tokens[q][p];
        s += (s.empty() ? "" : "+") + std::string(qn[p]);
      }
    }
    return fmt::format(", wait={}, signal={}", w.empty() ? "none" : w, s.empty() ? "none" : s);
  };
  auto addr = [&] { return rng.below(960); };
  auto len = [&] { return rng.range(1, 64); };
  for (int i = 0; i < length; ++i) {
    switch (rng.below(6)) {
      case 0:
        text += fmt::format("load {}, ddr:{}, rows=1, row_bytes={}{}\n", addr(), rng.below(2048), len(), tok(0));
        break;
      case 1:
        text += fmt::format("store ddr:{}, {}, rows=2, row_bytes={}, stride=80{}\n", rng.below(2048), addr(), len(), tok(2));
        break;
      case 2:
        text += fmt::format("move {}, {}, len={}{}\n", addr(), addr(), len(), tok(1));
        break;
      case 3:
        text += fmt::format("eltwise {}, {}, b={}, len={}, op=add, shift=1{}\n", addr(), addr(), addr(), len(), tok(1));
        break;
      case 4:
        text += rng.chance(0.3) ? "sync\n" : "nop\n";
        break;
      default:
        text += fmt::format("load {}, ddr:{}, rows=2, row_bytes=8, stride=16{}\n", addr(), rng.below(2048), tok(0));
        break;
    }
  }
  text += "halt\n";
  Program p;
  p.name = fmt::format("random{}", seed);
  p.isa = &isa::builtin_isa();
  p.instrs = isa::assemble(*p.isa, text, p.name).instrs;
  p.ddr_init.resize(4096);
  for (auto& b : p.ddr_init) b = static_cast<uint8_t>(rng.next());
  return p;
}

// Reachability over the direct predecessors, no vector clocks.
std::vector<std::vector<uint8_t>> reach(const TokenOrder& order, size_t n) {
  std::vector<std::vector<uint8_t>> r(n, std::vector<uint8_t>(n, 0));
  for (size_t i = 0; i < n; ++i) {  // preds of i are earlier here (waits name earlier signals)
    for (size_t p : order.predecessors(i)) {
      r[i][p] = 1;
      for (size_t k = 0; k < n; ++k) r[i][k] |= r[p][k];
    }
  }
  return r;
}

struct Touch {
  isa::Space space;
  uint64_t lo, hi;
  bool write;
};

// What an instruction touches, DMA rows in DDR one by one (the gaps between rows excluded).
std::vector<Touch> touches(const isa::Instruction& in) {
  std::vector<Touch> out;
  for (const auto& x : isa::extents(in)) {
    if (x.bytes == 0) continue;
    const bool write = x.access == isa::Access::Write;
    if (x.space == isa::Space::Ddr) {
      const auto& spec = *in.spec;
      const uint64_t rows = in.get(spec.require_field("rows"));
      const uint64_t rb = in.get(spec.require_field("row_bytes"));
      const uint64_t stride = in.get(spec.require_field("stride"));
      for (uint64_t r = 0; r < rows; ++r) out.push_back({x.space, x.addr + r * stride, x.addr + r * stride + rb, write});
    } else {
      out.push_back({x.space, x.addr, x.addr + x.bytes, write});
    }
  }
  return out;
}

std::set<std::pair<size_t, size_t>> oracle(const Program& p, const TokenOrder& order) {
  const size_t n = p.instrs.size();
  const auto r = reach(order, n);
  std::set<std::pair<size_t, size_t>> racy;
  for (size_t i = 0; i < n; ++i) {
    for (size_t j = i + 1; j < n; ++j) {
      const auto& a = p.instrs[i];
      const auto& b = p.instrs[j];
      if (a.spec->queue == isa::Queue::Control || b.spec->queue == isa::Queue::Control) continue;
      if (a.spec->queue == b.spec->queue || r[j][i] || r[i][j]) continue;
      for (const auto& x : touches(a)) {
        for (const auto& y : touches(b)) {
          if (x.space == y.space && x.lo < y.hi && y.lo < x.hi && (x.write || y.write)) racy.emplace(i, j);
        }
      }
    }
  }
  return racy;
}

TEST(HazardProperty, MatchesBruteForceOracle) {
  int racy_programs = 0, clean_programs = 0;
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    const Program p = random_program(seed, 4 + static_cast<int>(seed % 27));
    Checkers checks(p, sem());
    const RunResult r = SequentialBackend(sem()).run(p, checks);
    ASSERT_TRUE(r.completed) << p.name;
    const auto racy = oracle(p, checks.order());
    std::set<std::pair<size_t, size_t>> found;
    for (const auto& f : checks.findings()) {
      if (f.kind != FindingKind::Hazard) continue;
      const std::pair<size_t, size_t> pr = std::minmax(static_cast<size_t>(f.instr), static_cast<size_t>(f.other_instr));
      ASSERT_TRUE(racy.count(pr)) << p.name << ": false hazard " << format(f) << "\n" << isa::disassemble_program(p.instrs);
      found.insert(pr);
    }
    // Every racy byte range is reported through at least one of its pairs; a program with
    // races always gets a finding, and a race-free one none.
    ASSERT_EQ(found.empty(), racy.empty()) << p.name << " oracle pairs " << racy.size();
    if (racy.empty()) {
      ++clean_programs;
      // No race and tokens consistent with program order: any legal schedule gives golden DDR.
      ASSERT_EQ(compare_images(run_golden(p, sem()).ddr, r.ddr).total_differing, 0u) << p.name;
    } else {
      ++racy_programs;
    }
  }
  fmt::print("{} racy, {} race-free programs\n", racy_programs, clean_programs);
  EXPECT_GT(racy_programs, 10);  // both sides of the property were exercised
  EXPECT_GT(clean_programs, 10);
}

}  // namespace
}  // namespace npuforge::sim
