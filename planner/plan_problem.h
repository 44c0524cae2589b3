#pragma once
// An offline memory-planning problem: buffers with sizes and lifetimes, to be given byte
// offsets in one arena so that no two buffers live at the same time share a byte.
//
// Every lifetime here is HALF-OPEN: [lower, upper), in abstract steps. Two buffers
// conflict iff a.lower < b.upper && b.lower < a.upper; a buffer ending at t and one
// starting at t may share bytes (the convention of google/minimalloc's CSV format).
// Inclusive [first, last] lifetimes (TFLite, npuforge memory maps) become [first, last + 1).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "util/types.h"

namespace npuforge::bundle {
struct MemMap;
}

namespace npuforge::planner {

using bundle::MemMap;


using Offset = uint64_t;    // byte offset from the arena base
using TimeValue = int64_t;  // an abstract time step

struct Lifespan {
  TimeValue lower = 0;
  TimeValue upper = 0;  // exclusive
  bool intersects(const Lifespan& o) const { return lower < o.upper && o.lower < upper; }
  bool operator==(const Lifespan&) const = default;
};

struct PlanBuffer {
  std::string id;
  Lifespan lifespan;
  Bytes size;
  Bytes alignment{1};           // the offset must be a multiple of this (>= 1)
  std::optional<Offset> offset;  // fixed on input (planners keep it), or the planned result
  bool operator==(const PlanBuffer&) const = default;
};

struct PlanProblem {
  std::vector<PlanBuffer> buffers;
  std::optional<Bytes> capacity;  // none: the arena may grow as needed
  bool operator==(const PlanProblem&) const = default;
};

// The largest sum of sizes of buffers live at one time: no plan can have a smaller peak.
Bytes lower_bound(const PlanProblem& problem);

// The arena size a plan needs: max over buffers of offset + size (0 if nothing is placed).
Bytes plan_peak(const PlanProblem& problem);

// The buffers' offsets in order; throws npuforge::Error naming the first buffer without one.
std::vector<Offset> plan_offsets(const PlanProblem& problem);

// A copy of `problem` with buffer i at offsets[i] (offsets.size() must equal the buffer count).
PlanProblem with_offsets(const PlanProblem& problem, const std::vector<Offset>& offsets);

// A memory map as a plan problem: symbols become ids, [first, last] becomes
// [first, last + 1), sram_bytes the capacity, the map's alignment every buffer's alignment,
// and the map's offsets the buffers' offsets.
PlanProblem problem_from_memmap(const MemMap& map);

// Absolute addresses of a saved plan placed at `base`: base + offset for every buffer.
// `instances` copies lie side by side for parallel runs, copy k at base + k * peak
// (peak rounded up to `stride_alignment`). Result[k][i] is buffer i of copy k.
std::vector<std::vector<uint64_t>> instantiate(const PlanProblem& plan, uint64_t base,
                                               int instances = 1, Bytes stride_alignment = {1});

}  // namespace npuforge::planner
