#pragma once
// Internal to the checkers: which memory-map buffers hold an SRAM byte at an instruction.
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "bundle/memmap.h"

namespace npuforge::sim {

class BufferIndex {
 public:
  static constexpr int32_t kNone = -1;
  // (first, id) of every buffer of the map, sorted: the order the index files buffers in.
  using ByFirst = std::span<const std::pair<int64_t, int32_t>>;
  // `by_first`: the map's buffers so sorted, when the caller has them (else sorted here).
  BufferIndex(const bundle::MemMap& map, uint64_t sram_bytes, ByFirst by_first = {});

  // Buffers whose [offset, offset + size) holds `addr` and that are live at `instr`.
  void live_at(uint64_t addr, int64_t instr, std::vector<int32_t>& out) const;
  // The same, with each buffer's first instruction and end (from the index: no MemBuffer
  // loaded, a cache miss each).
  struct Holder {
    int32_t id;
    int32_t first;
    uint64_t end;
  };
  // Answered without a search when an exclusive buffer (mark_exclusive) found alone before
  // at an address of the same hash (sole_) holds addr and is live at instr.
  void live_at(uint64_t addr, int64_t instr, std::vector<Holder>& out) const;
  // live_at(Holder)'s answer when the cache alone gives it (then the only holder): true and
  // `out` set, else false (ask live_at). Inline: nearly every operand of a generated program
  // is answered here (bench_sim 100k: all but ~0.3% of 157k SRAM accesses), and a call with
  // its vector cost 4x the check.
  bool sole_at(uint64_t addr, int64_t instr, Holder& out) const {
    if (sole_.empty()) return false;
    const Entry& s = sole_[sole_slot(addr)];
    if (!(s.first <= instr && instr <= s.last && s.holds(addr))) return false;
    out = holder(s);
    return true;
  }
  // Marks the buffers (by id, nonzero) that meet no other buffer: no byte of one is a byte
  // of another buffer while both are live. The caller knows them (the checkers' overlap
  // sweep). A byte of such a buffer has no other live holder while it lives, so the
  // Holder live_at may answer it alone from a cache. Unmarked (the default): no cache.
  void mark_exclusive(std::vector<uint8_t> exclusive);
  // Buffer `id` is about to be accessed at its first byte (it becomes live): when it is
  // exclusive, the cache of live_at(Holder) gets it now, not after a search.
  void expect(int32_t id) const;
  // Buffers live at `instr` that intersect [addr, addr + bytes), each once.
  void live_in_range(uint64_t addr, uint64_t bytes, int64_t instr, std::vector<int32_t>& out) const;
  // The buffer holding `addr` that died most recently before `instr` (kNone if none).
  int32_t dead_before(uint64_t addr, int64_t instr) const;
  // The buffer holding `addr` that becomes live first after `instr` (kNone if none).
  int32_t born_after(uint64_t addr, int64_t instr) const;

  const bundle::MemBuffer& buffer(int32_t id) const { return map_->buffers[static_cast<size_t>(id)]; }
  uint64_t end(int32_t id) const { return buffer(id).offset.value + buffer(id).size.value; }
  bool holds(int32_t id, uint64_t addr) const {
    return buffer(id).offset.value <= addr && addr < end(id);
  }

 private:
  // The buffer's liveness and bytes copied here, so that a query loads no MemBuffer (a cache
  // miss each). Instruction indices are clamped to 32 bits: queries name real instructions.
  struct Entry {
    int32_t first;
    int32_t last;
    int32_t max_last;  // prefix maximum of `last` over the unit's entries up to this one
    int32_t id;
    uint32_t lo, hi;   // [offset, offset + size), the end clamped to 32 bits
    bool holds(uint64_t addr) const { return lo <= addr && addr < hi; }
  };
  // The entries of all units in one array, unit u's at [heads_[u].begin, heads_[u + 1].begin):
  // a vector per unit cost an allocation (and a page fault per 4 KiB) each, for every seed.
  struct Unit {
    const Entry* first;
    const Entry* last;
    size_t size() const { return static_cast<size_t>(last - first); }
    const Entry& operator[](size_t k) const { return first[k]; }
  };
  static size_t born_by(const Unit& u, uint32_t& hint, int64_t instr);  // entries with first <= instr
  Unit unit_at(uint64_t u) const {
    return {entries_.data() + heads_[u].begin, entries_.data() + heads_[u + 1].begin};
  }
  template <typename F>
  void stab(uint64_t u, int64_t instr, F&& f) const;

  const bundle::MemMap* map_;
  uint64_t granule_;
  uint64_t units_ = 0;
  struct Head {
    uint32_t begin;  // the unit's first entry in entries_
    // Where the unit's last search ended: checkers ask in (roughly) increasing instruction
    // order, so the next answer is usually there or a step or two away. Beside `begin`, so
    // that a query's first cache miss brings both. One for all queues: a hint per queue was
    // further off (a queue comes back to a unit later than the queues' lag; bench_sim 100k:
    // born_by 159k -> 225k simulated LL misses).
    uint32_t hint;
  };
  Holder holder(const Entry& e) const { return {e.id, e.first, e.hi == UINT32_MAX ? end(e.id) : e.hi}; }
  std::vector<uint8_t> exclusive_;  // per buffer id (mark_exclusive); empty: none marked
  // The exclusive buffers (mark_exclusive) last found to be a query's only holder or
  // announced by expect(), by a hash of the address queried (empty slots hold no byte):
  // operands name a buffer by its first byte, and a buffer is asked for again by each
  // instruction that reads it. A search walks
  // the unit's live entries that do not hold the byte too (bench_sim 100k: 4 of them, ~200
  // Ir a query); a slot that holds the byte and is live answers alone (exclusive).
  static constexpr size_t kSoleSlots = 4096;
  static size_t sole_slot(uint64_t addr) { return ((addr >> 6) ^ (addr >> 16)) & (kSoleSlots - 1); }
  mutable std::vector<Entry> sole_;
  // An empty slot: no byte (lo = hi), never live.
  static constexpr Entry kNoEntry{INT32_MAX, INT32_MIN, INT32_MIN, kNone, 0, 0};
  // Per buffer id, the entry expect() puts in sole_ (id kNone: none; not exclusive, or
  // empty), made with the index: buffers become live in about id order, so expect() reads
  // this in order, not a MemBuffer (a cache miss each; bench_sim 100k: 98k -> 25k D1 misses).
  std::vector<Entry> announce_;
  mutable std::vector<Head> heads_;  // units_ + 1 (the last one only ends the last unit)
  std::vector<Entry> entries_;       // per unit, sorted by `first`
};

// Per buffer b: the other buffers live at b.first whose bytes meet b's, ascending ids (what
// the overlap checker looks at when b becomes live; none for an empty buffer). It depends on
// the map alone, so it is found once, in one sweep over the buffers in `first` order.
struct OverlapCandidates {
  std::vector<uint32_t> begin;  // b -> [begin[b], begin[b + 1]) of ids
  std::vector<int32_t> ids;
  std::span<const int32_t> of(size_t b) const { return {ids.data() + begin[b], ids.data() + begin[b + 1]}; }
};
// `index` is of `map`; `by_first` as for BufferIndex. Asks the index for the live buffers in
// each buffer's bytes when its instruction indices and ends are what the index keeps (32
// bits; so in any map of a real program), else (or `general`) sweeps a set of the live
// buffers by offset: the same lists.
OverlapCandidates find_overlap_candidates(const bundle::MemMap& map, const BufferIndex& index,
                                          BufferIndex::ByFirst by_first, bool general = false);

}  // namespace npuforge::sim
