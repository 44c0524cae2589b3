#pragma once
// Internal to gen/: the last access per queue (queue sequence numbers) of every alignment
// unit of freed SRAM, so that a new writer of those bytes waits for every earlier reader
// and writer. A freed buffer assigns its accesses to its units; a new buffer asks for the
// per-queue maximum over its units. Ranges are in bytes, [addr, addr + len), and cover the
// units from addr / unit up to (addr + len) / unit (both rounded down).
//
// Why blocks: buffers span up to thousands of units, and a plain array made every free and
// every placement walk all of them (15-20% of generation time). Units are grouped in blocks
// of kBlock with a summary: a block a range covers whole is assigned or read through its
// summary alone; only the (at most two) partly covered blocks of a range touch units.
// A unit is kept as four 32-bit lanes (the three queues and an unused zero) in one 16-byte
// vector, so that a unit's maximum is one vector max and its assignment one store; the
// unit array is padded to whole blocks, so no block needs a bounds check.
#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace npuforge::gen {

class ShadowClocks {
 public:
  using Clock = std::array<uint32_t, 3>;

  ShadowClocks() = default;
  // `units` units of `unit_bytes` each (a power of two), all zero. Throws npuforge::Error
  // when unit_bytes is not a power of two.
  ShadowClocks(size_t units, uint64_t unit_bytes);

  // The range's units get `c` (units past the end are ignored).
  void assign(uint64_t addr, uint64_t len, const Clock& c) {
    assign_units(addr >> shift_, (addr + len) >> shift_, c);
  }
  // Per queue, the largest value over the range's units (all 0 when it covers none). Not
  // const: it may refresh a block's summary.
  Clock max_over(uint64_t addr, uint64_t len) { return max_over_units(addr >> shift_, (addr + len) >> shift_); }

  size_t size() const { return size_; }

 private:
  static constexpr size_t kBlock = 16;
  // GCC/Clang vector extension: element-wise compare and select on SSE2 registers.
  using Lanes = uint32_t __attribute__((vector_size(16)));
  static Lanes lanes(const Clock& c) { return Lanes{c[0], c[1], c[2], 0}; }
  static Lanes max(Lanes a, Lanes b) { return a > b ? a : b; }
  enum class State : uint8_t {
    Exact,    // the units hold the values; value = their maximum
    Stale,    // the units hold the values; value unknown (rescan before use)
    Uniform,  // every unit's value is `value`; the units themselves are not kept
  };
  struct Block {
    Lanes value{};
    State state = State::Exact;
  };
  void assign_units(size_t first, size_t end, const Clock& c);
  Clock max_over_units(size_t first, size_t end);
  // [first, end) within one block, not all of it.
  void assign_part(size_t first, size_t end, Lanes v);
  Lanes max_part(size_t first, size_t end) const;
  void materialise(size_t b);        // a Uniform block's units written out, now Stale
  void rescan(size_t b);             // a Stale block's value recomputed, now Exact

  unsigned shift_ = 0;  // log2 of the unit in bytes
  size_t size_ = 0;     // units (units_ holds whole blocks: the padding is never assigned)
  std::vector<Lanes> units_;
  std::vector<Block> blocks_;
};

}  // namespace npuforge::gen
