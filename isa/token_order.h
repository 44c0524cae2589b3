#pragma once
// Happens-before of a program from its dependency tokens, the exact model of the ISA: each
// queue runs in order; the k-th wait on channel p->q takes the k-th signal on p->q; sync and
// halt are barriers. A static analysis, independent of timing, shared by the generator's
// program checks and the simulator's hazard checker. TokenOrderBuilder is the same model
// grown one instruction at a time, for the generator deciding each new instruction's tokens.
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
  // Inline: the hazard checker asks it for every unordered-looking pair of every access.
  bool happens_before(size_t a, size_t b) const {
    if (a == b || seq_[a] == 0) return false;  // control instructions touch no memory
    return clock_[b][queue_[a]] >= seq_[a] && (queue_[a] != queue_[b] || seq_[a] < seq_[b]);
  }
  bool ordered(size_t a, size_t b) const { return happens_before(a, b) || happens_before(b, a); }
  // The latest instruction of queue q that happens before i (i excluded), or -1 if none:
  // what must have finished before i may start.
  int64_t latest_before(size_t i, unsigned q) const {
    uint32_t c = clock_[i][q];
    if (q == queue_[i] && seq_[i] != 0) c = seq_[i] - 1;
    return c == 0 ? -1 : static_cast<int64_t>(by_queue_[q][c - 1]);
  }
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

// TokenOrder's vector clocks built while a program is appended, for a generator that adds
// the tokens each new instruction needs. Queue order and tokens only: a barrier (sync) is
// appended like a nop and orders nothing here, so every ordering this reports also holds in
// TokenOrder (a generator ignoring barriers adds tokens a barrier made unnecessary, never
// fewer than needed). With no barriers the two agree exactly.
//
// Tokens pair one to one in program order when each new signal on channel p->q comes from
// an instruction after the channel's previous signaller: add_token() enforces it. (The
// generator's argument that it always holds: the needed instruction X of p is not yet
// ordered before the next q instruction, while the previous signaller on p->q is; so X
// comes after it in p.)
class TokenOrderBuilder {
 public:
  using Clock = std::array<uint32_t, kNumQueues>;

  void reserve(size_t instructions);
  size_t size() const { return clock_.size(); }
  // Instructions of queue q so far (the position of its latest one, 1-based; 0: none).
  uint32_t count(unsigned q) const { return count_[q]; }
  // The program index of the seq-th instruction of queue p (1 <= seq <= count(p)).
  size_t instr(unsigned p, uint32_t seq) const { return by_queue_[p][seq - 1]; }
  // True when the next instruction of queue q already follows the seq-th one of queue p.
  bool follows(unsigned q, unsigned p, uint32_t seq) const { return next_[q][p] >= seq; }
  // Orders the next instruction of queue q after `signaller` (an instruction of another
  // queue p): the caller sets signaller's signal bit q and that instruction's wait bit p.
  // Throws npuforge::Error when the token could not pair in program order, or when the
  // next q instruction already waits on p.
  void add_token(size_t signaller, unsigned q);
  // Appends the next instruction; returns its position in its queue (0 for control).
  [[gnu::always_inline]] uint32_t append(Queue queue) {  // the generator's hot path
    const auto q = static_cast<unsigned>(queue);
    queue_.push_back(static_cast<uint8_t>(queue));
    if (q >= kNumQueues) {  // control: no tokens, no place in a queue
      clock_.push_back(Clock{});
      return 0;
    }
    pending_waits_[q] = 0;
    const uint32_t seq = ++count_[q];
    next_[q][q] = seq;
    clock_.push_back(next_[q]);
    by_queue_[q].push_back(static_cast<uint32_t>(clock_.size() - 1));
    return seq;
  }
  // Per queue, the position of the latest instruction of that queue that happens before
  // or is instruction i (all 0 for a control instruction).
  const Clock& clock(size_t i) const { return clock_[i]; }
  // The same relation as TokenOrder::happens_before.
  bool happens_before(size_t a, size_t b) const;

 private:
  std::vector<Clock> clock_;
  std::vector<uint8_t> queue_;
  std::array<std::vector<uint32_t>, kNumQueues> by_queue_;
  std::array<uint32_t, kNumQueues> count_{};
  std::array<Clock, kNumQueues> next_{};  // the clock each queue's next instruction starts from
  std::array<uint32_t, kNumQueues> pending_waits_{};  // per queue: wait bits of its next one
  std::array<std::array<int64_t, kNumQueues>, kNumQueues> last_signal_{{{-1, -1, -1}, {-1, -1, -1}, {-1, -1, -1}}};
};

}  // namespace npuforge::isa
