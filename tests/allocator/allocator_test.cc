// Unit tests of the linked-list allocator: each event case, each policy's choice, errors,
// statistics, and check_invariants() catching planted corruption.
#include "allocator/allocator.h"

#include <gtest/gtest.h>

#include <vector>

#include "util/error.h"

namespace npuforge::allocator {

// Reaches into the private state to plant bugs for check_invariants() to find.
struct AllocatorTestPeer {
  static void set_size(Allocator& a, NodeId id, uint64_t size) { a.pool_[id.index].size = size; }
  static void set_in_use(Allocator& a, NodeId id, bool u) { a.pool_[id.index].in_use = u; }
  static void set_aggregate(Allocator& a, uint64_t max) { a.by_addr_.max_[0] = uint32_t(max); }
  static void set_start(Allocator& a, NodeId id, uint64_t s) { a.pool_[id.index].start = s; }
  static void drift_used_bytes(Allocator& a, uint64_t by) { a.used_ += by; }
  static void drift_used_nodes(Allocator& a, uint64_t by) { a.used_nodes_ += by; }
  static void leak_slot(Allocator& a) { a.free_slots_.pop_back(); }
};

namespace {

constexpr Bytes kUnit{64};

struct Recorder {
  std::vector<AllocEvent> events;
  void attach(Allocator& a) {
    a.set_event_callback([this](const AllocEvent& e) { events.push_back(e); });
  }
  std::vector<AllocEventKind> kinds() const {
    std::vector<AllocEventKind> k;
    for (const auto& e : events) k.push_back(e.kind);
    return k;
  }
};

Allocator make(Policy p = Policy::FirstFit, uint64_t units = 16) {
  return Allocator(SramAddr{0x1000}, Bytes{units * kUnit.value}, kUnit, p);
}

AllocResult must(AllocResult r) {
  EXPECT_TRUE(r.ok()) << r.oom.message();
  return r;
}

TEST(Allocator, StartsAsOneFreeNode) {
  Allocator a = make();
  auto nodes = a.nodes();
  ASSERT_EQ(nodes.size(), 1u);
  EXPECT_EQ(nodes[0].addr, SramAddr{0x1000});
  EXPECT_EQ(nodes[0].size, Bytes{1024});
  EXPECT_FALSE(nodes[0].in_use);
  EXPECT_EQ(a.check_invariants(), "");
}

TEST(Allocator, RejectsBadGeometry) {
  EXPECT_THROW(Allocator(SramAddr{0}, Bytes{1024}, Bytes{48}, Policy::FirstFit), Error);
  EXPECT_THROW(Allocator(SramAddr{0}, Bytes{1024}, Bytes{0}, Policy::FirstFit), Error);
  EXPECT_THROW(Allocator(SramAddr{32}, Bytes{1024}, Bytes{64}, Policy::FirstFit), Error);
  EXPECT_THROW(Allocator(SramAddr{0}, Bytes{1000}, Bytes{64}, Policy::FirstFit), Error);
  EXPECT_THROW(Allocator(SramAddr{0}, Bytes{0}, Bytes{64}, Policy::FirstFit), Error);
  EXPECT_THROW(Allocator(SramAddr{0xffff0000u}, Bytes{1u << 17}, Bytes{64}, Policy::FirstFit),
               Error);
  try {
    Allocator(SramAddr{32}, Bytes{1024}, Bytes{64}, Policy::FirstFit);
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("base"), std::string::npos) << e.what();
  }
}

TEST(Allocator, ParsePolicy) {
  EXPECT_EQ(parse_policy("first-fit"), Policy::FirstFit);
  EXPECT_EQ(parse_policy("Best_Fit"), Policy::BestFit);
  EXPECT_EQ(parse_policy("nextfit"), Policy::NextFit);
  for (Policy p : {Policy::FirstFit, Policy::BestFit, Policy::NextFit}) {
    EXPECT_EQ(parse_policy(policy_name(p)), p);
  }
  try {
    parse_policy("worst-fit");
    FAIL() << "no throw";
  } catch (const Error& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("worst-fit"), std::string::npos) << m;
    EXPECT_NE(m.find("first-fit, best-fit, next-fit"), std::string::npos) << m;
  }
}

