#include "sim/ddr_owner.h"

#include <algorithm>

#include <fmt/core.h>

namespace npuforge::sim {

DdrOwnership::DdrOwnership(const bundle::MemMap& map) : map_(&map) {
  owner_.emplace(0, Owner{});
  owner_.emplace(UINT64_MAX, Owner{});  // end sentinel
  for (size_t t = 0; t < map.ddr_buffers.size(); ++t) {
    const auto& b = map.ddr_buffers[t];
    const auto id = static_cast<int32_t>(t);
    for (int64_t w : b.writers) writer_of_.emplace(w, id);
    for (int64_t r : b.readers) reader_of_.emplace(r, id);
    const bool held = b.held_at_start();
    if (!held || b.size.value == 0) continue;
    auto lo = split(b.offset.value), hi = split(b.offset.value + b.size.value);
    owner_.erase(std::next(lo), hi);
    lo->second = Owner{id, -1, 0};
  }
}

std::map<uint64_t, DdrOwnership::Owner>::iterator DdrOwnership::split(uint64_t at) {
  auto it = owner_.lower_bound(at);
  if (it != owner_.end() && it->first == at) return it;
  return owner_.emplace_hint(it, at, std::prev(it)->second);
}

int32_t DdrOwnership::meant(int64_t instr, bool write, uint64_t addr) const {
  const auto& named = write ? writer_of_ : reader_of_;
  if (auto it = named.find(instr); it != named.end()) return it->second;
  for (size_t t = 0; t < map_->ddr_buffers.size(); ++t) {
    const auto& b = map_->ddr_buffers[t];
    if (b.live_at(instr) && b.offset.value <= addr && addr < b.offset.value + b.size.value) return static_cast<int32_t>(t);
  }
  return -1;
}

void DdrOwnership::access(int64_t instr, const std::string& mnemonic, uint64_t cycle, bool write, uint64_t addr,
                          uint64_t bytes, std::vector<Finding>& out) {
  if (bytes == 0) return;
  const uint64_t end = addr + bytes;
  const int32_t self = meant(instr, write, addr);
  auto finding = [&](FindingKind kind, uint64_t lo, uint64_t hi, int32_t other) {
    Finding f;
    f.kind = kind;
    f.instr = instr;
    f.mnemonic = mnemonic;
    f.symbol = self >= 0 ? buf(self).name : std::string();
    f.space = isa::Space::Ddr;
    f.addr = lo;
    f.bytes = hi - lo;
    f.other_symbol = other >= 0 ? buf(other).name : std::string();
    return f;
  };
  if (write) {
    for (size_t t = 0; t < map_->ddr_buffers.size(); ++t) {
      const auto& b = map_->ddr_buffers[t];
      const auto id = static_cast<int32_t>(t);
      const uint64_t lo = std::max(addr, b.offset.value), hi = std::min(end, b.offset.value + b.size.value);
      if (id == self || lo >= hi || !b.live_at(instr)) continue;
      if (!reported_.insert({instr, id}).second) continue;
      Finding f = finding(FindingKind::DdrClobber, lo, hi, id);
      f.detail = fmt::format("at cycle {} the store writes bytes of tensor %{} ({}, live [{}, {}]){}", cycle, b.name,
                             b.region, b.first, b.last,
                             self >= 0 ? fmt::format(" while producing %{}", buf(self).name) : std::string(" (it names no tensor)"));
      out.push_back(std::move(f));
    }
    auto lo = split(addr), hi = split(end);
    owner_.erase(std::next(lo), hi);
    lo->second = Owner{self, instr, cycle};
    return;
  }
  if (self < 0) return;  // a read naming no tensor: only the bytes' history could be judged
  auto it = std::prev(owner_.upper_bound(addr));
  for (; it->first < end; ++it) {
    const Owner& o = it->second;
    if (o.tensor < 0 || o.tensor == self) continue;
    if (!reported_.insert({instr, o.tensor}).second) continue;
    const uint64_t lo = std::max(addr, it->first), hi = std::min(end, std::next(it)->first);
    Finding f = finding(FindingKind::DdrStaleRead, lo, hi, o.tensor);
    if (o.writer >= 0) {
      f.other_instr = o.writer;
      f.other_mnemonic = "store";
    }
    f.detail = fmt::format("at cycle {} the load of %{} reads bytes last written for tensor %{}{}", cycle,
                           buf(self).name, buf(o.tensor).name,
                           o.writer >= 0 ? fmt::format(" (by #{} at cycle {})", o.writer, o.cycle)
                                         : std::string(" (before the program)"));
    out.push_back(std::move(f));
  }
}

}  // namespace npuforge::sim
