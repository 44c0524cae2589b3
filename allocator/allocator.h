#pragma once
// The on-chip SRAM allocator (SEEDS.md method A, ARCHITECTURE.md "The allocator").
//
// The SRAM range [base, base + capacity) is an address-ordered doubly linked list of nodes
// {start, size, in_use, prev, next}; at start the whole range is one free node. The list is
// the single truth. An index over the *free* nodes keeps alloc and free O(log n):
//   - first-fit and next-fit: a treap by address, augmented with the largest free size
//     per subtree side, so "lowest address that fits" and "first that fits at or after the
//     cursor" descend it without visiting the smaller nodes one by one;
//   - best-fit: a treap by (size, address); the choice is a lower_bound on (request, 0).
// Each policy keeps only the index it queries.
// Nodes live in an index-based pool (no new/delete per node); a NodeId carries a
// generation so a stale id (its node was merged away and the slot reused) is detected.
//
// alloc(size): size is padded up to the alignment unit (0 counts as one unit). The chosen
// free node of exactly the padded size is taken whole (ExactFit); a larger one is split:
// the requested part stays this node (now in use) and the rest becomes a new free
// successor (Split). Free nodes the policy passed over because they were too small are
// reported as one SkippedTooSmall event with their count.
// free(node): marks it free and merges with a free predecessor and/or successor.
// Out of memory is a result (AllocResult::ok() false, with the request, the largest free
// node and the free total), never an exception.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "util/plant.h"
#include "util/rng.h"
#include "util/types.h"

namespace npuforge::allocator {

struct AllocatorTestPeer;  // tests plant bugs in the private state to test check_invariants()

enum class Policy : uint8_t {
  FirstFit,  // lowest-address free node that fits (the classic)
  BestFit,   // smallest free node that fits, lowest address on ties
  NextFit,   // first free node that fits at or after the end of the previous allocation,
             // wrapping around to the lowest address
};

// "first-fit", "best-fit", "next-fit" (also "first_fit", "firstfit", case-insensitive).
// Throws npuforge::Error listing the valid names for anything else.
Policy parse_policy(std::string_view name);
std::string_view policy_name(Policy policy);  // "first-fit", ...

// Handle of one node. Stable while the node is in use (an allocation keeps its id until
// it is freed); after free() the id is dead.
struct NodeId {
  static constexpr uint32_t kInvalidIndex = UINT32_MAX;
  uint32_t index = kInvalidIndex;
  uint32_t generation = 0;
  constexpr bool valid() const { return index != kInvalidIndex; }
  constexpr bool operator==(const NodeId&) const = default;
};

// Why an allocation failed: no free node of at least `padded` bytes.
struct OutOfMemory {
  Bytes request;       // as asked
  Bytes padded;        // after alignment padding
  Bytes largest_free;  // largest free node at the time
  Bytes free_total;    // sum of all free nodes
  uint64_t free_nodes = 0;
  std::string message() const;  // one line: request, padded, largest free, free total
};

struct AllocResult {
  NodeId node;       // invalid when out of memory
  SramAddr addr;     // start of the node (aligned)
  Bytes padded;      // bytes reserved (size rounded up to the alignment unit)
  OutOfMemory oom;   // filled only when !ok()
  bool ok() const { return node.valid(); }
  explicit operator bool() const { return ok(); }
};

struct Stats {
  Bytes capacity;
  Bytes used;            // sum of in-use nodes (padded sizes)
  Bytes free;            // capacity - used
  Bytes largest_free;    // largest free node
  uint64_t free_nodes = 0;
  uint64_t used_nodes = 0;
  double external_fragmentation = 0;  // 1 - largest_free / free; 0 when nothing is free
  Bytes high_water;                   // peak of `used` since construction/reset
  SramAddr high_water_end;            // highest end address ever allocated (base if none)
  uint64_t allocs = 0;                // successful allocations
  uint64_t frees = 0;
  uint64_t failed = 0;                // out-of-memory results
};

// What happened inside alloc/free, for functional coverage.
enum class AllocEventKind : uint8_t {
  ExactFit,         // a free node of exactly the padded size was taken whole
  Split,            // a larger free node was split; `size` is the remainder
  SkippedTooSmall,  // `count` free nodes were passed over as too small
  MergePrev,        // the freed node merged into its free predecessor
  MergeNext,        // the freed node absorbed its free successor
  MergeBoth,        // both at once
  FreeNoMerge,      // freed with both neighbours in use (or absent)
  OutOfMemory,      // no free node fits; `size` is the padded request
};
std::string_view to_string(AllocEventKind kind);

struct AllocEvent {
  AllocEventKind kind = AllocEventKind::ExactFit;
  NodeId node;       // the node allocated or freed (invalid for OutOfMemory)
  SramAddr addr;     // its start
  Bytes size;        // its size (see the kinds above)
  uint64_t count = 0;
};

// One node of the list, for dumps, checkers and planners.
struct NodeInfo {
  NodeId id;
  SramAddr addr;
  Bytes size;
  bool in_use = false;
};

class Allocator {
 public:
  // base must be a multiple of alignment; alignment a power of two (1..2^31);
  // capacity a non-zero multiple of alignment, below 2^32, with base + capacity <= 2^32.
  // Throws npuforge::Error naming the bad argument otherwise.
  Allocator(SramAddr base, Bytes capacity, Bytes alignment, Policy policy = Policy::FirstFit);

