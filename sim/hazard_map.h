#pragma once
// Internal to the checkers: per byte of a memory, the last write and the last read of each
// queue (the hazard checker's FastTrack state: with a feed order consistent with
// happens-before, the last access per queue suffices), as runs of equal bytes (run_map.h).
#include <array>
#include <cstdint>

#include "isa/instruction.h"
#include "sim/run_map.h"

namespace npuforge::sim {

class HazardMap {
 public:
  // Instruction indices, -1 for none (the checkers take at most INT32_MAX instructions).
  struct Seg {
    std::array<int32_t, isa::kNumQueues> last_write{-1, -1, -1};
    std::array<int32_t, isa::kNumQueues> last_read{-1, -1, -1};
    // Spelled out: the defaulted one compared the arrays with a memcmp call, once per run
    // merged (coalesce), ~5% of the checkers' time.
    bool operator==(const Seg& o) const {
      bool same = true;
      for (unsigned q = 0; q < isa::kNumQueues; ++q)
        same &= last_write[q] == o.last_write[q] && last_read[q] == o.last_read[q];
      return same;
    }
  };

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
