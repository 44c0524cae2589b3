#pragma once
// What a SymbolTable asks of an SRAM allocator. AllocatorPlacer passes every request to the
// real allocator::Allocator; the interface exists so that a test can put a broken allocator
// behind the table (one that reports an address inside a live buffer) and show that the
// checks downstream catch it (gen::OverlappingPlacer).
#include "allocator/allocator.h"

namespace npuforge::allocator {

class Placer {
 public:
  virtual ~Placer() = default;
  virtual AllocResult alloc(Bytes size) = 0;
  // Reserves exactly [addr, addr + size) when those bytes are free (compaction targets).
  virtual AllocResult alloc_at(SramAddr addr, Bytes size) = 0;
  virtual void free(NodeId node) = 0;
  virtual Allocator& allocator() = 0;
};

// The real allocator, unchanged.
class AllocatorPlacer final : public Placer {
 public:
  explicit AllocatorPlacer(Allocator& a) : a_(a) {}
  AllocResult alloc(Bytes size) override { return a_.alloc(size); }
  AllocResult alloc_at(SramAddr addr, Bytes size) override { return a_.alloc_at(addr, size); }
  void free(NodeId node) override { a_.free(node); }
  Allocator& allocator() override { return a_; }

 private:
  Allocator& a_;
};

}  // namespace npuforge::allocator