  AllocResult alloc(Bytes size);
  // Reserves exactly [addr, addr + align_up(size)) if those bytes lie in one free node
  // (e.g. a buffer with a fixed address). Not ok() (oom filled) when they do not.
  // Throws npuforge::Error if addr is not aligned or outside the range.
  AllocResult alloc_at(SramAddr addr, Bytes size);
  // Throws npuforge::Error when `node` is not a live in-use node (double free, stale id).
  void free(NodeId node);
  // Frees everything: back to one free node. Keeps policy, callback, counters reset.
  void reset();

  bool is_live(NodeId node) const;  // in use and not stale
  // Of a live node (throw npuforge::Error otherwise).
  SramAddr address(NodeId node) const;
  Bytes size(NodeId node) const;

  Policy policy() const { return policy_; }
  SramAddr base() const { return SramAddr{static_cast<uint32_t>(base_)}; }
  Bytes capacity() const { return Bytes{capacity_}; }
  Bytes alignment() const { return Bytes{align_}; }
  Bytes pad(Bytes size) const;  // the size alloc() would reserve

  Stats stats() const;
  // A planted bug (util/plant.h, allocator layer) for measuring the checks; None by default.
  void set_plant(Plant plant) { plant_ = plant; }
  // Called synchronously from alloc/free; no cost when unset.
  void set_event_callback(std::function<void(const AllocEvent&)> callback);

  // Empty when every invariant holds, else a description of the first broken one:
  // list ordered, contiguous, covering [base, base+capacity) exactly, prev/next
  // consistent, no two adjacent free nodes, in-use starts aligned, the index holding
  // exactly the free nodes with correct order, heap and subtree aggregates, counters, and
  // the node pool holding exactly the listed nodes plus the recycled slots (no leak).
  // O(n); for tests and debug builds.
  std::string check_invariants() const;

  std::vector<NodeInfo> nodes() const;  // the list in address order
  // One line per node: "0x00000400 +256 used #3" ("free" for free ones).
  std::string dump() const;
  // OutOfMemory::message() followed by the live map (dump()).
  std::string describe(const OutOfMemory& oom) const;

 private:
  friend struct AllocatorTestPeer;
  static constexpr uint32_t kNil = UINT32_MAX;
  // One cache line: a tree descent touches one line per level, and the per-side
  // aggregates (l_max/r_max, l_count/r_count) spare loading the sibling at every level.
  struct alignas(64) Node {
    uint64_t start = 0;
    uint64_t size = 0;
    uint32_t prev = kNil, next = kNil;
    uint32_t generation = 0;
    bool in_use = false;
    // Address treap links; meaningful only while the node is free. The parent link lets a
    // resize or an erase walk up from the node instead of descending from the root again.
    uint32_t left = kNil, right = kNil, parent = kNil, prio = 0;
    uint32_t l_max = 0, r_max = 0;      // largest free size in the left/right subtree
    uint32_t l_count = 0, r_count = 0;  // nodes in the left/right subtree
  };
  static_assert(sizeof(Node) == 64, "Node must stay one cache line");
  struct SizeLink {  // (size, address) treap node, best-fit only; beside pool_
    uint64_t key = 0;  // size << 32 | start: one compare, no load from pool_
    uint32_t left = kNil, right = kNil, parent = kNil, prio = 0;
    uint32_t l_count = 0, r_count = 0;
  };
  static_assert(sizeof(SizeLink) == 32, "two SizeLinks per cache line");

  uint32_t new_node(uint64_t start, uint64_t size);
  void release_node(uint32_t n);
  void unlink(uint32_t n);
  uint32_t choose(uint64_t padded, uint64_t* skipped) const;
  uint32_t take(uint32_t n, uint64_t padded);  // exact fit or split; n leaves the indexes
  void emit(AllocEventKind kind, uint32_t n, uint64_t size, uint64_t count = 0) const;
  AllocResult fail(Bytes request, uint64_t padded);
  const Node* live_node(NodeId id, const char* what) const;