TEST(Allocator, PadsToAlignmentUnit) {
  Allocator a = make();
  EXPECT_EQ(a.pad(Bytes{0}), kUnit);
  EXPECT_EQ(a.pad(Bytes{1}), kUnit);
  EXPECT_EQ(a.pad(Bytes{64}), kUnit);
  EXPECT_EQ(a.pad(Bytes{65}), Bytes{128});
  auto r = must(a.alloc(Bytes{100}));
  EXPECT_EQ(r.padded, Bytes{128});
  EXPECT_EQ(r.addr, SramAddr{0x1000});
  EXPECT_EQ(a.size(r.node), Bytes{128});
  auto z = must(a.alloc(Bytes{0}));  // zero bytes still get their own unit
  EXPECT_EQ(z.addr, SramAddr{0x1080});
  EXPECT_EQ(z.padded, kUnit);
  EXPECT_EQ(a.check_invariants(), "");
}

TEST(Allocator, SplitKeepsFrontAndMakesFreeSuccessor) {
  Allocator a = make();
  Recorder rec;
  rec.attach(a);
  auto r = must(a.alloc(Bytes{128}));
  ASSERT_EQ(rec.kinds(), std::vector{AllocEventKind::Split});
  EXPECT_EQ(rec.events[0].size, Bytes{1024 - 128});  // the remainder
  EXPECT_EQ(rec.events[0].node, r.node);
  auto nodes = a.nodes();
  ASSERT_EQ(nodes.size(), 2u);
  EXPECT_EQ(nodes[0].id, r.node);
  EXPECT_TRUE(nodes[0].in_use);
  EXPECT_EQ(nodes[1].addr, SramAddr{0x1080});
  EXPECT_FALSE(nodes[1].in_use);
  EXPECT_EQ(a.check_invariants(), "");
}

TEST(Allocator, ExactFitTakesNodeWhole) {
  Allocator a = make();
  auto x = must(a.alloc(Bytes{128}));
  must(a.alloc(Bytes{64}));
  a.free(x.node);  // a 128 B hole at the front
  Recorder rec;
  rec.attach(a);
  auto y = must(a.alloc(Bytes{128}));
  EXPECT_EQ(rec.kinds(), std::vector{AllocEventKind::ExactFit});
  EXPECT_EQ(y.addr, SramAddr{0x1000});
  EXPECT_EQ(a.nodes().size(), 3u);
  EXPECT_EQ(a.check_invariants(), "");
}

TEST(Allocator, SkipsTooSmallNodes) {
  Allocator a = make();
  std::vector<AllocResult> r;
  for (int i = 0; i < 5; ++i) r.push_back(must(a.alloc(kUnit)));
  a.free(r[1].node);
  a.free(r[3].node);  // holes of one unit at 0x1040 and 0x10c0
  Recorder rec;
  rec.attach(a);
  auto big = must(a.alloc(Bytes{128}));
  EXPECT_EQ(big.addr, SramAddr{0x1140});
  ASSERT_EQ(rec.kinds(), (std::vector{AllocEventKind::SkippedTooSmall, AllocEventKind::Split}));
  EXPECT_EQ(rec.events[0].count, 2u);
  EXPECT_EQ(a.check_invariants(), "");
}

