#include "gen/placer.h"

#include <algorithm>

namespace npuforge::gen {

allocator::AllocResult OverlappingPlacer::alloc(Bytes size) {
  allocator::AllocResult r = a_.alloc(size);
  if (!r.ok()) return r;
  const bool plant = due() && last_.valid() && a_.is_live(last_);
  const SramAddr real = r.addr;
  if (plant) {
    // One alignment unit inside the previous live buffer: overlaps it by design.
    const uint64_t inside = uint64_t(last_addr_.value) + a_.alignment().value;
    if (inside + r.padded.value <= a_.base().value + a_.capacity().value) {
      r.addr = SramAddr{static_cast<uint32_t>(inside)};
      ++planted_;
    }
  }
  last_ = r.node;
  last_addr_ = real;
  return r;
}

void OverlappingPlacer::free(allocator::NodeId node) {
  if (node == last_) last_ = {};
  a_.free(node);
}

allocator::AllocResult EarlyFreePlacer::alloc(Bytes size) {
  const allocator::AllocResult r = a_.alloc(size);
  if (r.ok() && due()) {
    a_.free(r.node);
    freed_early_.push_back(r.node);
  }
  return r;
}

void EarlyFreePlacer::free(allocator::NodeId node) {
  const auto it = std::find(freed_early_.begin(), freed_early_.end(), node);
  if (it != freed_early_.end()) {
    freed_early_.erase(it);
    return;
  }
  a_.free(node);
}

std::unique_ptr<allocator::Placer> planted_placer(allocator::Allocator& a, Plant plant) {
  if (plant.is(PlantId::GenOverlapLive)) return std::make_unique<OverlappingPlacer>(a, 4);
  if (plant.is(PlantId::GenEarlyFree)) return std::make_unique<EarlyFreePlacer>(a, 4);
  return nullptr;
}

}  // namespace npuforge::gen
