#pragma once
// A deliberately broken allocator front end for tests (allocator::Placer, plugged into the
// generator's symbol table through GenOptions::placer): it shows that the static checks
// catch an allocator handing out an address inside a live buffer.
#include <cstdint>

#include "allocator/placer.h"

namespace npuforge::gen {

// Every `period`-th successful allocation reports an address one alignment unit inside the
// most recently placed live buffer (the real node is still reserved, so frees stay
// consistent).
class OverlappingPlacer final : public allocator::Placer {
 public:
  OverlappingPlacer(allocator::Allocator& a, uint32_t period) : a_(a), period_(period) {}
  allocator::AllocResult alloc(Bytes size) override;
  allocator::AllocResult alloc_at(SramAddr addr, Bytes size) override { return a_.alloc_at(addr, size); }
  void free(allocator::NodeId node) override;
  allocator::Allocator& allocator() override { return a_; }
  uint64_t planted() const { return planted_; }

 private:
  allocator::Allocator& a_;
  uint32_t period_;
  uint64_t count_ = 0, planted_ = 0;
  allocator::NodeId last_{};
  SramAddr last_addr_{};
};

}  // namespace npuforge::gen
