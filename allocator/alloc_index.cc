// The free-node indexes of Allocator (FreeIndex, see free_index.h) and the allocator's
// calls into them.
#include <fmt/core.h>

#include <algorithm>

#include "allocator/allocator.h"

namespace npuforge::allocator {

// ---- FreeIndex ----

FreeIndex::FreeIndex(const FreeIndex& other)
    : first_(other.first_), counts_(other.counts_), max_(other.max_), total_(other.total_),
      hint_(other.hint_), largest_(other.largest_) {
  blocks_.reserve(other.blocks_.size());
  for (const auto& block : other.blocks_) blocks_.push_back(std::make_unique<Block>(*block));
}

FreeIndex& FreeIndex::operator=(const FreeIndex& other) {
  if (this != &other) *this = FreeIndex(other);
  return *this;
}

void FreeIndex::clear() {
  blocks_.clear();
  first_.clear();
  counts_.clear();
  max_.clear();
  total_ = 0;
  largest_ = Largest{};
}

uint32_t FreeIndex::largest() const {
  if (largest_.known) return largest_.size;
  // A plain max, not max_element: no position to track, so the compiler vectorises it
  // (out of memory, the generator asks this once per failed placement).
  uint32_t largest = 0;
  for (const uint32_t m : max_) largest = std::max(largest, m);
  largest_ = Largest{largest, true};
  return largest;
}

void FreeIndex::resized(uint32_t old_size, uint32_t new_size) {
  if (new_size >= largest_.size)
    largest_.size = new_size;  // still the largest (unknown stays unknown)
  else if (old_size == largest_.size)
    largest_.known = false;
}

size_t FreeIndex::block_for(uint64_t key) const {
  const auto it = std::upper_bound(first_.begin(), first_.end(), key);
  return it == first_.begin() ? 0 : size_t(it - first_.begin()) - 1;
}

uint32_t FreeIndex::slot(size_t b, uint64_t key) const {
  const Entry* e = blocks_[b]->e;
  return uint32_t(std::lower_bound(e, e + counts_[b], key, [](const Entry& x, uint64_t k) { return x.key < k; }) - e);
}

void FreeIndex::locate(uint64_t key, size_t& b, uint32_t& i) const {
  if (hint_.block < blocks_.size() && hint_.slot < counts_[hint_.block] &&
      blocks_[hint_.block]->e[hint_.slot].key == key) {
    b = hint_.block;
    i = hint_.slot;
    return;
  }
  b = block_for(key);
  i = slot(b, key);
}

uint32_t FreeIndex::found(size_t b, uint32_t i) const {
  hint_ = Hint{b, i};
  return blocks_[b]->e[i].node;
}

uint32_t FreeIndex::fit_in(size_t b, uint32_t from, uint32_t size) const {
  const Entry* e = blocks_[b]->e;
  for (uint32_t i = from, n = counts_[b]; i < n; ++i) {
    if (e[i].size >= size) return i;
  }
  return kNone;
}

uint32_t FreeIndex::fit_after(size_t b, uint32_t size, uint64_t* passed, size_t end) const {
  uint64_t skipped = 0;
  for (const size_t n = std::min(blocks_.size(), end); b < n; ++b) {
    // The block's largest size guarantees the fit inside it.
    if (max_[b] >= size) {
      const uint32_t i = fit_in(b, 0, size);
      if (passed) *passed += skipped + i;
      return found(b, i);
    }
    skipped += counts_[b];
  }
  if (passed) *passed += skipped;
  return kNone;
}

uint32_t FreeIndex::block_max(size_t b) const {
  const Entry* e = blocks_[b]->e;
  uint32_t max = 0;
  for (uint32_t i = 0; i < kBlock; ++i) max = std::max(max, e[i].size);
  return max;
}

// Block b is full: its upper half moves to a new block after it.
void FreeIndex::split(size_t b) {
  constexpr uint32_t kHalf = kBlock / 2;
  auto fresh = std::make_unique<Block>();
  const Block& from = *blocks_[b];
  std::copy(from.e + kHalf, from.e + kBlock, fresh->e);
  std::fill(blocks_[b]->e + kHalf, blocks_[b]->e + kBlock, Entry{});
  const uint64_t first = fresh->e[0].key;
  blocks_.insert(blocks_.begin() + ptrdiff_t(b) + 1, std::move(fresh));
  first_.insert(first_.begin() + ptrdiff_t(b) + 1, first);
  counts_.insert(counts_.begin() + ptrdiff_t(b) + 1, kBlock - kHalf);
  max_.insert(max_.begin() + ptrdiff_t(b) + 1, 0);
  counts_[b] = kHalf;
  max_[b] = block_max(b);
  max_[b + 1] = block_max(b + 1);
}

void FreeIndex::absorb(size_t b) {
  Block& to = *blocks_[b];
  const Block& from = *blocks_[b + 1];
  const uint32_t at = counts_[b], n = counts_[b + 1];
  std::copy(from.e, from.e + n, to.e + at);
  counts_[b] = at + n;
  max_[b] = std::max(max_[b], max_[b + 1]);
  remove_block(b + 1);
}

void FreeIndex::remove_block(size_t b) {
  const auto at = ptrdiff_t(b);
  blocks_.erase(blocks_.begin() + at);
  first_.erase(first_.begin() + at);
  counts_.erase(counts_.begin() + at);
  max_.erase(max_.begin() + at);
}

// Block b shrank: an empty block goes; two neighbours that fit in half a block become one,
// so that blocks stay at least a quarter full on average and the summaries stay short.
// (Half, not full: a merged block can take kBlock / 2 inserts before it splits again.)
void FreeIndex::rebalance(size_t b) {
  if (counts_[b] == 0) {
    remove_block(b);
    return;
  }
  if (b + 1 < blocks_.size() && counts_[b] + counts_[b + 1] <= kBlock / 2) {
    absorb(b);
  } else if (b > 0 && counts_[b - 1] + counts_[b] <= kBlock / 2) {
    absorb(b - 1);
  }
}

void FreeIndex::insert(uint64_t key, uint32_t size, uint32_t node) {
  if (blocks_.empty()) {
    blocks_.push_back(std::make_unique<Block>());
    first_.push_back(key);
    counts_.push_back(0);
    max_.push_back(0);
  }
  size_t b = block_for(key);
  if (counts_[b] == kBlock) {
    split(b);
    if (key >= first_[b + 1]) ++b;
  }
  Block& k = *blocks_[b];
  const uint32_t n = counts_[b], i = slot(b, key);
  k.shift_up(i, n);
  k.set(i, key, size, node);
  counts_[b] = n + 1;
  max_[b] = std::max(max_[b], size);
  if (i == 0) first_[b] = key;
  total_++;
  if (size > largest_.size) largest_.size = size;
}

void FreeIndex::erase(uint64_t key) {
  size_t b;
  uint32_t i;
  locate(key, b, i);
  Block& k = *blocks_[b];
  const uint32_t n = counts_[b];
  const uint32_t size = k.e[i].size;
  k.shift_down(i, n);
  k.e[n - 1] = Entry{};
  counts_[b] = n - 1;
  total_--;
  if (size == largest_.size) largest_.known = false;
  if (n > 1) {
    if (i == 0) first_[b] = k.e[0].key;
    if (size == max_[b]) max_[b] = block_max(b);
  }
  // free() merging both neighbours erases the successor, then resizes the predecessor:
  // the entry just before this one (a rebalance below only makes the hint miss).
  if (i > 0) hint_ = Hint{b, i - 1};
  rebalance(b);
}

void FreeIndex::update(uint64_t key, uint64_t new_key, uint32_t new_size) {
  size_t b;
  uint32_t i;
  locate(key, b, i);
  Block& k = *blocks_[b];
  const uint32_t old = k.e[i].size;
  k.e[i].key = new_key;
  k.e[i].size = new_size;
  if (i == 0) first_[b] = new_key;
  resized(old, new_size);
  if (new_size >= max_[b]) {
    max_[b] = new_size;
  } else if (old == max_[b]) {
    max_[b] = block_max(b);
  }
}

void FreeIndex::move(uint64_t key, uint64_t new_key, uint32_t new_size) {
  size_t b;
  uint32_t i;
  locate(key, b, i);
  const bool after_previous = b == 0 || new_key > blocks_[b - 1]->e[counts_[b - 1] - 1].key;
  const bool before_next = b + 1 == blocks_.size() || new_key < first_[b + 1];
  if (!after_previous || !before_next) {
    const uint32_t node = blocks_[b]->e[i].node;
    erase(key);
    insert(new_key, new_size, node);
    return;
  }
  Block& k = *blocks_[b];
  const uint32_t old = k.e[i].size, node = k.e[i].node;
  uint32_t j = slot(b, new_key);  // counting the old entry, which is still at i
  if (j > i) {  // moves up: the slots between shift down one
    --j;
    k.shift_down(i, j + 1);
  } else {  // moves down (or stays): the slots between shift up one
    k.shift_up(j, i);
  }
  k.set(j, new_key, new_size, node);
  first_[b] = k.e[0].key;
  resized(old, new_size);
  if (new_size >= max_[b]) {
    max_[b] = new_size;
  } else if (old == max_[b]) {
    max_[b] = block_max(b);
  }
}

uint32_t FreeIndex::lower_bound(uint64_t key, uint64_t* passed) const {
  if (passed) *passed = 0;
  if (blocks_.empty()) return kNone;
  const size_t b = block_for(key);
  const uint32_t i = slot(b, key);
  if (passed) {
    for (size_t j = 0; j < b; ++j) *passed += counts_[j];
    *passed += i;
  }
  if (i < counts_[b]) return found(b, i);
  return b + 1 < blocks_.size() ? found(b + 1, 0) : kNone;
}

uint32_t FreeIndex::floor(uint64_t key) const {
  if (blocks_.empty() || first_[0] > key) return kNone;
  const size_t b = block_for(key);
  const Entry* e = blocks_[b]->e;
  const auto i = std::upper_bound(e, e + counts_[b], key, [](uint64_t k, const Entry& x) { return k < x.key; }) - e;  // >= 1: e[0].key <= key
  return found(b, uint32_t(i - 1));
}

uint64_t FreeIndex::rank(uint64_t key) const {
  if (blocks_.empty()) return 0;
  // First-fit asks for the rank of the entry its query just found: the hint holds its place.
  size_t b;
  uint32_t i;
  locate(key, b, i);
  uint64_t before = 0;
  for (size_t j = 0; j < b; ++j) before += counts_[j];
  return before + i;
}

uint32_t FreeIndex::first_fit(uint32_t size, uint64_t* passed) const {
  if (passed) *passed = 0;
  return fit_after(0, size, passed);
}

uint32_t FreeIndex::first_fit_from(uint64_t from, uint32_t size, uint64_t* passed) const {
  if (passed) *passed = 0;
  if (blocks_.empty()) return kNone;
  const size_t b = block_for(from);
  if (max_[b] >= size || passed) {
    const uint32_t at = slot(b, from);  // the entries of b before `from`
    if (max_[b] >= size) {
      const uint32_t i = fit_in(b, at, size);
      if (i != kNone) {
        if (passed) *passed = i - at;
        return found(b, i);
      }
    }
    if (passed) *passed = counts_[b] - at;
  }
  return fit_after(b + 1, size, passed);
}

uint32_t FreeIndex::next_fit(uint64_t from, uint32_t size, uint64_t* passed) const {
  const uint32_t n = first_fit_from(from, size, passed);
  if (n != kNone || blocks_.empty()) return n;
  // Nothing at or above `from` fits, so neither do the blocks after from's: the fit, if
  // any, lies below `from`, in its block or before.
  return fit_after(0, size, passed, block_for(from) + 1);
}

std::vector<FreeIndex::Entry> FreeIndex::entries() const {
  std::vector<Entry> out;
  out.reserve(total_);
  for (size_t b = 0; b < blocks_.size(); ++b) {
    for (uint32_t i = 0; i < counts_[b] && i < kBlock; ++i) {
      out.push_back(blocks_[b]->e[i]);
    }
  }
  return out;
}

std::string FreeIndex::check() const {
  const size_t n = blocks_.size();
  if (first_.size() != n || counts_.size() != n || max_.size() != n) return "summary sizes differ";
  uint64_t total = 0;
  for (size_t b = 0; b < n; ++b) {
    if (counts_[b] == 0 || counts_[b] > kBlock) return fmt::format("block {} holds {} entries", b, counts_[b]);
    if (first_[b] != blocks_[b]->e[0].key) return fmt::format("block {}: first key wrong", b);
    if (max_[b] != block_max(b)) return fmt::format("block {}: largest-size aggregate wrong", b);
    for (uint32_t i = counts_[b]; i < kBlock; ++i) {
      if (blocks_[b]->e[i].size != 0) return fmt::format("block {}: unused slot {} has a size", b, i);
    }
    total += counts_[b];
  }
  if (total != total_) return fmt::format("{} entries in blocks, {} counted", total, total_);
  if (largest_.known) {
    uint32_t largest = 0;
    for (size_t b = 0; b < n; ++b) largest = std::max(largest, max_[b]);
    if (largest_.size != largest)
      return fmt::format("largest size kept as {}, the blocks say {}", largest_.size, largest);
  }
  const std::vector<Entry> all = entries();
  for (size_t i = 1; i < all.size(); ++i) {
    if (all[i - 1].key >= all[i].key) return "keys out of order";
  }
  return "";
}

// ---- the allocator's indexes ----

uint64_t Allocator::s_key(uint32_t n) const {
  return pool_[n].size << 32 | static_cast<uint32_t>(pool_[n].start);
}

void Allocator::index_insert(uint32_t n) {
  const auto size = static_cast<uint32_t>(pool_[n].size);
  if (addressed_) by_addr_.insert(pool_[n].start, size, n);
  if (sized_) by_size_.insert(s_key(n), size, n);
}

void Allocator::index_erase(uint32_t n) {
  if (addressed_) by_addr_.erase(pool_[n].start);
  if (sized_) by_size_.erase(s_key(n));
}

// The address order is kept (callers guarantee it), so the address index updates the
// entry in place; the size order is not, so the size index moves it.
void Allocator::idx_resize(uint32_t n, uint64_t start, uint64_t size) {
  if (addressed_) by_addr_.update(pool_[n].start, start, static_cast<uint32_t>(size));
  const uint64_t old_key = s_key(n);
  pool_[n].start = start;
  pool_[n].size = size;
  if (sized_) by_size_.move(old_key, s_key(n), static_cast<uint32_t>(size));
}

uint64_t Allocator::largest_free() const {
  return addressed_ ? by_addr_.largest() : by_size_.largest();
}

uint64_t Allocator::free_count() const { return addressed_ ? by_addr_.count() : by_size_.count(); }

uint32_t Allocator::free_floor(uint64_t addr) const {
  if (addressed_) return by_addr_.floor(addr);
  // Best-fit keeps no address index: walk the list (alloc_at is rare).
  for (uint32_t t = head_; t != kNil; t = pool_[t].next) {
    if (pool_[t].start + pool_[t].size > addr) return pool_[t].in_use ? kNil : t;
  }
  return kNil;
}

// Each index against the list's free nodes (in address order): same nodes, keys and sizes
// taken from the nodes, and its own block invariants.
std::string Allocator::check_indexes(const std::vector<uint32_t>& free_list) const {
  auto compare = [&](const FreeIndex& index, const char* name, bool by_size) -> std::string {
    if (auto err = index.check(); !err.empty()) return fmt::format("{} index: {}", name, err);
    std::vector<FreeIndex::Entry> want;
    for (uint32_t t : free_list) {
      want.push_back(FreeIndex::Entry{by_size ? s_key(t) : pool_[t].start,
                                      static_cast<uint32_t>(pool_[t].size), t});
    }
    if (by_size) std::sort(want.begin(), want.end(), [](auto& a, auto& b) { return a.key < b.key; });
    if (index.entries() != want) {
      return fmt::format("{} index holds {} nodes, list has {} free nodes (or keys/sizes/order differ)",
                         name, index.count(), free_list.size());
    }
    return "";
  };
  if (!addressed_ && by_addr_.count() != 0) return "address index in use with best-fit";
  if (!sized_ && by_size_.count() != 0) return "size index in use without best-fit";
  if (addressed_) {
    if (auto err = compare(by_addr_, "address", false); !err.empty()) return err;
  }
  if (sized_) return compare(by_size_, "size", true);
  return "";
}

}  // namespace npuforge::allocator