TEST(Allocator, FreeMergesPrevNextBothOrNone) {
  Allocator a = make();
  std::vector<AllocResult> r;
  for (int i = 0; i < 6; ++i) r.push_back(must(a.alloc(kUnit)));
  Recorder rec;
  rec.attach(a);
  a.free(r[1].node);  // neighbours 0 and 2 in use
  a.free(r[2].node);  // merges into free predecessor 1
  a.free(r[4].node);  // neighbours 3 (used) and 5 (used)
  a.free(r[3].node);  // free 1-2 before, free 4 after
  a.free(r[5].node);  // prev is 1..4 free, next is the free tail: both
  a.free(r[0].node);  // only a free successor
  EXPECT_EQ(rec.kinds(),
            (std::vector{AllocEventKind::FreeNoMerge, AllocEventKind::MergePrev,
                         AllocEventKind::FreeNoMerge, AllocEventKind::MergeBoth,
                         AllocEventKind::MergeBoth, AllocEventKind::MergeNext}));
  EXPECT_EQ(rec.events.back().size, Bytes{1024});
  EXPECT_EQ(a.nodes().size(), 1u);
  EXPECT_EQ(a.check_invariants(), "");
}

TEST(Allocator, MergeNextAlone) {
  Allocator a = make(Policy::FirstFit, 4);
  auto x = must(a.alloc(kUnit));
  auto y = must(a.alloc(kUnit));
  must(a.alloc(kUnit));
  a.free(y.node);
  Recorder rec;
  rec.attach(a);
  a.free(x.node);
  EXPECT_EQ(rec.kinds(), std::vector{AllocEventKind::MergeNext});
  EXPECT_EQ(rec.events[0].size, Bytes{128});
  EXPECT_EQ(rec.events[0].addr, SramAddr{0x1000});
  EXPECT_EQ(a.check_invariants(), "");
}

TEST(Allocator, OutOfMemoryIsAResult) {
  Allocator a = make(Policy::FirstFit, 4);
  auto x = must(a.alloc(kUnit));
  must(a.alloc(kUnit));
  auto z = must(a.alloc(kUnit));
  must(a.alloc(kUnit));
  a.free(x.node);
  a.free(z.node);  // 128 B free in two separate units
  Recorder rec;
  rec.attach(a);
  auto r = a.alloc(Bytes{100});
  EXPECT_FALSE(r.ok());
  EXPECT_FALSE(r);
  EXPECT_EQ(r.oom.request, Bytes{100});
  EXPECT_EQ(r.oom.padded, Bytes{128});
  EXPECT_EQ(r.oom.largest_free, kUnit);
  EXPECT_EQ(r.oom.free_total, Bytes{128});
  EXPECT_EQ(r.oom.free_nodes, 2u);
  EXPECT_EQ(rec.kinds(), std::vector{AllocEventKind::OutOfMemory});
  std::string text = a.describe(r.oom);
  EXPECT_NE(text.find("request 100 B"), std::string::npos) << text;
  EXPECT_NE(text.find("0x00001040 +64 used"), std::string::npos) << text;
  EXPECT_EQ(a.stats().failed, 1u);
  EXPECT_FALSE(a.alloc(Bytes{1u << 20}).ok());  // larger than the SRAM
  EXPECT_FALSE(a.alloc(Bytes{UINT64_MAX}).ok());
  EXPECT_EQ(a.check_invariants(), "");
}

TEST(Allocator, BestFitTakesSmallestLowestOnTies) {
  Allocator a = make(Policy::BestFit, 32);
  std::vector<AllocResult> r;
  for (uint64_t units : {3, 1, 2, 1, 2, 1, 4, 1}) r.push_back(must(a.alloc(Bytes{units * 64})));
  a.free(r[0].node);  // 3-unit hole at 0
  a.free(r[2].node);  // 2-unit hole
  a.free(r[4].node);  // 2-unit hole, higher
  auto got = must(a.alloc(Bytes{128}));
  EXPECT_EQ(got.addr, a.nodes()[2].addr);
  EXPECT_EQ(got.addr, SramAddr{0x1000 + 4 * 64});
  auto three = must(a.alloc(Bytes{129}));  // needs 3 units: the 3-unit hole, not the tail
  EXPECT_EQ(three.addr, SramAddr{0x1000});
  EXPECT_EQ(a.check_invariants(), "");
}

