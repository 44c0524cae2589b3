#include "sim/shadow.h"

#include <algorithm>
#include <bit>
#include <climits>
#include <queue>
#include <set>

namespace npuforge::sim {
namespace {

int32_t clamp32(int64_t v) { return static_cast<int32_t>(std::clamp<int64_t>(v, INT32_MIN, INT32_MAX)); }

// Entries are repeated in every granule a buffer touches: a granule near the buffers' mean
// size keeps that to a few per buffer, while a granule holds about as many buffers over the
// run as a smaller one would (most buffers span several small granules). Half the mean: a
// query walks the granule's live buffers that do not hold its address, fewer in a smaller
// granule (bench_sim 100k: -10.5 M Ir in the run at the same index build cost; a quarter
// saved 5 M more in the run but cost 11 M more to build).
uint64_t granule_for(const bundle::MemMap& map) {
  uint64_t total = 0, count = 0;
  for (const auto& b : map.buffers) {
    if (b.size.value == 0) continue;
    total += b.size.value;
    ++count;
  }
  const uint64_t mean = count == 0 ? 0 : total / count;
  return std::max<uint64_t>({map.alignment.value, 64, std::min<uint64_t>(std::bit_floor(mean) / 2, 1024)});
}

}  // namespace

BufferIndex::BufferIndex(const bundle::MemMap& map, uint64_t sram_bytes, ByFirst by_first) : map_(&map) {
  granule_ = granule_for(map);
  uint64_t top = sram_bytes;
  for (const auto& b : map.buffers) top = std::max(top, uint64_t{b.offset.value} + b.size.value);
  units_ = (top + granule_ - 1) / granule_ + 1;
  // By `first`, then id: the order of `by_first` (ids are unique), given or made here.
  std::vector<int32_t> order(map.buffers.size());
  if (by_first.size() == order.size()) {
    for (size_t i = 0; i < order.size(); ++i) order[i] = by_first[i].second;
  } else {
    for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int32_t>(i);
    std::stable_sort(order.begin(), order.end(),
                     [&](int32_t a, int32_t b) { return buffer(a).first < buffer(b).first; });
  }
  // Counting sort into one array: count per unit, prefix sums, then fill in `first` order.
  heads_.assign(units_ + 1, Head{0, 0});
  for (const auto& b : map.buffers) {
    if (b.size.value == 0) continue;
    const uint64_t hi = (b.offset.value + b.size.value - 1) / granule_;
    for (uint64_t u = b.offset.value / granule_; u <= hi; ++u) ++heads_[u + 1].begin;
  }
  for (uint64_t u = 0; u < units_; ++u) heads_[u + 1].begin += heads_[u].begin;
  entries_.resize(heads_[units_].begin);
  announce_.assign(map.buffers.size(), kNoEntry);
  std::vector<uint32_t> fill(units_);
  for (uint64_t u = 0; u < units_; ++u) fill[u] = heads_[u].begin;
  for (int32_t id : order) {
    const auto& b = buffer(id);
    if (b.size.value == 0) continue;
    const uint64_t lo = b.offset.value / granule_, hi = (end(id) - 1) / granule_;
    const int32_t last = clamp32(b.last);
    announce_[static_cast<size_t>(id)] = {clamp32(b.first), last, last, id, b.offset.value,
                                          static_cast<uint32_t>(std::min<uint64_t>(end(id), UINT32_MAX))};
    for (uint64_t u = lo; u <= hi; ++u) {
      const uint32_t k = fill[u]++;
      const int32_t prev = k == heads_[u].begin ? INT32_MIN : entries_[k - 1].max_last;
      entries_[k] = {clamp32(b.first), last, std::max(prev, last), id, b.offset.value,
                     static_cast<uint32_t>(std::min<uint64_t>(end(id), UINT32_MAX))};
    }
  }
}

// Calls f(id) for every buffer of the unit live at `instr`: ids are sorted by `first`, so
// walk back from the last one born at or before `instr` while some earlier one may still live.
size_t BufferIndex::born_by(const Unit& u, uint32_t& hint, int64_t instr) {
  const size_t n = u.size();
  size_t pos = std::min<size_t>(hint, n);
  // A few steps either way: the three queues' instructions take turns, so a unit's queries
  // also step back a little (a binary search is a cache miss per step).
  for (int step = 0; step < 4 && pos < n && u[pos].first <= instr; ++step) ++pos;
  for (int step = 0; step < 4 && pos > 0 && u[pos - 1].first > instr; ++step) --pos;
  // Far: gallop from there (doubling steps, then a binary search of the last step) rather
  // than search the whole unit: the answer is usually tens of entries away (another queue
  // asked last, a few thousand instructions off), and a search of the whole unit starts with
  // steps far apart, a cache miss each.
  const auto after = [&](const Entry& e) { return instr < e.first; };
  if (pos < n && u[pos].first <= instr) {  // forward: the answer is in (pos, n]
    size_t lo = pos, step = 1;
    while (lo + step < n && !after(u[lo + step])) lo += step, step *= 2;
    const size_t hi = std::min(n, lo + step);
    pos = static_cast<size_t>(std::partition_point(u.first + lo + 1, u.first + hi, [&](const Entry& e) { return !after(e); }) - u.first);
  } else if (pos > 0 && u[pos - 1].first > instr) {  // backward: the answer is in [0, pos - 1)
    size_t hi = pos - 1, step = 1;
    while (hi >= step && after(u[hi - step])) hi -= step, step *= 2;
    const size_t lo = hi >= step ? hi - step + 1 : 0;
    pos = static_cast<size_t>(std::partition_point(u.first + lo, u.first + hi, [&](const Entry& e) { return !after(e); }) - u.first);
  }
  hint = static_cast<uint32_t>(pos);
  return pos;
}

template <typename F>
void BufferIndex::stab(uint64_t unit, int64_t instr, F&& f) const {
  const Unit u = unit_at(unit);
  for (size_t j = born_by(u, heads_[unit].hint, instr); j-- > 0;) {
    const Entry& e = u[j];
    if (e.max_last < instr) break;
    if (e.last >= instr) f(e);
  }
}

void BufferIndex::live_at(uint64_t addr, int64_t instr, std::vector<int32_t>& out) const {
  out.clear();
  if (const uint64_t u = addr / granule_; u < units_) {
    stab(u, instr, [&](const Entry& e) {
      if (e.holds(addr)) out.push_back(e.id);
    });
  }
}

void BufferIndex::mark_exclusive(std::vector<uint8_t> exclusive) {
  exclusive_ = std::move(exclusive);
  sole_.assign(kSoleSlots, kNoEntry);
  for (size_t id = 0; id < announce_.size(); ++id) {
    if (!exclusive_[id]) announce_[id].id = kNone;
  }
}

void BufferIndex::expect(int32_t id) const {
  if (sole_.empty()) return;  // no buffer marked exclusive
  const Entry& e = announce_[static_cast<size_t>(id)];
  if (e.id != kNone) sole_[sole_slot(e.lo)] = e;
}

void BufferIndex::live_at(uint64_t addr, int64_t instr, std::vector<Holder>& out) const {
  out.clear();
  // Exclusive: while it lives, no other buffer holds its bytes. Before the unit's division:
  // a buffer's bytes are in the index's range.
  if (Holder h; sole_at(addr, instr, h)) return out.push_back(h);
  Entry* sole = sole_.empty() ? nullptr : &sole_[sole_slot(addr)];
  const uint64_t u = addr / granule_;
  if (u >= units_) return;
  const Entry* found = nullptr;
  stab(u, instr, [&](const Entry& e) {
    if (e.holds(addr)) out.push_back(holder(e)), found = &e;
  });
  if (sole && out.size() == 1 && exclusive_[static_cast<size_t>(found->id)]) *sole = *found;
}

void BufferIndex::live_in_range(uint64_t addr, uint64_t bytes, int64_t instr,
                                std::vector<int32_t>& out) const {
  out.clear();
  if (bytes == 0) return;
  const uint64_t last = addr + bytes - 1;
  for (uint64_t u = addr / granule_; u <= last / granule_ && u < units_; ++u) {
    stab(u, instr, [&](const Entry& e) {
      if (e.lo <= last && addr < e.hi) out.push_back(e.id);
    });
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
}

int32_t BufferIndex::dead_before(uint64_t addr, int64_t instr) const {
  int32_t best = kNone;
  if (const uint64_t u = addr / granule_; u < units_) {
    const Unit un = unit_at(u);
    for (const Entry* e = un.first; e != un.last; ++e) {
      const int32_t id = e->id;
      if (holds(id, addr) && buffer(id).last < instr &&
          (best == kNone || buffer(id).last > buffer(best).last)) {
        best = id;
      }
    }
  }
  return best;
}

int32_t BufferIndex::born_after(uint64_t addr, int64_t instr) const {
  if (const uint64_t u = addr / granule_; u < units_) {
    const Unit un = unit_at(u);
    for (const Entry* e = un.first; e != un.last; ++e) {  // sorted by first: the first match is the earliest
      if (holds(e->id, addr) && e->first > instr) return e->id;
    }
  }
  return kNone;
}

namespace {

using ByFirst = BufferIndex::ByFirst;

// The index keeps instruction indices and ends in 32 bits: it answers liveness and bytes
// exactly for maps whose values fit.
bool index_exact(const bundle::MemMap& map) {
  for (const auto& b : map.buffers) {
    if (b.size.value == 0) continue;
    if (b.first < INT32_MIN || b.first > INT32_MAX || b.last < INT32_MIN || b.last > INT32_MAX ||
        uint64_t{b.offset.value} + b.size.value > UINT32_MAX) {
      return false;
    }
  }
  return true;
}

// Lists appended per buffer in `first` order, then gathered in id order.
class CandidateLists {
 public:
  explicit CandidateLists(size_t buffers) : at_(buffers, {0, 0}) {}
  void add(int32_t id, const std::vector<int32_t>& list) {
    at_[static_cast<size_t>(id)] = {static_cast<uint32_t>(flat_.size()), static_cast<uint32_t>(list.size())};
    flat_.insert(flat_.end(), list.begin(), list.end());
  }
  OverlapCandidates gather() const {
    OverlapCandidates out;
    out.begin.assign(at_.size() + 1, 0);
    for (size_t b = 0; b < at_.size(); ++b) out.begin[b + 1] = out.begin[b] + at_[b].second;
    out.ids.resize(flat_.size());
    for (size_t b = 0; b < at_.size(); ++b) {
      std::copy_n(flat_.begin() + at_[b].first, at_[b].second, out.ids.begin() + out.begin[b]);
    }
    return out;
  }

 private:
  std::vector<std::pair<uint32_t, uint32_t>> at_;  // per buffer: (start in flat_, count)
  std::vector<int32_t> flat_;
};

// The index's live buffers in [offset, end) at `first`: no set of the live buffers (a node
// allocated and a tree search per buffer).
void candidates_by_index(const bundle::MemMap& map, const BufferIndex& index, ByFirst by_first,
                         CandidateLists& lists) {
  std::vector<int32_t> live, out;
  for (const auto& [t, id] : by_first) {
    const auto& b = map.buffers[static_cast<size_t>(id)];
    if (b.size.value == 0) continue;
    index.live_in_range(b.offset.value, b.size.value, t, live);  // ascending, each once
    out.clear();
    for (int32_t c : live) {
      if (c != id) out.push_back(c);
    }
    if (!out.empty()) lists.add(id, out);
  }
}

// The general sweep: the buffers live at each `first` in a set by offset.
void candidates_by_sweep(const bundle::MemMap& map, const BufferIndex& index, ByFirst by_first,
                         CandidateLists& lists) {
  const auto& bufs = map.buffers;
  auto end_of = [&](int32_t id) { return uint64_t{bufs[static_cast<size_t>(id)].offset.value} + bufs[static_cast<size_t>(id)].size.value; };
  std::set<std::pair<uint64_t, int32_t>> active;  // (offset, id) of the buffers live now
  using Death = std::pair<int64_t, int32_t>;      // (last, id)
  std::priority_queue<Death, std::vector<Death>, std::greater<>> deaths;
  std::vector<int32_t> scratch, out;
  for (size_t g = 0; g < by_first.size();) {
    const int64_t t = by_first[g].first;
    size_t h = g;
    for (; h < by_first.size() && by_first[h].first == t; ++h) {
      const int32_t id = by_first[h].second;
      const auto& b = bufs[static_cast<size_t>(id)];
      if (b.size.value == 0 || b.last < t) continue;
      active.emplace(b.offset.value, id);
      deaths.emplace(b.last, id);
    }
    while (!deaths.empty() && deaths.top().first < t) {
      const int32_t id = deaths.top().second;
      active.erase({bufs[static_cast<size_t>(id)].offset.value, id});
      deaths.pop();
    }
    for (size_t k = g; k < h; ++k) {
      const int32_t id = by_first[k].second;
      const auto& b = bufs[static_cast<size_t>(id)];
      if (b.size.value == 0) continue;
      const uint64_t lo = b.offset.value, hi = end_of(id);
      out.clear();
      const auto from = active.lower_bound({lo, INT32_MIN});
      for (auto it = from; it != active.end() && it->first < hi; ++it) {
        if (it->second != id) out.push_back(it->second);
      }
      // Buffers starting below lo that reach into it hold byte lo: the index has them.
      index.live_at(lo, t, scratch);
      for (int32_t c : scratch) {
        if (bufs[static_cast<size_t>(c)].offset.value < lo) out.push_back(c);
      }
      std::sort(out.begin(), out.end());
      if (!out.empty()) lists.add(id, out);
    }
    g = h;
  }
}

}  // namespace

OverlapCandidates find_overlap_candidates(const bundle::MemMap& map, const BufferIndex& index,
                                          ByFirst by_first, bool general) {
  CandidateLists lists(map.buffers.size());
  if (!general && index_exact(map)) {
    candidates_by_index(map, index, by_first, lists);
  } else {
    candidates_by_sweep(map, index, by_first, lists);
  }
  return lists.gather();
}

}  // namespace npuforge::sim
