#include "sim/shadow.h"

#include <algorithm>

namespace npuforge::sim {
namespace {

int32_t clamp32(int64_t v) { return static_cast<int32_t>(std::clamp<int64_t>(v, INT32_MIN, INT32_MAX)); }

}  // namespace

BufferIndex::BufferIndex(const allocator::MemMap& map, uint64_t sram_bytes) : map_(&map) {
  // A coarse granule keeps the index small; queries still test exact containment.
  granule_ = std::max<uint64_t>(map.alignment.value, 64);
  uint64_t top = sram_bytes;
  for (const auto& b : map.buffers) top = std::max(top, uint64_t{b.offset.value} + b.size.value);
  units_.resize((top + granule_ - 1) / granule_ + 1);
  std::vector<int32_t> order(map.buffers.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int32_t>(i);
  std::stable_sort(order.begin(), order.end(),
                   [&](int32_t a, int32_t b) { return buffer(a).first < buffer(b).first; });
  std::vector<uint32_t> per_unit(units_.size(), 0);  // sized first: one allocation per unit
  for (const auto& b : map.buffers) {
    if (b.size.value == 0) continue;
    const uint64_t hi = (b.offset.value + b.size.value - 1) / granule_;
    for (uint64_t u = b.offset.value / granule_; u <= hi; ++u) ++per_unit[u];
  }
  for (size_t u = 0; u < units_.size(); ++u) units_[u].entries.reserve(per_unit[u]);
  for (int32_t id : order) {
    const auto& b = buffer(id);
    if (b.size.value == 0) continue;
    const uint64_t lo = b.offset.value / granule_, hi = (end(id) - 1) / granule_;
    for (uint64_t u = lo; u <= hi; ++u) {
      auto& entries = units_[u].entries;
      const int32_t last = clamp32(b.last);
      const int32_t prev = entries.empty() ? INT32_MIN : entries.back().max_last;
      entries.push_back({clamp32(b.first), last, std::max(prev, last), id, b.offset.value,
                         static_cast<uint32_t>(std::min<uint64_t>(end(id), UINT32_MAX))});
    }
  }
}

const BufferIndex::Unit* BufferIndex::unit(uint64_t addr) const {
  const uint64_t u = addr / granule_;
  return u < units_.size() ? &units_[u] : nullptr;
}

// Calls f(id) for every buffer of the unit live at `instr`: ids are sorted by `first`, so
// walk back from the last one born at or before `instr` while some earlier one may still live.
size_t BufferIndex::born_by(const Unit& u, int64_t instr) {
  const auto& es = u.entries;
  size_t pos = std::min<size_t>(u.hint, es.size());
  if (pos == 0 || es[pos - 1].first <= instr) {
    for (int step = 0; step < 4 && pos < es.size() && es[pos].first <= instr; ++step) ++pos;
    if (pos < es.size() && es[pos].first <= instr) pos = 0;  // far ahead: search
  } else {
    pos = 0;
  }
  if (pos == 0) {
    pos = static_cast<size_t>(std::upper_bound(es.begin(), es.end(), instr,
                                               [](int64_t i, const Entry& e) { return i < e.first; }) -
                              es.begin());
  }
  u.hint = static_cast<uint32_t>(pos);
  return pos;
}

template <typename F>
void BufferIndex::stab(const Unit& u, int64_t instr, F&& f) const {
  for (size_t j = born_by(u, instr); j-- > 0;) {
    const Entry& e = u.entries[j];
    if (e.max_last < instr) break;
    if (e.last >= instr) f(e);
  }
}

void BufferIndex::live_at(uint64_t addr, int64_t instr, std::vector<int32_t>& out) const {
  out.clear();
  if (const Unit* u = unit(addr)) {
    stab(*u, instr, [&](const Entry& e) {
      if (e.holds(addr)) out.push_back(e.id);
    });
  }
}

void BufferIndex::live_in_range(uint64_t addr, uint64_t bytes, int64_t instr,
                                std::vector<int32_t>& out) const {
  out.clear();
  if (bytes == 0) return;
  const uint64_t last = addr + bytes - 1;
  for (uint64_t u = addr / granule_; u <= last / granule_ && u < units_.size(); ++u) {
    stab(units_[u], instr, [&](const Entry& e) {
      if (e.lo <= last && addr < e.hi) out.push_back(e.id);
    });
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
}

int32_t BufferIndex::dead_before(uint64_t addr, int64_t instr) const {
  int32_t best = kNone;
  if (const Unit* u = unit(addr)) {
    for (const Entry& e : u->entries) {
      const int32_t id = e.id;
      if (holds(id, addr) && buffer(id).last < instr &&
          (best == kNone || buffer(id).last > buffer(best).last)) {
        best = id;
      }
    }
  }
  return best;
}

int32_t BufferIndex::born_after(uint64_t addr, int64_t instr) const {
  if (const Unit* u = unit(addr)) {
    for (const Entry& e : u->entries) {  // sorted by first: the first match is the earliest
      if (holds(e.id, addr) && e.first > instr) return e.id;
    }
  }
  return kNone;
}

}  // namespace npuforge::sim