TEST(Allocator, NextFitContinuesAndWraps) {
  Allocator a = make(Policy::NextFit, 8);
  std::vector<AllocResult> r;
  for (int i = 0; i < 8; ++i) r.push_back(must(a.alloc(kUnit)));
  a.free(r[1].node);
  a.free(r[5].node);
  EXPECT_EQ(must(a.alloc(kUnit)).addr, SramAddr{0x1000 + 1 * 64});  // wrapped from the top
  EXPECT_EQ(must(a.alloc(kUnit)).addr, SramAddr{0x1000 + 5 * 64});  // continues after 1
  a.free(r[0].node);
  a.free(r[7].node);
  Recorder rec;
  rec.attach(a);
  EXPECT_EQ(must(a.alloc(kUnit)).addr, SramAddr{0x1000 + 7 * 64});  // not back to 0
  EXPECT_EQ(rec.kinds(), std::vector{AllocEventKind::ExactFit});
  EXPECT_EQ(a.check_invariants(), "");
}

TEST(Allocator, FirstFitPrefersLowestAddress) {
  Allocator a = make(Policy::FirstFit, 16);
  std::vector<AllocResult> r;
  for (uint64_t units : {1, 1, 4, 1}) r.push_back(must(a.alloc(Bytes{units * 64})));
  a.free(r[2].node);  // 4-unit hole
  a.free(r[0].node);  // 1-unit hole below it
  EXPECT_EQ(must(a.alloc(Bytes{128})).addr, SramAddr{0x1000 + 2 * 64});
  EXPECT_EQ(must(a.alloc(Bytes{64})).addr, SramAddr{0x1000});
}

TEST(Allocator, DoubleFreeAndStaleIdsThrow) {
  Allocator a = make();
  auto x = must(a.alloc(kUnit));
  a.free(x.node);
  EXPECT_THROW(a.free(x.node), Error);
  EXPECT_FALSE(a.is_live(x.node));
  auto y = must(a.alloc(kUnit));  // same slot, new generation
  EXPECT_EQ(y.node.index, x.node.index);
  EXPECT_THROW(a.free(x.node), Error);
  EXPECT_THROW(a.address(x.node), Error);
  EXPECT_THROW(a.free(NodeId{}), Error);
  EXPECT_EQ(a.address(y.node), SramAddr{0x1000});
  a.reset();
  EXPECT_FALSE(a.is_live(y.node));
  EXPECT_EQ(a.check_invariants(), "");
}

TEST(Allocator, Statistics) {
  Allocator a = make(Policy::FirstFit, 16);
  std::vector<AllocResult> r;
  for (int i = 0; i < 4; ++i) r.push_back(must(a.alloc(Bytes{128})));
  a.free(r[1].node);
  Stats s = a.stats();
  EXPECT_EQ(s.capacity, Bytes{1024});
  EXPECT_EQ(s.used, Bytes{384});
  EXPECT_EQ(s.free, Bytes{640});
  EXPECT_EQ(s.largest_free, Bytes{512});
  EXPECT_EQ(s.free_nodes, 2u);
  EXPECT_EQ(s.used_nodes, 3u);
  EXPECT_DOUBLE_EQ(s.external_fragmentation, 1.0 - 512.0 / 640.0);
  EXPECT_EQ(s.high_water, Bytes{512});
  EXPECT_EQ(s.high_water_end, SramAddr{0x1000 + 512});
  EXPECT_EQ(s.allocs, 4u);
  EXPECT_EQ(s.frees, 1u);
}

TEST(Allocator, AllocAtCarvesTheGivenRange) {
  Allocator a = make(Policy::FirstFit, 16);
  auto x = must(a.alloc_at(SramAddr{0x1000 + 4 * 64}, Bytes{128}));
  EXPECT_EQ(x.addr, SramAddr{0x1100});
  auto nodes = a.nodes();
  ASSERT_EQ(nodes.size(), 3u);
  EXPECT_EQ(nodes[0].size, Bytes{256});
  EXPECT_TRUE(nodes[1].in_use);
  EXPECT_EQ(a.check_invariants(), "");
  EXPECT_FALSE(a.alloc_at(SramAddr{0x1000 + 5 * 64}, Bytes{64}).ok());  // overlaps x
  EXPECT_FALSE(a.alloc_at(SramAddr{0x1000 + 3 * 64}, Bytes{128}).ok());
  EXPECT_TRUE(a.alloc_at(SramAddr{0x1000}, Bytes{256}).ok());  // exactly the front hole
  EXPECT_THROW(a.alloc_at(SramAddr{0x1001}, Bytes{64}), Error);
  EXPECT_THROW(a.alloc_at(SramAddr{0}, Bytes{64}), Error);
  EXPECT_EQ(a.check_invariants(), "");
}

