#include "gen/placer.h"

namespace npuforge::gen {

allocator::AllocResult OverlappingPlacer::alloc(Bytes size) {
  allocator::AllocResult r = a_.alloc(size);
  if (!r.ok()) return r;
  const bool plant = ++count_ % period_ == 0 && last_.valid() && a_.is_live(last_);
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

}  // namespace npuforge::gen
