// When the allocator cannot place a symbol: the profile's policy makes room, and retiring
// is the fallback of every policy (it always progresses while an unpinned buffer lives).
//   retire:  emit a live buffer's pending consumers (STOREs) so that it dies;
//   compact: slide live buffers down with MOVEs into the free space below them; each moved
//            buffer becomes a new symbol (name@k) whose producer is the MOVE;
//   spill:   STORE a live buffer to a DDR spill slot, free it, LOAD it back later.
#include <algorithm>
#include <optional>

#include "gen/builder.h"

namespace npuforge::gen {
namespace {

constexpr unsigned kMaxMovesPerCompaction = 64;

}  // namespace

bool Builder::make_room(uint64_t padded) {
  bool ok = false;
  switch (p_.oom) {
    case OomPolicy::Retire: ok = retire_one(); break;
    case OomPolicy::Compact: ok = compact(padded); break;
    case OomPolicy::Spill: ok = spill_one(); break;
  }
  return ok || retire_one();
}

// A random live buffer that the current operation does not hold; kNone if none.
static uint32_t pick_victim(Builder& b, bool need_exact_factor) {
  const size_t n = b.live_.size();
  if (n == 0) return kNone;
  const size_t start = b.rng_.below(n);
  for (size_t i = 0; i < n; ++i) {
    const uint32_t id = b.live_[(start + i) % n];
    uint32_t rows, rb;
    if (b.pinned(id)) continue;
    if (need_exact_factor && !factor_exact(b.written(id), b.dma_limits_, rows, rb)) continue;
    return id;
  }
  return kNone;
}

bool Builder::retire_one() {
  const uint32_t v = pick_victim(*this, false);
  if (v == kNone) return false;
  while (syms_[v].live) store_of(v, true);
  ++sum_.retired;
  return true;
}

bool Builder::compact(uint64_t padded) {
  const Bound& mv = roles_.pick(OpKind::Move, rng_);
  allocator::Allocator& a = table_.allocator();
  const std::vector<allocator::NodeInfo> nodes = a.nodes();
  uint64_t cursor = a.base().value;
  unsigned moves = 0;
  for (const allocator::NodeInfo& n : nodes) {
    if (!n.in_use) continue;
    const uint64_t at = n.addr.value, size = n.size.value;
    // Only a buffer whose new place does not overlap its old one: the static check must
    // never see the source and the copy, both live at the MOVE, share a byte. (That test
    // first: it is free, the owner's records are not.)
    uint32_t sym = kNone;
    if (cursor + size <= at && moves < kMaxMovesPerCompaction) {
      const std::optional<SymbolId> owner = table_.owner(n.id);
      sym = owner ? owner->value : kNone;
    }
    const bool movable = sym != kNone && syms_[sym].live && placement(sym).addr.value == at && !pinned(sym);
    if (movable) {
      // The moved buffer is the next version of its symbol (name@k), produced by the MOVE.
      const uint64_t len = written(sym);
      const allocator::SymbolTable::Defined to = table_.define_version_at(
          SymbolId{sym}, SramAddr{static_cast<uint32_t>(cursor)}, Bytes{len}, refs(sym));
      if (to.ok()) {
        const uint32_t id = track(to.id, syms_[sym].kind, syms_[sym].depth, sym);
        isa::Instruction in = mv.make();
        in.raw[mv[move::len]] = static_cast<uint32_t>(len);
        const Use rd{sym, mv[move::src], false}, wr{id, mv[move::dst]};
        emit(in, {&rd, 1}, {&wr, 1});
        release(sym);
        ++sum_.compact_moves;
        ++moves;
        cursor += size;
        if (a.stats().largest_free.value >= padded) return true;
        continue;
      }
    }
    cursor = at + size;
  }
  return moves > 0;
}

bool Builder::spill_one() {
  if (free_slots_.empty()) return false;
  const uint32_t v = pick_victim(*this, true);
  if (v == kNone) return false;
  const uint32_t slot = free_slots_.back();
  free_slots_.pop_back();
  const uint64_t ddr = ddr_.spill_base + uint64_t(slot) * ddr_.spill_slot_bytes;
  store_of(v, false, static_cast<int64_t>(ddr), slot_reader_[slot]);
  spilled_.push_back({v, slot, static_cast<uint32_t>(instrs_.size() - 1), refs(v)});
  release(v);
  ++sum_.spills;
  return true;
}

void Builder::reload_one() {
  const Spilled e = spilled_[rng_.below(spilled_.size())];
  const Bound& ld = roles_.pick(OpKind::Load, rng_);
  const Sym old = syms_[e.sym];  // a copy: new_symbol may grow syms_
  const uint64_t bytes = written(e.sym);
  uint32_t rows = 1, rb = 1;
  factor_exact(bytes, dma_limits_, rows, rb);  // held when it was spilled
  const uint32_t id = new_symbol(bytes, e.refs, old.kind, old.depth, e.sym);  // the next version
  if (id == kNone) return;
  isa::Instruction in = ld.make();
  in.raw[ld[dma::ddr]] = static_cast<uint32_t>(ddr_.spill_base + uint64_t(e.slot) * ddr_.spill_slot_bytes);
  in.raw[ld[dma::rows]] = rows;
  in.raw[ld[dma::row_bytes]] = rb;
  in.raw[ld[dma::stride]] = rb;
  const Use w{id, ld[dma::sram]};
  const uint32_t idx = emit(in, {}, {&w, 1}, e.store);
  // The slot may take the next spill once this LOAD has read it (that STORE waits for it).
  slot_reader_[e.slot] = idx;
  free_slots_.push_back(e.slot);
  spilled_.erase(std::find_if(spilled_.begin(), spilled_.end(), [&](const Spilled& s) { return s.sym == e.sym; }));
  ++sum_.reloads;
}

}  // namespace npuforge::gen
