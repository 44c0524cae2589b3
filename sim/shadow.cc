#include "sim/shadow.h"

#include <algorithm>

namespace npuforge::sim {

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
  for (int32_t id : order) {
    const auto& b = buffer(id);
    if (b.size.value == 0) continue;
    const uint64_t lo = b.offset.value / granule_, hi = (end(id) - 1) / granule_;
    for (uint64_t u = lo; u <= hi; ++u) {
      auto& unit = units_[u];
      const int64_t prev = unit.max_last.empty() ? INT64_MIN : unit.max_last.back();
      unit.ids.push_back(id);
      unit.max_last.push_back(std::max(prev, b.last));
    }
  }
}

const BufferIndex::Unit* BufferIndex::unit(uint64_t addr) const {
  const uint64_t u = addr / granule_;
  return u < units_.size() ? &units_[u] : nullptr;
}

// Calls f(id) for every buffer of the unit live at `instr`: ids are sorted by `first`, so
// walk back from the last one born at or before `instr` while some earlier one may still live.
template <typename F>
void BufferIndex::stab(const Unit& u, int64_t instr, F&& f) const {
  auto it = std::upper_bound(u.ids.begin(), u.ids.end(), instr,
                             [&](int64_t i, int32_t id) { return i < buffer(id).first; });
  for (size_t j = static_cast<size_t>(it - u.ids.begin()); j-- > 0;) {
    if (u.max_last[j] < instr) break;
    if (buffer(u.ids[j]).last >= instr) f(u.ids[j]);
  }
}

void BufferIndex::live_at(uint64_t addr, int64_t instr, std::vector<int32_t>& out) const {
  out.clear();
  if (const Unit* u = unit(addr)) {
    stab(*u, instr, [&](int32_t id) {
      if (holds(id, addr)) out.push_back(id);
    });
  }
}

void BufferIndex::live_in_range(uint64_t addr, uint64_t bytes, int64_t instr,
                                std::vector<int32_t>& out) const {
  out.clear();
  if (bytes == 0) return;
  const uint64_t last = addr + bytes - 1;
  for (uint64_t u = addr / granule_; u <= last / granule_ && u < units_.size(); ++u) {
    stab(units_[u], instr, [&](int32_t id) {
      if (buffer(id).offset.value <= last && addr < end(id)) out.push_back(id);
    });
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
}

int32_t BufferIndex::dead_before(uint64_t addr, int64_t instr) const {
  int32_t best = kNone;
  if (const Unit* u = unit(addr)) {
    for (int32_t id : u->ids) {
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
    for (int32_t id : u->ids) {  // sorted by first: the first match is the earliest
      if (holds(id, addr) && buffer(id).first > instr) return id;
    }
  }
  return kNone;
}

}  // namespace npuforge::sim
