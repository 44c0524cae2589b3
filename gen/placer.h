#pragma once
// A deliberately broken allocator front end for tests (allocator::Placer, plugged into the
// generator's symbol table through GenOptions::placer): it shows that the static checks
// catch an allocator handing out an address inside a live buffer.
#include <cstdint>
#include <memory>
#include <vector>

#include "allocator/placer.h"

namespace npuforge::gen {

// What the planted placers share: the real allocator behind them, and a count of allocations
// so that every `period`-th one is corrupted. Fixed-address allocations pass through.
class PeriodicPlacer : public allocator::Placer {
 public:
  PeriodicPlacer(allocator::Allocator& a, uint32_t period) : a_(a), period_(period) {}
  allocator::AllocResult alloc_at(SramAddr addr, Bytes size) override { return a_.alloc_at(addr, size); }
  allocator::Allocator& allocator() override { return a_; }

 protected:
  // True on every `period`-th call.
  bool due() { return ++count_ % period_ == 0; }
  allocator::Allocator& a_;

 private:
  uint32_t period_;
  uint64_t count_ = 0;
};

// Every `period`-th successful allocation reports an address one alignment unit inside the
// most recently placed live buffer (the real node is still reserved, so frees stay
// consistent).
class OverlappingPlacer final : public PeriodicPlacer {
 public:
  using PeriodicPlacer::PeriodicPlacer;
  allocator::AllocResult alloc(Bytes size) override;
  void free(allocator::NodeId node) override;
  uint64_t planted() const { return planted_; }

 private:
  uint64_t planted_ = 0;
  allocator::NodeId last_{};
  SramAddr last_addr_{};
};

// Planted bug gen-early-free: every `period`-th allocation's node goes back to the allocator
// at once while its symbol stays live, so later buffers land on it. The symbol table's own
// free of such a node is then swallowed.
class EarlyFreePlacer final : public PeriodicPlacer {
 public:
  using PeriodicPlacer::PeriodicPlacer;
  allocator::AllocResult alloc(Bytes size) override;
  void free(allocator::NodeId node) override;

 private:
  std::vector<allocator::NodeId> freed_early_;
};

// The generator's placer for a planted generator bug (gen-overlap-live, gen-early-free), or
// null when `plant` needs none.
std::unique_ptr<allocator::Placer> planted_placer(allocator::Allocator& a, Plant plant);

}  // namespace npuforge::gen