TEST(Allocator, CheckInvariantsCatchesPlantedBugs) {
  auto setup = [] {
    Allocator a = make(Policy::FirstFit, 16);
    std::vector<NodeId> ids;
    for (int i = 0; i < 4; ++i) ids.push_back(must(a.alloc(kUnit)).node);
    a.free(ids[1]);
    return std::pair{std::move(a), ids};
  };
  {
    auto [a, ids] = setup();
    AllocatorTestPeer::set_size(a, ids[0], 128);  // overlaps its successor
    EXPECT_NE(a.check_invariants().find("expected start"), std::string::npos)
        << a.check_invariants();
  }
  {
    auto [a, ids] = setup();
    AllocatorTestPeer::set_in_use(a, ids[2], false);  // free but not in the indexes
    EXPECT_NE(a.check_invariants(), "");
  }
  {
    auto [a, ids] = setup();
    AllocatorTestPeer::set_aggregate(a, 1u << 20);
    EXPECT_NE(a.check_invariants().find("aggregate"), std::string::npos) << a.check_invariants();
  }
  {
    auto [a, ids] = setup();
    AllocatorTestPeer::set_start(a, ids[3], 0x1000 + 3 * 64 + 8);
    EXPECT_NE(a.check_invariants(), "");
  }
}

// Blind spots the tests above missed: each test below fails when the named one-line bug is planted.

// Best-fit reports the free nodes it passed over as too small (alloc_index.cc's rank).
TEST(Allocator, BestFitReportsSkippedTooSmall) {
  Allocator a = make(Policy::BestFit, 16);
  std::vector<AllocResult> r;
  for (int i = 0; i < 6; ++i) r.push_back(must(a.alloc(kUnit)));
  a.free(r[1].node);
  a.free(r[3].node);  // two one-unit holes; the tail (10 units) is the only fit for 2 units
  Recorder rec;
  rec.attach(a);
  auto big = must(a.alloc(Bytes{128}));
  EXPECT_EQ(big.addr, SramAddr{0x1000 + 6 * 64});
  ASSERT_EQ(rec.kinds(), (std::vector{AllocEventKind::SkippedTooSmall, AllocEventKind::Split}));
  EXPECT_EQ(rec.events[0].count, 2u);
  rec.events.clear();
  must(a.alloc(kUnit));  // an exact one-unit hole: nothing skipped
  EXPECT_EQ(rec.kinds(), (std::vector{AllocEventKind::ExactFit}));
  EXPECT_EQ(a.check_invariants(), "");
}

// alloc_at under best-fit (no address index: the list walk) at node boundaries.
TEST(Allocator, BestFitAllocAtNodeBoundaries) {
  Allocator a = make(Policy::BestFit, 16);
  auto x = must(a.alloc(Bytes{256}));
  must(a.alloc(Bytes{256}));  // y
  a.free(x.node);  // free [0x1000, 0x1100) | y [0x1100, 0x1200) | free [0x1200, 0x1400)
  EXPECT_FALSE(a.alloc_at(SramAddr{0x1100}, kUnit).ok());  // y's first byte
  EXPECT_FALSE(a.alloc_at(SramAddr{0x10c0}, Bytes{128}).ok());  // runs into y
  auto tail = must(a.alloc_at(SramAddr{0x1200}, kUnit));  // first byte after y
  EXPECT_EQ(tail.addr, SramAddr{0x1200});
  auto last = must(a.alloc_at(SramAddr{0x10c0}, kUnit));  // last unit before y
  EXPECT_EQ(last.addr, SramAddr{0x10c0});
  auto front = must(a.alloc_at(SramAddr{0x1000}, Bytes{192}));  // exactly the rest of the hole
  EXPECT_EQ(front.addr, SramAddr{0x1000});
  EXPECT_EQ(a.nodes().size(), 5u);
  EXPECT_EQ(a.check_invariants(), "");
}

