// Happens-before from dependency tokens: a static analysis of the program, independent of
// timing, so the hazard checker gives the same answer for every backend.
#include <algorithm>
#include <deque>

#include "isa/token_order.h"

#include <fmt/core.h>

#include "util/error.h"

namespace npuforge::isa {
namespace {

bool is_barrier(const Instruction& in) {
  return in.spec->queue == Queue::Control && in.spec->mnemonic != "nop";
}

}  // namespace

TokenOrder::TokenOrder(const std::vector<Instruction>& instrs) {
  constexpr unsigned Q = kNumQueues;
  const size_t n = instrs.size();
  clock_.assign(n, Clock{});
  seq_.assign(n, 0);
  queue_.assign(n, static_cast<uint8_t>(Queue::Control));
  preds_.assign(n, {});

  // Static token matching: the k-th signal p->q is the k-th instruction of queue p (in program
  // order, which is its execution order) that signals q; likewise for waits in queue q.
  std::array<std::array<std::vector<size_t>, Q>, Q> signals, waits;  // [from][to]
  std::array<uint32_t, Q> count{};
  std::array<int64_t, Q> last_in_queue;
  last_in_queue.fill(-1);
  int64_t last_barrier = -1;
  std::vector<uint8_t> missing(n, 0);  // waits with no matching signal: never satisfiable

  for (size_t i = 0; i < n; ++i) {
    const auto& in = instrs[i];
    const auto qu = in.spec->queue;
    queue_[i] = static_cast<uint8_t>(qu);
    if (is_barrier(in)) {
      for (unsigned q = 0; q < Q; ++q) {
        if (last_in_queue[q] > last_barrier) preds_[i].push_back(static_cast<size_t>(last_in_queue[q]));
      }
      if (last_barrier >= 0) preds_[i].push_back(static_cast<size_t>(last_barrier));
      last_barrier = static_cast<int64_t>(i);
      continue;
    }
    if (qu == Queue::Control) {  // nop: orders nothing
      if (last_barrier >= 0) preds_[i].push_back(static_cast<size_t>(last_barrier));
      continue;
    }
    const unsigned q = static_cast<unsigned>(qu);
    seq_[i] = ++count[q];
    by_queue_[q].push_back(i);
    if (last_in_queue[q] >= 0) preds_[i].push_back(static_cast<size_t>(last_in_queue[q]));
    if (last_barrier > last_in_queue[q]) preds_[i].push_back(static_cast<size_t>(last_barrier));
    last_in_queue[q] = static_cast<int64_t>(i);
    for (unsigned p = 0; p < Q; ++p) {
      if (in.signal_mask() & (1u << p)) signals[q][p].push_back(i);
      if (in.wait_mask() & (1u << p)) waits[p][q].push_back(i);
    }
  }
  for (unsigned p = 0; p < Q; ++p) {
    for (unsigned q = 0; q < Q; ++q) {
      const auto& s = signals[p][q];
      const auto& w = waits[p][q];
      for (size_t k = 0; k < w.size(); ++k) {
        if (k < s.size()) {
          preds_[w[k]].push_back(s[k]);
          token_pairs_.emplace_back(s[k], w[k]);
        } else {
          missing[w[k]] = 1;
          unmatched_waits_.emplace_back(w[k], p);
        }
      }
      for (size_t k = w.size(); k < s.size(); ++k) unmatched_signals_.emplace_back(s[k], q);
    }
  }
  std::sort(unmatched_waits_.begin(), unmatched_waits_.end());
  std::sort(unmatched_signals_.begin(), unmatched_signals_.end());
  std::sort(token_pairs_.begin(), token_pairs_.end());

  // Kahn's topological order; what never becomes ready is stuck (unmatched wait or a cycle).
  std::vector<std::vector<size_t>> succ(n);
  std::vector<uint32_t> indegree(n, 0);
  for (size_t i = 0; i < n; ++i) {
    auto& p = preds_[i];
    std::sort(p.begin(), p.end());
    p.erase(std::unique(p.begin(), p.end()), p.end());
    for (size_t j : p) succ[j].push_back(i);
    indegree[i] = static_cast<uint32_t>(p.size()) + missing[i];
  }
  std::deque<size_t> ready;
  for (size_t i = 0; i < n; ++i) {
    if (indegree[i] == 0) ready.push_back(i);
  }
  std::vector<uint8_t> done(n, 0);
  while (!ready.empty()) {
    const size_t i = ready.front();
    ready.pop_front();
    done[i] = 1;
    Clock c{};
    for (size_t j : preds_[i]) {
      for (unsigned q = 0; q < Q; ++q) c[q] = std::max(c[q], clock_[j][q]);
    }
    if (seq_[i] != 0) c[queue_[i]] = seq_[i];
    clock_[i] = c;
    for (size_t s : succ[i]) {
      if (--indegree[s] == 0) ready.push_back(s);
    }
  }
  for (size_t i = 0; i < n; ++i) {
    if (!done[i]) stuck_.push_back(i);
  }
}

void TokenOrderBuilder::reserve(size_t instructions) {
  clock_.reserve(instructions);
  queue_.reserve(instructions);
  for (auto& q : by_queue_) q.reserve(instructions / 2);
}

void TokenOrderBuilder::add_token(size_t signaller, unsigned q) {
  const unsigned p = signaller < queue_.size() ? queue_[signaller] : kNumQueues;
  if (p >= kNumQueues || q >= kNumQueues || p == q)
    throw Error(fmt::format("token order: no token from instruction {} to queue {}: tokens go between two "
                            "different queues (load, compute, store)",
                            signaller, q));
  if (pending_waits_[q] >> p & 1u)
    throw Error(fmt::format("token order: the next {} instruction already waits on {}", to_string(Queue(q)),
                            to_string(Queue(p))));
  if (int64_t(signaller) <= last_signal_[p][q])
    throw Error(fmt::format("token order: a signal {}->{} from instruction {} would not pair in program order "
                            "(instruction {} signals that channel already)",
                            to_string(Queue(p)), to_string(Queue(q)), signaller, last_signal_[p][q]));
  last_signal_[p][q] = static_cast<int64_t>(signaller);
  pending_waits_[q] |= 1u << p;
  Clock& next = next_[q];
  const Clock& c = clock_[signaller];
  for (unsigned r = 0; r < kNumQueues; ++r) next[r] = std::max(next[r], c[r]);
}

bool TokenOrderBuilder::happens_before(size_t a, size_t b) const {
  const unsigned qa = queue_[a], qb = queue_[b];
  if (a == b || qa >= kNumQueues) return false;
  const uint32_t seq_a = clock_[a][qa];
  return clock_[b][qa] >= seq_a && (qa != qb || seq_a < clock_[b][qb]);
}

}  // namespace npuforge::isa
