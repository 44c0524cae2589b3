// Property test of the hazard checker (and of the token happens-before it uses) against an
// oracle written from the token rules alone: random programs with random tokens, every pair
// of instructions checked over every interleaving of the queues.
#include <algorithm>
#include <array>
#include <cstdint>
#include <set>
#include <string>
#include <unordered_set>
#include <vector>

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
bundle::Program random_program(uint64_t seed, int length) {
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
  bundle::Program p;
  p.name = fmt::format("random{}", seed);
  p.isa = &isa::builtin_isa();
  p.instrs = isa::assemble(*p.isa, text, p.name).instrs;
  p.ddr_init.resize(4096);
  for (auto& b : p.ddr_init) b = static_cast<uint8_t>(rng.next());
  return p;
}

// The oracle: the machine the token rules describe, run through every interleaving of its
// events, with no use of TokenOrder. Each of the load, compute and store queues runs its
// instructions one at a time in program order. An instruction starts only when (a) for every
// queue p it waits on, the counter of tokens p -> its queue is positive (a token is added when
// an instruction of p that signals it finishes, and taken when the waiter starts), and (b)
// every instruction before the last sync/halt preceding it has finished (a barrier drains all
// queues; nop orders nothing). A machine state is, per queue, how many instructions finished
// and whether the next one is running; the token counters follow from that. Breadth-first
// search visits every reachable state. Instruction b can start before a finishes when some
// reachable state has b started and a unfinished; two instructions are ordered when that is
// impossible one way round.
class InterleavingOracle {
 public:
  explicit InterleavingOracle(const std::vector<isa::Instruction>& instrs) : n_(instrs.size()) {
    pos_.assign(n_, kControl);
    queue_of_.assign(n_, kControl);
    std::array<size_t, kQ> before_barrier{};  // queue lengths at the last barrier seen
    for (size_t i = 0; i < n_; ++i) {
      const auto& in = instrs[i];
      const auto qu = static_cast<unsigned>(in.spec->queue);
      if (qu >= kQ) {  // control
        if (in.spec->mnemonic != "nop")
          for (unsigned q = 0; q < kQ; ++q) before_barrier[q] = queue_[q].size();
        continue;
      }
      queue_of_[i] = qu;
      pos_[i] = queue_[qu].size();
      queue_[qu].push_back({i, in.wait_mask(), in.signal_mask(), before_barrier});
    }
    explore();
  }

  // False when b cannot start before a finishes, in any interleaving.
  bool can_start_before_finish(size_t b, size_t a) const {
    const unsigned qa = queue_of_[a], qb = queue_of_[b];
    if (qa == qb) return pos_[b] <= pos_[a] && started_ever(b);
    const auto& m = latest_started_[qa][qb];
    for (size_t d = 0; d <= pos_[a] && d < m.size(); ++d)
      if (m[d] > int64_t(pos_[b])) return true;
    return false;
  }
  bool ordered(size_t a, size_t b) const {
    return !can_start_before_finish(b, a) || !can_start_before_finish(a, b);
  }
  bool memory_instruction(size_t i) const { return queue_of_[i] != kControl; }
  bool started_ever(size_t i) const { return can_start_[i]; }
  size_t states() const { return states_; }

 private:
  static constexpr unsigned kQ = isa::kNumQueues;
  static constexpr size_t kControl = SIZE_MAX;
  struct Entry {
    size_t instr;
    uint32_t waits, signals;          // masks over queues
    std::array<size_t, kQ> barrier;  // per queue, instructions that must finish first
  };
  struct State {
    std::array<uint8_t, kQ> done{};
    std::array<bool, kQ> running{};
    uint32_t key() const {
      uint32_t k = 0;
      for (unsigned q = 0; q < kQ; ++q) k = k << 9 | uint32_t(done[q]) << 1 | running[q];
      return k;
    }
  };