// The end of the range: the last unit is allocatable, base + capacity is not an address.
TEST(Allocator, AllocAtEndOfRange) {
  for (Policy p : {Policy::FirstFit, Policy::BestFit, Policy::NextFit}) {
    Allocator a = make(p, 16);
    EXPECT_THROW(a.alloc_at(SramAddr{0x1000 + 16 * 64}, kUnit), Error) << policy_name(p);
    EXPECT_FALSE(a.alloc_at(SramAddr{0x1000 + 15 * 64}, Bytes{128}).ok()) << policy_name(p);
    auto last = must(a.alloc_at(SramAddr{0x1000 + 15 * 64}, kUnit));
    EXPECT_EQ(last.addr, SramAddr{0x1000 + 15 * 64});
    EXPECT_EQ(a.check_invariants(), "") << policy_name(p);
  }
}

// Merges release node slots; a slot neither listed nor recycled is a leak.
TEST(Allocator, CheckInvariantsBoundsTheNodePool) {
  Allocator a = make(Policy::FirstFit, 16);
  std::vector<NodeId> ids;
  for (int i = 0; i < 4; ++i) ids.push_back(must(a.alloc(kUnit)).node);
  for (NodeId id : ids) a.free(id);  // merges: slots go back to the pool
  EXPECT_EQ(a.check_invariants(), "");
  for (int i = 0; i < 4; ++i) must(a.alloc(kUnit));  // and are reused
  EXPECT_EQ(a.check_invariants(), "");
  AllocatorTestPeer::leak_slot(a);
  EXPECT_NE(a.check_invariants().find("node pool"), std::string::npos) << a.check_invariants();
}

TEST(Allocator, CheckInvariantsCatchesOneCounterDrifting) {
  {
    Allocator a = make();
    must(a.alloc(kUnit));
    AllocatorTestPeer::drift_used_bytes(a, 64);
    EXPECT_NE(a.check_invariants().find("B in use"), std::string::npos) << a.check_invariants();
  }
  {
    Allocator a = make();
    must(a.alloc(kUnit));
    AllocatorTestPeer::drift_used_nodes(a, 1);
    EXPECT_NE(a.check_invariants().find("used nodes"), std::string::npos) << a.check_invariants();
  }
}

// Every allocator plant of the catalogue breaks an invariant in a short scripted run (the
// same check the generator makes at the end of every program), and the run is clean without.
TEST(Allocator, EveryAllocatorPlantBreaksAnInvariant) {
  auto script = [](Plant plant) {
    Allocator a(SramAddr{0x1000}, Bytes{16 * 64}, kUnit, Policy::FirstFit);
    a.set_plant(plant);
    std::string first;  // the first broken invariant, checked after every step
    auto check = [&] {
      if (first.empty()) first = a.check_invariants();
    };
    std::vector<NodeId> ids;
    for (uint64_t size : {64, 100, 64, 128}) {
      ids.push_back(must(a.alloc(Bytes{size})).node);  // splits
      check();
    }
    a.free(ids[0]);
    check();
    must(a.alloc(Bytes{64}));  // exact fit into the first hole
    check();
    a.free(ids[2]);
    a.free(ids[1]);  // merges with its right neighbour
    check();
    a.free(ids[3]);  // merges with both
    check();
    return first;
  };
  EXPECT_EQ(script(Plant{}), "");
  for (const PlantInfo& p : plant_catalogue()) {
    if (p.layer != PlantLayer::Allocator) continue;
    EXPECT_NE(script(Plant{p.id}), "") << p.name;
  }
}

}  // namespace
}  // namespace npuforge::allocator
