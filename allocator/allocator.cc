// The linked-list allocator: choosing, splitting, freeing, merging, statistics and the
// invariant check. The free-node indexes are in alloc_index.cc.
#include "allocator/allocator.h"

#include <fmt/core.h>

#include <algorithm>
#include <cctype>

#include "util/error.h"

namespace npuforge::allocator {

Policy parse_policy(std::string_view name) {
  std::string key;
  for (char c : name) {
    if (c != '-' && c != '_') key += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  if (key == "firstfit") return Policy::FirstFit;
  if (key == "bestfit") return Policy::BestFit;
  if (key == "nextfit") return Policy::NextFit;
  throw Error(fmt::format("unknown allocation policy '{}' (valid: first-fit, best-fit, next-fit)",
                          name));
}

std::string_view policy_name(Policy policy) {
  switch (policy) {
    case Policy::FirstFit: return "first-fit";
    case Policy::BestFit: return "best-fit";
    case Policy::NextFit: return "next-fit";
  }
  return "?";
}

std::string_view to_string(AllocEventKind kind) {
  switch (kind) {
    case AllocEventKind::ExactFit: return "exact-fit";
    case AllocEventKind::Split: return "split";
    case AllocEventKind::SkippedTooSmall: return "skipped-too-small";
    case AllocEventKind::MergePrev: return "merge-prev";
    case AllocEventKind::MergeNext: return "merge-next";
    case AllocEventKind::MergeBoth: return "merge-both";
    case AllocEventKind::FreeNoMerge: return "free-no-merge";
    case AllocEventKind::OutOfMemory: return "out-of-memory";
  }
  return "?";
}

std::string OutOfMemory::message() const {
  return fmt::format(
      "out of memory: request {} B (padded {} B), largest free node {} B, free total {} B in "
      "{} node(s)",
      request.value, padded.value, largest_free.value, free_total.value, free_nodes);
}

Allocator::Allocator(SramAddr base, Bytes capacity, Bytes alignment, Policy policy)
    : base_(base.value),
      capacity_(capacity.value),
      align_(alignment.value),
      policy_(policy),
      sized_(policy == Policy::BestFit),
      addressed_(!sized_) {
  if (align_ == 0 || (align_ & (align_ - 1)) != 0 || align_ > (1ull << 31)) {
    throw Error(fmt::format("allocator alignment: {} is not a power of two in 1..2^31", align_));
  }
  if (base_ % align_ != 0) {
    throw Error(fmt::format("allocator base: 0x{:x} is not a multiple of the alignment {}", base_,
                            align_));
  }
  if (capacity_ == 0 || capacity_ % align_ != 0 || capacity_ > UINT32_MAX) {
    throw Error(fmt::format("allocator capacity: {} is not a non-zero multiple of the alignment {} "
                            "below 2^32",
                            capacity_, align_));
  }
  if (base_ + capacity_ > (1ull << 32)) {
    throw Error(fmt::format("allocator range: base 0x{:x} + capacity {} exceeds the 32-bit SRAM "
                            "address space",
                            base_, capacity_));
  }
  reset();
}

void Allocator::reset() {
  // Slots are recycled, not cleared, so generations stay monotonic and ids from before the
  // reset stay dead.
  free_slots_.clear();
  for (uint32_t i = static_cast<uint32_t>(pool_.size()); i-- > 0;) {
    pool_[i].generation++;
    pool_[i].in_use = false;
    pool_[i].size = 0;
    free_slots_.push_back(i);
  }
  by_addr_.clear();
  by_size_.clear();
  cursor_ = base_;
  used_ = high_water_ = used_nodes_ = allocs_ = frees_ = failed_ = 0;
  high_end_ = base_;
  head_ = new_node(base_, capacity_);
  index_insert(head_);
}

Bytes Allocator::pad(Bytes size) const {
  if (size.value == 0) return Bytes{align_};
  if (size.value > UINT64_MAX - align_) return Bytes{UINT64_MAX & ~(align_ - 1)};
  return Bytes{(size.value + align_ - 1) & ~(align_ - 1)};
}

uint32_t Allocator::new_node(uint64_t start, uint64_t size) {
  uint32_t n;
  if (!free_slots_.empty()) {
    n = free_slots_.back();
    free_slots_.pop_back();
  } else {
    n = static_cast<uint32_t>(pool_.size());
    pool_.emplace_back();
  }
  Node& x = pool_[n];
  x.start = start;
  x.size = size;
  x.prev = x.next = kNil;
  x.in_use = false;
  return n;
}

void Allocator::release_node(uint32_t n) {
  Node& x = pool_[n];
  x.generation++;
  x.in_use = false;
  x.size = 0;
  if (plant_.any() && plant_.is(PlantId::AllocLeakNode)) return;  // planted: the slot is lost
  free_slots_.push_back(n);
}

void Allocator::emit(AllocEventKind kind, uint32_t n, uint64_t size, uint64_t count) const {
  AllocEvent e;
  e.kind = kind;
  if (n != kNil) {
    e.node = NodeId{n, pool_[n].generation};
    e.addr = SramAddr{static_cast<uint32_t>(pool_[n].start)};
  }
  e.size = Bytes{size};
  e.count = count;
  callback_(e);
}

void Allocator::set_event_callback(std::function<void(const AllocEvent&)> callback) {
  callback_ = std::move(callback);
}

uint32_t Allocator::choose(uint64_t padded, uint64_t* skipped) const {
  uint32_t n = kNil;
  switch (policy_) {
    case Policy::FirstFit:
      n = by_addr_.first_fit(static_cast<uint32_t>(padded), skipped);  // passed: below n
      break;
    case Policy::BestFit:
      // The size index alone: best-fit keeps no address index.
      n = by_size_.lower_bound(padded << 32, skipped);
      break;
    case Policy::NextFit: {
      // Passed over: from the cursor to n, wrapping past the top when n lies below it
      // (then every free node at or above the cursor, and those below n).
      n = by_addr_.next_fit(cursor_, static_cast<uint32_t>(padded), skipped);
      break;
    }
  }
  return n;
}

AllocResult Allocator::fail(Bytes request, uint64_t padded) {
  failed_++;
  AllocResult r;
  r.padded = Bytes{padded};
  r.oom.request = request;
  r.oom.padded = Bytes{padded};
  r.oom.free_total = Bytes{capacity_ - used_};
  r.oom.largest_free = Bytes{largest_free()};
  r.oom.free_nodes = free_count();
  if (callback_) emit(AllocEventKind::OutOfMemory, kNil, padded);
  return r;
}

uint32_t Allocator::take(uint32_t n, uint64_t padded) {
  uint32_t a = n;  // the node allocated
  if (pool_[n].size == padded && !(plant_.any() && plant_.is(PlantId::AllocExactFitSplit))) {
    index_erase(n);
    if (callback_) emit(AllocEventKind::ExactFit, n, padded);
  } else {
    // Split: a new node a takes the front (in use) as n's predecessor; n keeps the
    // remainder and its place in the address order (no free node lies between them), so
    // the address index updates n's entry in place and no entry moves.
    // Planted: the remainder starts one unit late, losing the unit between the parts.
    const uint64_t gap =
        plant_.any() && plant_.is(PlantId::AllocSplitOffByOne) && pool_[n].size - padded > align_ ? align_ : 0;
    const uint64_t start = pool_[n].start, size = pool_[n].size;
    a = new_node(start, padded);
    Node& x = pool_[a];
    Node& f = pool_[n];
    x.prev = f.prev;
    x.next = n;
    if (f.prev != kNil) {
      pool_[f.prev].next = a;
    } else {
      head_ = a;
    }
    f.prev = a;
    idx_resize(n, start + padded + gap, size - padded - gap);
    if (callback_) emit(AllocEventKind::Split, a, pool_[n].size);
  }
  Node& x = pool_[a];
  x.in_use = true;
  used_ += padded;
  used_nodes_++;
  allocs_++;
  high_water_ = std::max(high_water_, used_);
  high_end_ = std::max(high_end_, x.start + padded);
  return a;
}

AllocResult Allocator::alloc(Bytes size) {
  const uint64_t padded = plant_.any() && plant_.is(PlantId::AllocNoPadding) ? std::max<uint64_t>(size.value, 1)
                                                                               : pad(size).value;
  if (padded > capacity_) return fail(size, padded);
  uint64_t skipped = 0;
  const uint32_t n = choose(padded, callback_ ? &skipped : nullptr);
  if (n == kNil) return fail(size, padded);
  if (skipped > 0) emit(AllocEventKind::SkippedTooSmall, n, pool_[n].size, skipped);
  const uint32_t a = take(n, padded);
  if (policy_ == Policy::NextFit) {
    cursor_ = pool_[a].start + padded;
    if (cursor_ >= base_ + capacity_) cursor_ = base_;
  }
  return AllocResult{NodeId{a, pool_[a].generation}, SramAddr{static_cast<uint32_t>(pool_[a].start)},
                     Bytes{padded}, {}};
}

AllocResult Allocator::alloc_at(SramAddr addr, Bytes size) {
  const uint64_t a = addr.value;
  if (a < base_ || a >= base_ + capacity_ || a % align_ != 0) {
    throw Error(fmt::format("alloc_at: address 0x{:x} is not an aligned address in [0x{:x}, 0x{:x})",
                            a, base_, base_ + capacity_));
  }
  const uint64_t padded = pad(size).value;
  const uint32_t f = free_floor(a);
  if (padded > capacity_ || f == kNil || pool_[f].start + pool_[f].size < a + padded) {
    return fail(size, padded);
  }
  uint32_t n = f;
  if (pool_[f].start < a) {
    // Carve the front off: f keeps [start, a) free, n = [a, end) goes in f's index slot
    // for now, then take() splits or takes it as usual.
    n = new_node(a, pool_[f].start + pool_[f].size - a);
    Node& x = pool_[f];
    Node& y = pool_[n];
    y.prev = f;
    y.next = x.next;
    if (x.next != kNil) pool_[x.next].prev = n;
    x.next = n;
    idx_resize(f, x.start, a - x.start);
    index_insert(n);
  }
  const uint32_t taken = take(n, padded);
  return AllocResult{NodeId{taken, pool_[taken].generation}, addr, Bytes{padded}, {}};
}

// The check inline (every free() makes it), the error out of line.
inline const Allocator::Node* Allocator::live_node(NodeId id, const char* what) const {
  if (id.index < pool_.size()) [[likely]] {
    const Node& n = pool_[id.index];
    if (n.generation == id.generation && n.in_use) [[likely]]
      return &n;
  }
  not_live(id, what);
}

void Allocator::not_live(NodeId id, const char* what) const {
  throw Error(fmt::format("{}: node #{} (generation {}) is not a live allocation (double free "
                          "or stale id)",
                          what, id.index == NodeId::kInvalidIndex ? -1 : int64_t(id.index),
                          id.generation));
}

bool Allocator::is_live(NodeId id) const {
  return id.index < pool_.size() && pool_[id.index].generation == id.generation &&
         pool_[id.index].in_use;
}

SramAddr Allocator::address(NodeId id) const {
  return SramAddr{static_cast<uint32_t>(live_node(id, "address")->start)};
}

Bytes Allocator::size(NodeId id) const { return Bytes{live_node(id, "size")->size}; }

void Allocator::unlink(uint32_t n) {
  const Node& x = pool_[n];
  if (x.prev != kNil) {
    pool_[x.prev].next = x.next;
  } else {
    head_ = x.next;
  }
  if (x.next != kNil) pool_[x.next].prev = x.prev;
}

void Allocator::free(NodeId id) {
  live_node(id, "free");
  const uint32_t n = id.index;
  pool_[n].generation++;  // the id dies now, even if the slot survives as a free node
  pool_[n].in_use = false;
  used_ -= pool_[n].size;
  if (!(plant_.any() && plant_.is(PlantId::AllocCounterDrift))) used_nodes_--;
  frees_++;
  const uint32_t p = pool_[n].prev, q = pool_[n].next;
  const bool merge_prev = p != kNil && !pool_[p].in_use && !(plant_.any() && plant_.is(PlantId::AllocNoMergePrev));
  const bool merge_next = q != kNil && !pool_[q].in_use && !(plant_.any() && plant_.is(PlantId::AllocNoMergeNext));
  if (merge_prev && merge_next) {
    index_erase(q);
    idx_resize(p, pool_[p].start, pool_[p].size + pool_[n].size + pool_[q].size);
    unlink(n);
    unlink(q);
    release_node(n);
    release_node(q);
    if (callback_) emit(AllocEventKind::MergeBoth, p, pool_[p].size);
  } else if (merge_prev) {
    idx_resize(p, pool_[p].start, pool_[p].size + pool_[n].size);
    unlink(n);
    release_node(n);
    if (callback_) emit(AllocEventKind::MergePrev, p, pool_[p].size);
  } else if (merge_next) {
    // q absorbs n and keeps its place in the address order (no free node lies between them).
    idx_resize(q, pool_[n].start, pool_[q].size + pool_[n].size);
    unlink(n);
    release_node(n);
    if (callback_) emit(AllocEventKind::MergeNext, q, pool_[q].size);
  } else {
    index_insert(n);
    if (callback_) emit(AllocEventKind::FreeNoMerge, n, pool_[n].size);
  }
}

Stats Allocator::stats() const {
  Stats s;
  s.capacity = Bytes{capacity_};
  s.used = Bytes{used_};
  s.free = Bytes{capacity_ - used_};
  s.largest_free = Bytes{largest_free()};
  s.free_nodes = free_count();
  s.used_nodes = used_nodes_;
  s.external_fragmentation =
      s.free.value == 0 ? 0.0 : 1.0 - double(s.largest_free.value) / double(s.free.value);
  s.high_water = Bytes{high_water_};
  s.high_water_end = SramAddr{static_cast<uint32_t>(high_end_)};
  s.allocs = allocs_;
  s.frees = frees_;
  s.failed = failed_;
  return s;
}

std::string Allocator::check_invariants() const {
  std::vector<uint32_t> free_list;
  uint64_t expect = base_, used = 0, used_nodes = 0, steps = 0;
  uint32_t prev = kNil;
  bool prev_free = false;
  for (uint32_t t = head_; t != kNil; prev = t, t = pool_[t].next) {
    if (++steps > pool_.size()) return "node list has a cycle";
    const Node& n = pool_[t];
    // Formatted only on failure: this runs every few hundred allocations in the generator.
    const auto at = [&] { return fmt::format("node #{} at 0x{:x}", t, n.start); };
    if (n.prev != prev) return at() + ": prev link does not point to the previous node";
    if (n.start != expect) {
      return fmt::format("{}: expected start 0x{:x} (list not contiguous/ordered)", at(), expect);
    }
    if (n.size == 0) return at() + ": empty node";
    if (n.start % align_ != 0 || n.size % align_ != 0) return at() + ": not aligned";
    if (!n.in_use && prev_free) return at() + ": two adjacent free nodes";
    prev_free = !n.in_use;
    if (n.in_use) {
      used += n.size;
      used_nodes++;
    } else {
      free_list.push_back(t);
    }
    expect = n.start + n.size;
  }
  if (expect != base_ + capacity_) {
    return fmt::format("list ends at 0x{:x}, range ends at 0x{:x}", expect, base_ + capacity_);
  }
  if (used != used_) return fmt::format("counters: {} B in use counted, {} B recorded", used, used_);
  if (used_nodes != used_nodes_) {
    return fmt::format("counters: {} used nodes counted, {} recorded", used_nodes, used_nodes_);
  }
  // Every pool slot is a listed node or a recycled one: a slot in neither has leaked.
  if (pool_.size() != steps + free_slots_.size()) {
    return fmt::format("node pool: {} slots, {} listed nodes + {} recycled slots (leaked {})", pool_.size(), steps,
                       free_slots_.size(), int64_t(pool_.size()) - int64_t(steps + free_slots_.size()));
  }
  return check_indexes(free_list);
}

std::vector<NodeInfo> Allocator::nodes() const {
  std::vector<NodeInfo> out;
  for (uint32_t t = head_; t != kNil; t = pool_[t].next) {
    const Node& n = pool_[t];
    out.push_back(NodeInfo{NodeId{t, n.generation}, SramAddr{static_cast<uint32_t>(n.start)},
                           Bytes{n.size}, n.in_use});
  }
  return out;
}

std::string Allocator::dump() const {
  std::string out;
  for (const NodeInfo& n : nodes()) {
    out += fmt::format("0x{:08x} +{} {} #{}\n", n.addr.value, n.size.value,
                       n.in_use ? "used" : "free", n.id.index);
  }
  return out;
}

std::string Allocator::describe(const OutOfMemory& oom) const {
  return oom.message() + "\nlive map (" + std::string(policy_name(policy_)) + "):\n" + dump();
}

}  // namespace npuforge::allocator
