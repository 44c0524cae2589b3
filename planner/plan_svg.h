#pragma once
// A picture of a plan: time on x, address on y (0 at the bottom), one rectangle per buffer
// (its id as label and hover title), the lower bound, the peak and the capacity as
// horizontal lines, and every overlap the checker found in red.
#include <optional>
#include <string>
#include <vector>

#include "planner/plan_check.h"
#include "planner/plan_problem.h"

namespace npuforge::planner {

// A part of the plan to draw instead of all of it: times [t0, t1) and addresses [lo, hi)
// (buffers clipped to it), with address labels at its edges instead of the bound lines.
struct SvgWindow {
  TimeValue t0 = 0, t1 = 0;
  uint64_t lo = 0, hi = 0;
  std::optional<TimeValue> marker = std::nullopt;  // a time drawn as a vertical line ...
  std::string marker_label = {};                   // ... with this label
};

struct SvgOptions {
  bool inclusive = false;  // label lifetimes as [first, last] (memory maps)
  std::string title;       // shown at the top (e.g. the file name)
  // Buffer ids filled red (e.g. the buffers a simulator finding names), besides overlaps.
  std::vector<std::string> highlight = {};
  // Buffer ids labelled even where the label does not fit inside the rectangle.
  std::vector<std::string> labelled = {};
  std::optional<SvgWindow> window = std::nullopt;
};

// Buffers without an offset are not drawn. `check` may come from check_plan on the same
// problem (its overlap findings are drawn in red); pass nullptr to skip.
std::string plan_svg(const PlanProblem& plan, const PlanCheckResult* check,
                     const SvgOptions& options = {});

}  // namespace npuforge::planner
