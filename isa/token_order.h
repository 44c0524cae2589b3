#pragma once
// Happens-before of a program from its dependency tokens, the exact model of the ISA: each
// queue runs in order; the k-th wait on channel p->q takes the k-th signal on p->q; sync and
// halt are barriers. A static analysis, independent of timing, shared by the generator's
// program checks and the simulator's hazard checker.
#include <array>
#include <cstdint>
#include <utility>
#include <vector>

#include "isa/instruction.h"

namespace npuforge::isa {

// Happens-before of a program from its tokens, with vector clocks (one entry per queue).
class TokenOrder {
 public:
  TokenOrder(const std::vector<isa::Instruction>& instrs);
  // True when a completes before b starts in every execution that honours the tokens.
  bool happens_before(size_t a, size_t b) const;
  bool ordered(size_t a, size_t b) const { return happens_before(a, b) || happens_before(b, a); }
  // The latest instruction of queue q that happens before i (i excluded), or -1 if none:
  // what must have finished before i may start.
  int64_t latest_before(size_t i, unsigned q) const;
  // Instructions that must finish before `i` starts: its queue predecessor, the signallers
  // its waits consume, the last barrier before it (or, for a barrier, everything before it
  // as the last instruction of each queue). Indices, ascending.
  const std::vector<size_t>& predecessors(size_t i) const { return preds_[i]; }
  // Instructions that can never start (deadlock); empty when the program completes.
  const std::vector<size_t>& stuck() const { return stuck_; }
  // Waits with no matching signal: (instruction, waited-on queue).
  const std::vector<std::pair<size_t, unsigned>>& unmatched_waits() const { return unmatched_waits_; }
  // Signals no wait consumes: (instruction, signalled queue).
  const std::vector<std::pair<size_t, unsigned>>& unmatched_signals() const { return unmatched_signals_; }
  // Every matched token as (signalling instruction, waiting instruction), sorted.
  const std::vector<std::pair<size_t, size_t>>& token_pairs() const { return token_pairs_; }

 private:
  using Clock = std::array<uint32_t, kNumQueues>;
  std::vector<Clock> clock_;   // per instruction: queue q instructions that happen before or equal
  std::vector<uint32_t> seq_;  // position within its queue (1-based); 0 for control
  std::vector<uint8_t> queue_;
  std::array<std::vector<size_t>, kNumQueues> by_queue_;  // seq - 1 -> instruction
  std::vector<std::vector<size_t>> preds_;
  std::vector<size_t> stuck_;
  std::vector<std::pair<size_t, unsigned>> unmatched_waits_, unmatched_signals_;
  std::vector<std::pair<size_t, size_t>> token_pairs_;
};

}  // namespace npuforge::isa
