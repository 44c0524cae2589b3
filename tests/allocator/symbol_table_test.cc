// The symbol table: dependent operands share a node, reference counts free at zero, and
// every misuse is an npuforge::Error naming the symbol.
#include "allocator/symbol_table.h"

#include <gtest/gtest.h>

#include "util/error.h"

namespace npuforge::allocator {
namespace {

Allocator make() { return Allocator(SramAddr{0}, Bytes{4096}, Bytes{64}, Policy::FirstFit); }

// Runs `f`, expects an Error whose message contains every one of `parts`.
template <typename F>
void expect_error(F f, std::initializer_list<std::string_view> parts) {
  try {
    f();
    ADD_FAILURE() << "no error thrown";
  } catch (const Error& e) {
    const std::string m = e.what();
    for (auto p : parts) EXPECT_NE(m.find(p), std::string::npos) << "'" << p << "' not in: " << m;
  }
}

TEST(SymbolTable, DefineLookupAndShareTheNode) {
  Allocator a = make();
  SymbolTable t(a);
  auto r = t.define("act0", Bytes{100}, 2);
  ASSERT_TRUE(r.ok());
  // The LOAD's destination and the GEMM's source both name %act0: one node, one address.
  EXPECT_EQ(t.lookup("act0"), r.addr);
  const SymbolId id = *t.find_id("act0");
  EXPECT_EQ(t.lookup(id), r.addr);
  EXPECT_EQ(t.node(id), r.node);
  EXPECT_EQ(t.placement(id).size, Bytes{100});
  EXPECT_EQ(t.placement(id).padded, Bytes{128});
  EXPECT_EQ(t.intern("act0"), id);
  EXPECT_EQ(t.name(id), "act0");
  auto r2 = t.define("w0", Bytes{64});
  EXPECT_NE(r2.addr, r.addr);
  EXPECT_EQ(t.live_count(), 2u);
  EXPECT_EQ(a.check_invariants(), "");
}

TEST(SymbolTable, ConsumeFreesAtZeroAndMerges) {
  Allocator a = make();
  SymbolTable t(a);
  std::vector<AllocEventKind> events;
  a.set_event_callback([&](const AllocEvent& e) { events.push_back(e.kind); });
  t.define("x", Bytes{64}, 2);
  t.define("y", Bytes{64}, 1);
  const SymbolId x = *t.find_id("x");
  EXPECT_FALSE(t.consume(x));
  EXPECT_EQ(t.uses(x), 1u);
  EXPECT_TRUE(t.is_live(x));
  t.add_use(x);
  EXPECT_FALSE(t.consume("x"));
  EXPECT_TRUE(t.consume("x"));
  EXPECT_FALSE(t.is_live(x));
  EXPECT_EQ(events.back(), AllocEventKind::FreeNoMerge);
  EXPECT_TRUE(t.consume("y"));  // y merges with free x before it and the free tail
  EXPECT_EQ(events.back(), AllocEventKind::MergeBoth);
  EXPECT_EQ(a.stats().used, Bytes{0});
  EXPECT_EQ(t.live_count(), 0u);
  // A freed symbol may be defined again: a new node at the start of the merged space.
  auto again = t.define("x", Bytes{64}, 1);
  EXPECT_EQ(again.addr, SramAddr{0});
  EXPECT_EQ(a.check_invariants(), "");
}

TEST(SymbolTable, UseBeforeDefine) {
  Allocator a = make();
  SymbolTable t(a);
  expect_error([&] { t.lookup("nope"); }, {"'%nope'", "unknown symbol"});
  const SymbolId id = t.intern("later");
  expect_error([&] { t.lookup(id); }, {"'%later'", "before define"});
  expect_error([&] { t.add_use(id); }, {"'%later'", "before define"});
  expect_error([&] { t.lookup(SymbolId{99}); }, {"unknown symbol id 99"});
}

TEST(SymbolTable, DefineTwiceWhileLive) {
  Allocator a = make();
  SymbolTable t(a);
  t.define("act", Bytes{64}, 1);
  expect_error([&] { t.define("act", Bytes{64}, 1); }, {"'%act'", "defined twice while live"});
  t.consume("act");
  EXPECT_TRUE(t.define("act", Bytes{64}, 1).ok());
}

TEST(SymbolTable, ConsumePastZero) {
  Allocator a = make();
  SymbolTable t(a);
  t.define("keep", Bytes{64}, 0);  // no consumers: stays live until release
  expect_error([&] { t.consume("keep"); }, {"'%keep'", "consume past zero"});
  EXPECT_TRUE(t.is_live(*t.find_id("keep")));
  t.define("once", Bytes{64}, 1);
  t.consume("once");
  expect_error([&] { t.consume("once"); }, {"'%once'", "no live buffer"});
}

TEST(SymbolTable, FreeOfUnknownSymbol) {
  Allocator a = make();
  SymbolTable t(a);
  expect_error([&] { t.release("ghost"); }, {"'%ghost'", "free of an unknown symbol"});
  expect_error([&] { t.consume("ghost"); }, {"'%ghost'", "unknown symbol"});
  t.define("b", Bytes{64}, 3);
  t.release("b");
  EXPECT_EQ(a.stats().used, Bytes{0});
  expect_error([&] { t.release("b"); }, {"'%b'", "no live buffer"});
}

TEST(SymbolTable, UsesDisagreeOnSize) {
  Allocator a = make();
  SymbolTable t(a);
  t.define("act", Bytes{256}, 0);
  const SymbolId id = *t.find_id("act");
  t.add_use(id, Bytes{256});
  EXPECT_EQ(t.uses(id), 1u);
  expect_error([&] { t.add_use(id, Bytes{200}); }, {"'%act'", "disagree", "256", "200"});
  EXPECT_EQ(t.uses(id), 1u);  // the failed use did not count
  expect_error([&] { t.check_size(id, Bytes{512}); }, {"'%act'", "512"});
}

TEST(SymbolTable, OutOfMemoryLeavesTableUnchanged) {
  Allocator a = make();
  SymbolTable t(a);
  t.define("big", Bytes{4000}, 1);
  auto r = t.define("more", Bytes{200}, 1);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.oom.request, Bytes{200});
  EXPECT_FALSE(t.is_live(*t.find_id("more")));
  EXPECT_EQ(t.live_count(), 1u);
  t.consume("big");
  EXPECT_TRUE(t.define("more", Bytes{200}, 1).ok());  // defining after the OOM works
  EXPECT_EQ(t.live_symbols().size(), 1u);
  EXPECT_FALSE(t.find("big").has_value());
  EXPECT_TRUE(t.find("more").has_value());
}

}  // namespace
}  // namespace npuforge::allocator