  // Address treap (key start, aggregates l/r_max and l/r_count).
  uint64_t agg_max(uint32_t t) const {  // largest size in t's subtree, 0 for nil
    if (t == kNil) return 0;
    const Node& n = pool_[t];
    return std::max<uint64_t>(n.size, std::max(n.l_max, n.r_max));
  }
  uint32_t agg_count(uint32_t t) const {  // nodes in t's subtree
    return t == kNil ? 0 : 1 + pool_[t].l_count + pool_[t].r_count;
  }
  void fix_left(uint32_t t) {  // t's left link changed: refresh its aggregates
    Node& n = pool_[t];
    n.l_max = static_cast<uint32_t>(agg_max(n.left));
    n.l_count = agg_count(n.left);
  }
  void fix_right(uint32_t t) {
    Node& n = pool_[t];
    n.r_max = static_cast<uint32_t>(agg_max(n.right));
    n.r_count = agg_count(n.right);
  }
  void set_left(uint32_t t, uint32_t c) {  // t's left link becomes c (maybe nil)
    pool_[t].left = c;
    if (c != kNil) pool_[c].parent = t;
  }
  void set_right(uint32_t t, uint32_t c) {
    pool_[t].right = c;
    if (c != kNil) pool_[c].parent = t;
  }
  void set_a_root(uint32_t t) {
    a_root_ = t;
    if (t != kNil) pool_[t].parent = kNil;
  }
  void a_insert(uint32_t x);  // x (start, size, prio set; links cleared) enters the address index
  void a_add(uint32_t n);  // n (not in the address index) enters it
  void a_erase(uint32_t n);  // indexed node n leaves the address index
  // Indexed node n changed size (and maybe start, keeping its order): refresh the aggregates above it.
  void a_refresh(uint32_t n);
  uint32_t a_merge(uint32_t l, uint32_t r);
  void a_split(uint32_t t, uint64_t start, uint32_t& l, uint32_t& r);
  uint32_t a_first_fit(uint32_t t, uint64_t size) const;
  uint32_t a_first_fit_from(uint32_t t, uint64_t from, uint64_t size) const;
  uint32_t a_floor(uint64_t addr) const;  // free node with the largest start <= addr
  uint64_t a_rank(uint64_t start) const;  // free nodes with start < `start`
  // Size treap (key (size, start), aggregate count).
  uint32_t s_count(uint32_t t) const {
    return t == kNil ? 0 : 1 + slinks_[t].l_count + slinks_[t].r_count;
  }
  uint64_t s_key(uint32_t n) const;  // from pool_[n]'s current size and start
  void s_set_left(uint32_t t, uint32_t c) {  // t's left link becomes c; count refreshed
    slinks_[t].left = c;
    slinks_[t].l_count = s_count(c);
    if (c != kNil) slinks_[c].parent = t;
  }
  void s_set_right(uint32_t t, uint32_t c) {
    slinks_[t].right = c;
    slinks_[t].r_count = s_count(c);
    if (c != kNil) slinks_[c].parent = t;
  }
  void s_insert(uint32_t x);  // x (key set, links cleared) enters the size index
  void s_erase(uint32_t n);   // indexed node n leaves it
  uint32_t s_merge(uint32_t l, uint32_t r);
  void s_split(uint32_t t, uint64_t key, uint32_t& l, uint32_t& r);
  uint32_t s_lower_bound(uint64_t size) const;
  uint64_t s_rank(uint64_t size) const;  // free nodes with size < `size`
  // The size index exists only for best-fit (the others never query it).
  void s_add(uint32_t n);     // n (not in the size index) enters it
  void s_remove(uint32_t n);  // n leaves it (call before changing n's size)
  void index_insert(uint32_t n);
  void index_erase(uint32_t n);
  // Free node n becomes [start, start + size), keeping its order among the free nodes: it
  // stays in its index slots, so no other node's links change.
  void idx_resize(uint32_t n, uint64_t start, uint64_t size);
  uint64_t largest_free() const;
  uint64_t free_count() const;
  uint32_t free_floor(uint64_t addr) const;  // the free node holding addr, or kNil
  uint32_t next_prio();
  std::string check_indexes(const std::vector<uint32_t>& free_list) const;

  uint64_t base_, capacity_, align_;
  Policy policy_;
  bool sized_;      // keep the (size, address) index: best-fit
  bool addressed_;  // keep the address index: first-fit and next-fit
  std::vector<Node> pool_;
  std::vector<SizeLink> slinks_;  // parallel to pool_ when sized_
  std::vector<uint32_t> free_slots_;  // recycled pool indexes
  uint32_t head_ = kNil;
  uint32_t a_root_ = kNil, s_root_ = kNil;
  uint64_t cursor_ = 0;  // next-fit: end of the previous allocation
  uint64_t used_ = 0, high_water_ = 0, high_end_ = 0;
  uint64_t used_nodes_ = 0, allocs_ = 0, frees_ = 0, failed_ = 0;
  Rng prio_rng_{0x7265617021ull};  // treap priorities: structure only, never output
  std::function<void(const AllocEvent&)> callback_;
  Plant plant_;
};

}  // namespace npuforge::allocator