  // Tokens p -> q available: signals from finished instructions of p minus waits of started
  // instructions of q.
  int tokens(const State& s, unsigned p, unsigned q) const {
    int t = 0;
    for (size_t k = 0; k < s.done[p]; ++k) t += (queue_[p][k].signals >> q) & 1;
    for (size_t k = 0; k < size_t(s.done[q] + s.running[q]); ++k) t -= (queue_[q][k].waits >> p) & 1;
    return t;
  }

  bool can_start(const State& s, unsigned q) const {
    if (s.running[q] || s.done[q] == queue_[q].size()) return false;
    const Entry& e = queue_[q][s.done[q]];
    for (unsigned p = 0; p < kQ; ++p) {
      if (s.done[p] < e.barrier[p]) return false;
      if ((e.waits >> p & 1) && tokens(s, p, q) <= 0) return false;
    }
    return true;
  }

  void record(const State& s) {
    for (unsigned q = 0; q < kQ; ++q)
      if (s.running[q]) can_start_[queue_[q][s.done[q]].instr] = true;
    // latest_started_[qa][qb][d]: over states where d instructions of qa finished, one more
    // than the queue position of the latest started instruction of qb.
    for (unsigned qa = 0; qa < kQ; ++qa) {
      for (unsigned qb = 0; qb < kQ; ++qb) {
        auto& m = latest_started_[qa][qb];
        if (m.size() <= s.done[qa]) m.resize(s.done[qa] + 1, 0);
        m[s.done[qa]] = std::max<int64_t>(m[s.done[qa]], s.done[qb] + s.running[qb]);
      }
    }
  }

  void explore() {
    can_start_.assign(n_, false);
    for (unsigned q = 0; q < kQ; ++q) EXPECT_LT(queue_[q].size(), 256u);
    std::unordered_set<uint32_t> seen;
    std::vector<State> todo = {State{}};
    seen.insert(State{}.key());
    while (!todo.empty()) {
      const State s = todo.back();
      todo.pop_back();
      record(s);
      for (unsigned q = 0; q < kQ; ++q) {
        State t = s;
        if (s.running[q]) {  // the running instruction finishes
          t.running[q] = false;
          ++t.done[q];
        } else if (can_start(s, q)) {
          t.running[q] = true;
        } else {
          continue;
        }
        if (seen.insert(t.key()).second) todo.push_back(t);
      }
    }
    states_ = seen.size();
  }

  size_t n_;
  std::array<std::vector<Entry>, kQ> queue_;
  std::vector<size_t> pos_;       // position within its queue
  std::vector<size_t> queue_of_;  // kControl for sync/halt/nop
  std::vector<bool> can_start_;
  std::array<std::array<std::vector<int64_t>, kQ>, kQ> latest_started_;
  size_t states_ = 0;
};

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

std::set<std::pair<size_t, size_t>> racy_pairs(const bundle::Program& p) {
  const size_t n = p.instrs.size();
  const InterleavingOracle oracle(p.instrs);
  std::set<std::pair<size_t, size_t>> racy;
  for (size_t i = 0; i < n; ++i) {
    for (size_t j = i + 1; j < n; ++j) {
      const auto& a = p.instrs[i];
      const auto& b = p.instrs[j];
      if (!oracle.memory_instruction(i) || !oracle.memory_instruction(j)) continue;
      if (a.spec->queue == b.spec->queue || oracle.ordered(i, j)) continue;
      for (const auto& x : touches(a)) {
        for (const auto& y : touches(b)) {
          if (x.space == y.space && x.lo < y.hi && y.lo < x.hi && (x.write || y.write)) racy.emplace(i, j);
        }
      }
    }
  }
  return racy;
}

TEST(HazardProperty, MatchesTheInterleavingOracle) {
  int racy_programs = 0, clean_programs = 0;
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    const bundle::Program p = random_program(seed, 4 + static_cast<int>(seed % 27));
    Checkers checks(p, sem());
    const RunResult r = SequentialBackend(sem()).run(p, checks);
    ASSERT_TRUE(r.completed) << p.name;
    const auto racy = racy_pairs(p);
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
      ASSERT_EQ(bundle::compare_images(run_golden(p, sem()).ddr, r.ddr).total_differing, 0u) << p.name;
    } else {
      ++racy_programs;
    }
  }
  fmt::print("{} racy, {} race-free programs\n", racy_programs, clean_programs);
  EXPECT_GT(racy_programs, 10);  // both sides of the property were exercised
  EXPECT_GT(clean_programs, 10);
}

