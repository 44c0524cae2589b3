// The symbol table: dependent operands share a node, reference counts free at zero, and
// every misuse is an npuforge::Error naming the symbol; unnamed symbols and versions (the
// generator's), last placements, node owners and a pluggable placer.
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

// Unnamed symbols get ids only when placed: a failed define_new leaves no hole, so a
// client may number its buffers by id.
TEST(SymbolTable, DefineNewIdsStayDenseThroughOutOfMemory) {
  Allocator a = make();
  SymbolTable t(a);
  const auto x = t.define_new(Bytes{1000}, 1);
  ASSERT_TRUE(x.ok());
  EXPECT_EQ(x.id, SymbolId{0});
  const auto big = t.define_new(Bytes{4000}, 1);
  EXPECT_FALSE(big.ok());
  EXPECT_EQ(big.alloc.oom.request, Bytes{4000});
  EXPECT_EQ(t.size(), 1u);
  const auto y = t.define_new(Bytes{64});
  ASSERT_TRUE(y.ok());
  EXPECT_EQ(y.id, SymbolId{1});
  EXPECT_EQ(t.name(y.id), "s1");
  t.set_namer([](SymbolId origin) { return "buf" + std::to_string(origin.value); });
  EXPECT_EQ(t.name(y.id), "buf1");
  EXPECT_EQ(t.placement(x.id).padded, Bytes{1024});
  EXPECT_EQ(t.live_count(), 2u);
  // The id checks compare with a count kept beside the entries: the first id past the
  // last one created (the failed define made none) is unknown to every lookup.
  const SymbolId next{static_cast<uint32_t>(t.size())};
  EXPECT_EQ(next, SymbolId{2});
  expect_error([&] { t.last_placement(next); }, {"unknown symbol id 2"});
  expect_error([&] { t.placed(next); }, {"unknown symbol id 2"});
  expect_error([&] { t.consume(next); }, {"unknown symbol id 2"});
  expect_error([&] { t.define_version(next, Bytes{64}); }, {"unknown symbol id 2"});
}

// A version is the same value at another place: its own node and placement, named
// origin@k; the chain counts on from its latest version.
TEST(SymbolTable, VersionsForCompactionAndSpill) {
  Allocator a = make();
  SymbolTable t(a);
  const auto pad = t.define_new(Bytes{128});
  const auto v0 = t.define("act", Bytes{100}, 2);
  const SymbolId act = *t.find_id("act");
  ASSERT_TRUE(pad.ok() && v0.ok());
  t.release(pad.id);
  // Compaction: move it down to address 0, then free the old copy.
  const auto v1 = t.define_version_at(act, SramAddr{0}, Bytes{100}, t.uses(act));
  ASSERT_TRUE(v1.ok());
  EXPECT_EQ(v1.alloc.addr, SramAddr{0});
  t.release(act);
  EXPECT_EQ(t.name(v1.id), "act@1");
  EXPECT_EQ(t.origin(v1.id), act);
  EXPECT_EQ(t.version(v1.id), 1u);
  EXPECT_EQ(t.find_id("act@1"), v1.id);
  EXPECT_EQ(t.uses(v1.id), 2u);
  // Spill: free it; reload: a new version wherever the allocator says.
  t.release(v1.id);
  const auto v2 = t.define_version(v1.id, Bytes{100}, 2);
  ASSERT_TRUE(v2.ok());
  EXPECT_EQ(t.name(v2.id), "act@2");
  // Unnamed chains use the namer; an unknown `of` is an error before anything is placed.
  const auto u = t.define_new(Bytes{64});
  const auto u1 = t.define_version(u.id, Bytes{64});
  t.set_namer([](SymbolId origin) { return "ld" + std::to_string(origin.value); });
  EXPECT_EQ(t.name(u1.id), "ld" + std::to_string(u.id.value) + "@1");
  const uint64_t used = a.stats().used.value;
  expect_error([&] { t.define_version(SymbolId{99}, Bytes{64}); }, {"unknown symbol id 99"});
  EXPECT_EQ(a.stats().used.value, used);
  expect_error([&] { t.define_version_at(u.id, SramAddr{3}, Bytes{64}); }, {"alloc_at", "0x3"});
  EXPECT_EQ(a.check_invariants(), "");
}

// The fix-up of a finished program needs where freed symbols were; owner() maps a node
// back to its symbol (compaction walks the allocator's nodes).
TEST(SymbolTable, LastPlacementAndOwner) {
  Allocator a = make();
  SymbolTable t(a);
  const auto x = t.define_new(Bytes{200}, 1);
  const NodeId node = t.node(x.id);
  EXPECT_EQ(t.owner(node), x.id);
  EXPECT_TRUE(t.consume(x.id));
  EXPECT_FALSE(t.owner(node).has_value());
  expect_error([&] { t.placement(x.id); }, {"'%s0'", "before define"});
  ASSERT_TRUE(t.last_placement(x.id).has_value());
  EXPECT_EQ(t.last_placement(x.id)->addr, x.alloc.addr);
  EXPECT_EQ(t.placed(x.id).size, Bytes{200});
  EXPECT_EQ(t.placed(x.id).padded, Bytes{256});
  const SymbolId never = t.intern("never");
  EXPECT_FALSE(t.last_placement(never).has_value());
  expect_error([&] { t.placed(never); }, {"'%never'", "never placed"});
  // The node's slot is reused by the next allocation: the stale id has no owner.
  const auto y = t.define_new(Bytes{64});
  EXPECT_EQ(t.owner(t.node(y.id)), y.id);
  EXPECT_FALSE(t.owner(node).has_value());
  EXPECT_FALSE(t.owner(NodeId{}).has_value());
}

// A placer between the table and the allocator: what it reports is what the table
// records (a planted bug must reach the memory map), frees go to the real nodes.
class ShiftingPlacer final : public Placer {
 public:
  explicit ShiftingPlacer(Allocator& a) : a_(a) {}
  AllocResult alloc(Bytes size) override {
    AllocResult r = a_.alloc(size);
    if (r.ok()) r.addr = r.addr + Bytes{64};
    return r;
  }
  AllocResult alloc_at(SramAddr addr, Bytes size) override { return a_.alloc_at(addr, size); }
  void free(NodeId node) override {
    ++frees;
    a_.free(node);
  }
  Allocator& allocator() override { return a_; }
  int frees = 0;

 private:
  Allocator& a_;
};

TEST(SymbolTable, PluggablePlacer) {
  Allocator a = make();
  ShiftingPlacer shifting(a);
  SymbolTable t(shifting);
  EXPECT_EQ(&t.allocator(), &a);
  const auto x = t.define_new(Bytes{64}, 1);
  EXPECT_EQ(t.lookup(x.id), SramAddr{64});  // the placer's word, not the node's address
  EXPECT_EQ(a.address(t.node(x.id)), SramAddr{0});
  t.consume(x.id);
  EXPECT_EQ(shifting.frees, 1);
  EXPECT_EQ(a.stats().used, Bytes{0});
  const auto at = t.define_at(t.intern("fixed"), SramAddr{512}, Bytes{64});
  EXPECT_EQ(at.addr, SramAddr{512});
  EXPECT_EQ(t.lookup("fixed"), SramAddr{512});
}

}  // namespace
}  // namespace npuforge::allocator
