#pragma once
// Internal to the checkers: per byte of a memory, the last write and the last read of each
// queue (the hazard checker's FastTrack state: with a feed order consistent with
// happens-before, the last access per queue suffices), as runs of equal bytes (run_map.h).
#include <array>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "isa/instruction.h"
#include "sim/run_map.h"

namespace npuforge::sim {

class HazardMap {
 public:
  // Instruction indices, -1 for none (the checkers take at most INT32_MAX instructions).
  struct Seg {
    std::array<int32_t, isa::kNumQueues> last_write{-1, -1, -1};
    std::array<int32_t, isa::kNumQueues> last_read{-1, -1, -1};
    // As three 8-byte words: the defaulted one compared the arrays with a memcmp call, once
    // per run merged (coalesce), ~5% of the checkers' time; six int compares cost 2x this.
    bool operator==(const Seg& o) const {
      std::array<uint64_t, 3> a, b;
      std::memcpy(a.data(), this, sizeof a);
      std::memcpy(b.data(), &o, sizeof b);
      return ((a[0] ^ b[0]) | (a[1] ^ b[1]) | (a[2] ^ b[2])) == 0;
    }
  };

  static_assert(sizeof(Seg) == 24 && std::is_trivially_copyable_v<Seg>, "Seg::operator== compares three words");

  explicit HazardMap(uint64_t bytes) : runs_(bytes, Seg{}) {}

  // Calls f(lo, hi, seg) for the runs of [lo, hi) in address order, clipped to [lo, hi).
  template <typename F>
  void visit(uint64_t lo, uint64_t hi, F&& f) const {
    runs_.visit(lo, hi, f);
  }
  // Queue q's instruction wrote [lo, hi): it now stands for every earlier access of these
  // bytes (an access unordered with one of them and later in the feed is unordered with this
  // write too), so the bytes hold just this write.
  void record_write(uint64_t lo, uint64_t hi, unsigned q, int32_t instr) {
    Seg s;
    s.last_write[q] = instr;
    runs_.assign(lo, hi, s);
  }
  // Queue q's instruction read [lo, hi).
  void record_read(uint64_t lo, uint64_t hi, unsigned q, int32_t instr) {
    runs_.update(lo, hi, [&](Seg& s) { s.last_read[q] = instr; });
  }
  // visit(lo, hi, f) then record_write / record_read, in one pass over the runs.
  template <typename F>
  void visit_record_write(uint64_t lo, uint64_t hi, unsigned q, int32_t instr, F&& f) {
    Seg s;
    s.last_write[q] = instr;
    runs_.visit_assign(lo, hi, f, s);
  }
  template <typename F>
  void visit_record_read(uint64_t lo, uint64_t hi, unsigned q, int32_t instr, F&& f) {
    runs_.visit_update(lo, hi, f, [&](Seg& s) { s.last_read[q] = instr; });
  }

 private:
  RunMap<Seg> runs_;
};

}  // namespace npuforge::sim
