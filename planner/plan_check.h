#pragma once
// Static checking of a memory plan: every buffer has an offset, the offset is aligned, the
// buffer lies inside the capacity, and no two buffers whose lifetimes intersect share a
// byte. A sweep over time with an ordered set of live address ranges: O(n log n), so a
// 100k-buffer plan checks in milliseconds.
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "planner/plan_problem.h"
#include "util/types.h"

namespace npuforge::bundle {
struct MemMap;
}

namespace npuforge::planner {

using bundle::MemMap;


enum class PlanOutcome {
  kGood,            // nothing wrong (never stored as a finding; the value of an empty result)
  kOverlap,         // two buffers with intersecting lifetimes share at least one byte
  kMisaligned,      // offset % alignment != 0
  kOutOfCapacity,   // offset + size > capacity
  kMissingOffset,   // the buffer has no offset
  kBadLifespan,     // lower > upper
};

const char* to_string(PlanOutcome outcome);

struct PlanFinding {
  PlanOutcome outcome = PlanOutcome::kGood;
  size_t buffer = 0;                   // index into the problem's buffers
  std::optional<size_t> other;         // the second buffer of an overlap
  std::string message;                 // names both buffers, their byte ranges and lifetimes
};

struct PlanCheckResult {
  std::vector<PlanFinding> findings;  // at most PlanCheckOptions::max_findings
  size_t total_findings = 0;          // findings counted, including those not stored
  Bytes peak;                         // max offset + size over placed buffers
  Bytes lower_bound;                  // see planner::lower_bound
  size_t buffer_count = 0;
  bool ok() const { return total_findings == 0; }
  // The first finding's outcome, or kGood.
  PlanOutcome outcome() const { return findings.empty() ? PlanOutcome::kGood : findings[0].outcome; }
  // One line per stored finding, then a summary line (peak, lower bound, counts).
  std::string report() const;
};

struct PlanCheckOptions {
  size_t max_findings = 100;  // stored findings; the rest are only counted
};

// Checks buffer i at offsets[i]; a buffer with i >= offsets.size() is kMissingOffset.
// The buffers' own `offset` fields are ignored. No capacity: only overlaps, alignment and
// missing offsets are checked.
PlanCheckResult check_plan(const PlanProblem& problem, const std::vector<Offset>& offsets,
                           std::optional<Bytes> capacity, PlanCheckOptions options = {});

// Checks the buffers' own `offset` fields against problem.capacity.
PlanCheckResult check_plan(const PlanProblem& problem, PlanCheckOptions options = {});

// Checks a generator memory map: inclusive [first, last] lifetimes, capacity sram_bytes,
// every offset a multiple of the map's alignment. Messages name the symbols.
PlanCheckResult check_memmap(const MemMap& map, PlanCheckOptions options = {});

}  // namespace npuforge::planner
