#pragma once
// The on-chip SRAM allocator (docs/architecture.md, "The allocator's invariants").
//
// The SRAM range [base, base + capacity) is an address-ordered doubly linked list of nodes
// {start, size, in_use, prev, next}; at start the whole range is one free node. The list is
// the single truth. An index over the *free* nodes (FreeIndex, free_index.h: sorted
// blocks with per-block largest size) spares the walk:
//   - first-fit and next-fit: by address; "lowest address that fits" and "first that fits
//     at or after the cursor" skip every block whose largest size is too small;
//   - best-fit: by (size, address); the choice is a lower_bound on (request, 0).
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

#include "allocator/free_index.h"
#include "util/plant.h"
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
  // exactly the free nodes with their keys and sizes, in order, with correct block
  // summaries (first key, count, largest size), counters, and
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
  static constexpr uint32_t kNil = FreeIndex::kNone;
  // Half a cache line: the list walk and the neighbour checks of free() touch the victim
  // and its two neighbours, so small nodes keep more of the pool in cache.
  struct Node {
    uint64_t start = 0;
    uint64_t size = 0;
    uint32_t prev = kNil, next = kNil;
    uint32_t generation = 0;
    bool in_use = false;
  };
  static_assert(sizeof(Node) == 32, "two Nodes per cache line");

  uint32_t new_node(uint64_t start, uint64_t size);
  void release_node(uint32_t n);
  void unlink(uint32_t n);
  uint32_t choose(uint64_t padded, uint64_t* skipped) const;
  uint32_t take(uint32_t n, uint64_t padded);  // exact fit or split; n leaves the indexes
  void emit(AllocEventKind kind, uint32_t n, uint64_t size, uint64_t count = 0) const;
  AllocResult fail(Bytes request, uint64_t padded);
  const Node* live_node(NodeId id, const char* what) const;  // throws when not live
  [[noreturn, gnu::noinline]] void not_live(NodeId id, const char* what) const;

  uint64_t s_key(uint32_t n) const;  // size << 32 | start: the size index key of node n
  void index_insert(uint32_t n);
  void index_erase(uint32_t n);
  // Free node n becomes [start, start + size), keeping its order among the free nodes:
  // the address index updates its entry in place (the size index moves it). Called on
  // every split and every merge, i.e. on most allocs and frees.
  void idx_resize(uint32_t n, uint64_t start, uint64_t size);
  uint64_t largest_free() const;
  uint64_t free_count() const;
  uint32_t free_floor(uint64_t addr) const;  // the free node holding addr, or kNil
  std::string check_indexes(const std::vector<uint32_t>& free_list) const;

  uint64_t base_, capacity_, align_;
  Policy policy_;
  bool sized_;      // keep the (size, address) index: best-fit
  bool addressed_;  // keep the address index: first-fit and next-fit
  std::vector<Node> pool_;
  FreeIndex by_addr_;  // key start (first-fit, next-fit)
  FreeIndex by_size_;  // key size << 32 | start (best-fit)
  std::vector<uint32_t> free_slots_;  // recycled pool indexes
  uint32_t head_ = kNil;
  uint64_t cursor_ = 0;  // next-fit: end of the previous allocation
  uint64_t used_ = 0, high_water_ = 0, high_end_ = 0;
  uint64_t used_nodes_ = 0, allocs_ = 0, frees_ = 0, failed_ = 0;
  std::function<void(const AllocEvent&)> callback_;
  Plant plant_;
};

}  // namespace npuforge::allocator
