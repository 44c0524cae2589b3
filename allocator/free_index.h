#pragma once
// An ordered index over the allocator's free nodes: entries (key, size, node) sorted by a
// unique 64-bit key, in blocks of up to kBlock entries kept in key order (a flat, one-level
// B+ tree). Per block, a summary holds its first key, entry count and largest size in
// three small contiguous arrays, so a query scans or bisects those first and then works
// inside one block.
//
// Why blocks and not a balanced tree: with a few hundred to a few thousand free nodes, a
// tree descent is ~12 dependent loads on scattered cache lines per operation and an
// update walks back to the root; here a lookup is a bisection over a few dozen
// contiguous keys plus one inside a block of contiguous entries, and an insert or erase
// shifts at most one block. Costs are O(log n + kBlock) per update (plus an O(n / kBlock)
// shift of the summaries when a block splits or goes, at most every kBlock / 2 updates of
// that block) and O(n / kBlock + kBlock) for a fit search: linear in the block count, which
// beats the tree at the sizes the allocator sees (bench_allocator: ~500-2,000 free nodes at
// 4,096 live). Far larger free lists would want a second summary level.
//
// Used twice by Allocator: by address (key = start, for first-fit, next-fit and alloc_at)
// and by (size, address) (key = size << 32 | start, for best-fit). Every query is by key,
// so results never depend on how entries happen to be spread over blocks.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace npuforge::allocator {

struct AllocatorTestPeer;

class FreeIndex {
 public:
  static constexpr uint32_t kNone = UINT32_MAX;
  struct Entry {
    uint64_t key;
    uint32_t size, node;
    bool operator==(const Entry&) const = default;
  };

  FreeIndex() = default;
  // Copies deep (the blocks are owned), so that Allocator stays copyable as before.
  FreeIndex(const FreeIndex& other);
  FreeIndex& operator=(const FreeIndex& other);
  FreeIndex(FreeIndex&&) noexcept = default;
  FreeIndex& operator=(FreeIndex&&) noexcept = default;
  ~FreeIndex() = default;

  void clear();
  uint32_t count() const { return total_; }
  uint32_t largest() const;  // largest size, 0 when empty
  // `key` must not be present / must be present.
  void insert(uint64_t key, uint32_t size, uint32_t node);
  void erase(uint64_t key);
  // The entry at `key` becomes (new_key, new_size); new_key must keep its place in the
  // order (no other key between the two), so no entry moves.
  void update(uint64_t key, uint64_t new_key, uint32_t new_size);
  // The entry at `key` becomes (new_key, new_size) wherever new_key belongs: erase and
  // insert, but shifting only the slots between the two places when both are in one block
  // (a best-fit split or merge mostly moves its node a few places).
  void move(uint64_t key, uint64_t new_key, uint32_t new_size);

  // Node of the smallest key >= key, or kNone; `passed`, when given: the entries before it
  // (rank(key)).
  uint32_t lower_bound(uint64_t key, uint64_t* passed = nullptr) const;
  uint32_t floor(uint64_t key) const;        // node of the largest key <= key, or kNone
  uint64_t rank(uint64_t key) const;         // entries with a key < key
  // Node of the smallest key with size >= size, or kNone. `passed`, when given, receives
  // the entries before it (its rank): the search walked past them anyway, so the caller
  // needs no rank() query of its own.
  uint32_t first_fit(uint32_t size, uint64_t* passed = nullptr) const;
  // Node of the smallest key >= from with size >= size, or kNone. `passed`, when given,
  // receives the entries with a key >= from before it (all of them when none fits).
  uint32_t first_fit_from(uint64_t from, uint32_t size, uint64_t* passed = nullptr) const;
  // Next-fit: first_fit_from, else (wrapping around) first_fit, whose scan then stops at
  // from's block: the entries from there on were just found too small. `passed` counts
  // both parts.
  uint32_t next_fit(uint64_t from, uint32_t size, uint64_t* passed = nullptr) const;

  std::vector<Entry> entries() const;  // in key order, for the invariant check
  // Empty when the block summaries, order and bounds hold, else the first broken one.
  std::string check() const;

 private:
  friend struct AllocatorTestPeer;
  // 32 entries: a block is 512 bytes (8 cache lines), so shifting or scanning part of one
  // costs about as much as the bisection that finds it.
  static constexpr uint32_t kBlock = 32;
  // Slots past the block's count keep size 0, which fits no request (sizes are >= 1): the
  // largest-size scan can then run over all kBlock slots with a fixed trip count.
  // One array of whole entries, not one per member: an insert or erase shifts them with one
  // memmove instead of three (the generator's short free lists made those calls, not the
  // bytes, the cost).
  struct Block {
    Entry e[kBlock] = {};
    // Slots [from, to) move one place up (an entry goes in at `from`)...
    void shift_up(uint32_t from, uint32_t to) { std::copy_backward(e + from, e + to, e + to + 1); }
    // ...or slots (at, to) one place down (the entry at `at` goes).
    void shift_down(uint32_t at, uint32_t to) { std::copy(e + at + 1, e + to, e + at); }
    void set(uint32_t i, uint64_t key, uint32_t size, uint32_t node) { e[i] = Entry{key, size, node}; }
  };
  // Where the last query found its entry: the allocator erases or updates exactly that
  // entry next (take() after choose()), so erase() and update() try it before searching.
  // Checked by key before use (keys are unique), so a stale hint only costs the check.
  struct Hint {
    size_t block = 0;
    uint32_t slot = UINT32_MAX;
  };

  size_t block_for(uint64_t key) const;             // last block whose first key <= key (or 0)
  uint32_t slot(size_t b, uint64_t key) const;      // first slot in b with a key >= key
  void locate(uint64_t key, size_t& b, uint32_t& i) const;  // the key's block and slot (an absent key: where it would go)
  uint32_t found(size_t b, uint32_t i) const;  // node at (b, i), remembered as the hint
  uint32_t fit_in(size_t b, uint32_t from, uint32_t size) const;  // slot or kNone
  // First fit in blocks b.. (node); adds the entries it passes over to *passed if given.
  uint32_t fit_after(size_t b, uint32_t size, uint64_t* passed, size_t end = SIZE_MAX) const;  // blocks [b, end)
  uint32_t block_max(size_t b) const;
  void split(size_t b);
  void absorb(size_t b);  // block b takes in block b + 1, which goes away
  void remove_block(size_t b);
  void rebalance(size_t b);

  std::vector<std::unique_ptr<Block>> blocks_;  // in key order; none empty
  std::vector<uint64_t> first_;                 // per block: its first key
  std::vector<uint32_t> counts_;                // per block: its entries
  std::vector<uint32_t> max_;                   // per block: its largest size
  uint32_t total_ = 0;
  mutable Hint hint_;  // a cache only: never changes what a query returns
  // largest()'s answer, kept between its calls: out of memory, the generator asks after every
  // failed placement, and scanning every block's maximum each time cost tiny-buffers (6,000
  // free nodes) 25 M instructions at 1M. Updates keep it while they can tell: a size
  // added or grown past it is the new largest; the largest one removed or shrunk makes it
  // unknown (rescanned at the next call). While unknown, `size` means nothing and is never
  // returned: updates may still move it, the rescan overwrites it.
  struct Largest {
    uint32_t size = 0;
    bool known = true;  // empty: 0
  };
  mutable Largest largest_;
  void resized(uint32_t old_size, uint32_t new_size);  // an entry's size changed: largest_
};

}  // namespace npuforge::allocator
