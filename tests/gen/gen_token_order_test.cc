// isa::TokenOrderBuilder, the incremental happens-before the generator adds its tokens with,
// against isa::TokenOrder (the model the checkers use) on random programs built the way the
// generator builds them: with no barrier the two relations are equal, with barriers the
// builder's is contained in TokenOrder's; every token pairs in program order.
#include <gtest/gtest.h>

#include "isa/token_order.h"
#include "util/error.h"
#include "util/rng.h"

namespace npuforge::gen {
namespace {

const isa::Isa& isa() { return isa::builtin_isa(); }

struct Built {
  std::vector<isa::Instruction> instrs;
  isa::TokenOrderBuilder order;
};

// A random program: each memory instruction must follow random earlier instructions of the
// other queues and gets tokens exactly where the builder says it does not already.
Built build(uint64_t seed, size_t n, bool barriers) {
  Rng rng(seed);
  const isa::InstrSpec* by_queue[] = {&isa().require("load"), &isa().require("eltwise"), &isa().require("store")};
  Built b;
  for (size_t i = 0; i < n; ++i) {
    const uint64_t pick = rng.below(20);
    if (pick == 0 || (barriers && pick == 1)) {
      b.instrs.push_back(isa::Instruction::make(isa().require(pick == 0 ? "nop" : "sync")));
      b.order.append(isa::Queue::Control);
      continue;
    }
    const auto q = static_cast<unsigned>(rng.below(3));
    isa::Instruction in = isa::Instruction::make(*by_queue[q]);
    for (unsigned p = 0; p < 3; ++p) {
      if (p == q || b.order.count(p) == 0 || !rng.chance(0.4)) continue;
      const auto seq = static_cast<uint32_t>(1 + rng.below(b.order.count(p)));
      if (b.order.follows(q, p, seq)) continue;
      const size_t x = b.order.instr(p, seq);
      b.order.add_token(x, q);
      b.instrs[x].raw[isa::kSignalSlot] |= 1u << q;
      in.raw[isa::kWaitSlot] |= 1u << p;
    }
    b.instrs.push_back(in);
    b.order.append(in.spec->queue);
  }
  return b;
}

TEST(TokenOrderBuilder, EqualsTokenOrderWithoutBarriers) {
  size_t tokens = 0, ordered = 0;
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    const Built b = build(seed, 150, false);
    const isa::TokenOrder order(b.instrs);
    EXPECT_TRUE(order.unmatched_waits().empty()) << seed;
    EXPECT_TRUE(order.unmatched_signals().empty()) << seed;
    EXPECT_TRUE(order.stuck().empty()) << seed;
    for (auto [signal, wait] : order.token_pairs()) EXPECT_LT(signal, wait) << seed;
    tokens += order.token_pairs().size();
    for (size_t a = 0; a < b.instrs.size(); ++a)
      for (size_t c = 0; c < b.instrs.size(); ++c) {
        ASSERT_EQ(b.order.happens_before(a, c), order.happens_before(a, c)) << seed << ": " << a << " -> " << c;
        ordered += order.happens_before(a, c);
      }
  }
  EXPECT_GT(tokens, 1000u);  // the relation is not trivially queue order
  EXPECT_GT(ordered, 10000u);
}

TEST(TokenOrderBuilder, ContainedInTokenOrderWithBarriers) {
  size_t extra = 0;  // orderings only the barriers give
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    const Built b = build(seed, 150, true);
    const isa::TokenOrder order(b.instrs);
    EXPECT_TRUE(order.unmatched_waits().empty() && order.unmatched_signals().empty()) << seed;
    for (size_t a = 0; a < b.instrs.size(); ++a)
      for (size_t c = 0; c < b.instrs.size(); ++c) {
        if (b.order.happens_before(a, c)) {
          ASSERT_TRUE(order.happens_before(a, c)) << seed << ": " << a << " -> " << c;
        }
        extra += order.happens_before(a, c) && !b.order.happens_before(a, c);
      }
  }
  EXPECT_GT(extra, 0u);  // the barriers were there and ordered something
}

TEST(TokenOrderBuilder, RejectsTokensThatCannotPair) {
  isa::TokenOrderBuilder o;
  o.append(isa::Queue::Load);     // 0
  o.append(isa::Queue::Load);     // 1
  o.append(isa::Queue::Control);  // 2
  o.add_token(1, 1);              // the next compute instruction waits on instruction 1
  EXPECT_THROW(o.add_token(0, 1), Error);  // a second wait on load for the same instruction
  o.append(isa::Queue::Compute);  // 3
  EXPECT_EQ(o.clock(3)[0], 2u);
  EXPECT_TRUE(o.happens_before(1, 3));
  EXPECT_TRUE(o.happens_before(0, 3));
  EXPECT_FALSE(o.happens_before(3, 1));
  try {
    o.add_token(0, 1);  // before the channel's last signaller: would pair out of order
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("would not pair in program order"), std::string::npos) << e.what();
  }
  EXPECT_THROW(o.add_token(3, 1), Error);  // same queue
  EXPECT_THROW(o.add_token(2, 1), Error);  // a control instruction sends no token
  EXPECT_THROW(o.add_token(9, 1), Error);  // not appended yet
}

}  // namespace
}  // namespace npuforge::gen
