#pragma once
// What the generator asks of an SRAM allocator. The real one is allocator::Allocator;
// the interface exists so that tests can plant a broken allocator (one that hands out an
// address inside a live buffer) and show that the static checks catch it.
#include <cstdint>

#include "allocator/allocator.h"

namespace npuforge::gen {

class Placer {
 public:
  virtual ~Placer() = default;
  virtual allocator::AllocResult alloc(Bytes size) = 0;
  // Reserves exactly [addr, addr + size) when those bytes are free (compaction targets).
  virtual allocator::AllocResult alloc_at(SramAddr addr, Bytes size) = 0;
  virtual void free(allocator::NodeId node) = 0;
  virtual allocator::Allocator& allocator() = 0;
};

// The real allocator, unchanged.
class AllocatorPlacer final : public Placer {
 public:
  explicit AllocatorPlacer(allocator::Allocator& a) : a_(a) {}
  allocator::AllocResult alloc(Bytes size) override { return a_.alloc(size); }
  allocator::AllocResult alloc_at(SramAddr addr, Bytes size) override { return a_.alloc_at(addr, size); }
  void free(allocator::NodeId node) override { a_.free(node); }
  allocator::Allocator& allocator() override { return a_; }

 private:
  allocator::Allocator& a_;
};

// A deliberately broken allocator for tests: every `period`-th successful allocation
// reports an address one alignment unit inside the most recently placed live buffer
// (the real node is still reserved, so frees stay consistent).
class OverlappingPlacer final : public Placer {
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