// Tokens with no regard for program order: waits may name signals that come later in the
// program or never, and cycles through barriers deadlock. Control instructions carry none.
std::vector<isa::Instruction> random_token_program(Rng& rng, int length) {
  const char* qn[3] = {"load", "compute", "store"};
  const char* body[3] = {"load 0, ddr:0, rows=1, row_bytes=1", "move 64, 0, len=1",
                         "store ddr:64, 0, rows=1, row_bytes=1"};
  std::string text;
  for (int i = 0; i < length; ++i) {
    const uint64_t pick = rng.below(16);
    if (pick == 15) {
      text += rng.chance(0.5) ? "sync\n" : "nop\n";
      continue;
    }
    const unsigned q = unsigned(pick % 3);
    std::string w, sig;
    for (unsigned p = 0; p < 3; ++p) {
      if (p == q) continue;
      if (rng.chance(0.15)) w += (w.empty() ? "" : "+") + std::string(qn[p]);
      if (rng.chance(0.35)) sig += (sig.empty() ? "" : "+") + std::string(qn[p]);
    }
    text += fmt::format("{}, wait={}, signal={}\n", body[q], w.empty() ? "none" : w, sig.empty() ? "none" : sig);
  }
  text += "halt\n";
  return isa::assemble(isa::builtin_isa(), text, "tokens").instrs;
}

// TokenOrder (vector clocks over matched tokens) against the interleaving oracle: the same
// stuck instructions, and for every pair that runs, the same happens-before.
TEST(HazardProperty, TokenOrderMatchesTheInterleavingOracle) {
  Rng rng(23);
  int deadlocked = 0, unordered_pairs = 0, ordered_pairs = 0;
  for (int k = 0; k < 2000; ++k) {
    const auto instrs = random_token_program(rng, 3 + int(rng.below(22)));
    const TokenOrder order(instrs);
    const InterleavingOracle oracle(instrs);
    const std::string listing = isa::disassemble_program(instrs);
    std::vector<size_t> never_start;
    for (size_t i = 0; i < instrs.size(); ++i)
      if (oracle.memory_instruction(i) && !oracle.started_ever(i)) never_start.push_back(i);
    std::vector<size_t> stuck;  // TokenOrder also lists control instructions behind a deadlock
    for (size_t i : order.stuck())
      if (oracle.memory_instruction(i)) stuck.push_back(i);
    ASSERT_EQ(stuck, never_start) << "program " << k << "\n" << listing;
    deadlocked += !stuck.empty();
    for (size_t a = 0; a < instrs.size(); ++a) {
      for (size_t b = 0; b < instrs.size(); ++b) {
        if (a == b || !oracle.memory_instruction(a) || !oracle.memory_instruction(b)) continue;
        if (!oracle.started_ever(a) || !oracle.started_ever(b)) continue;
        const bool hb = !oracle.can_start_before_finish(b, a);
        ASSERT_EQ(order.happens_before(a, b), hb) << "program " << k << " #" << a << " -> #" << b << "\n" << listing;
        if (a < b) (oracle.ordered(a, b) ? ordered_pairs : unordered_pairs)++;
      }
    }
  }
  fmt::print("{} deadlocked programs, {} ordered and {} unordered pairs\n", deadlocked, ordered_pairs,
             unordered_pairs);
  EXPECT_GT(deadlocked, 200);  // deadlocks, races and orderings all occur
  EXPECT_GT(unordered_pairs, 5000);
  EXPECT_GT(ordered_pairs, 5000);
}

}  // namespace
}  // namespace npuforge::sim
