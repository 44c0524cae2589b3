#pragma once
// A picture of a plan: time on x, address on y (0 at the bottom), one rectangle per buffer
// (its id as label and hover title), the lower bound, the peak and the capacity as
// horizontal lines, and every overlap the checker found in red.
#include <string>
#include <vector>

#include "planner/plan_check.h"
#include "planner/plan_problem.h"

namespace npuforge::planner {

struct SvgOptions {
  bool inclusive = false;  // label lifetimes as [first, last] (memory maps)
  std::string title;       // shown at the top (e.g. the file name)
  // Buffer ids filled red (e.g. the buffers a simulator finding names), besides overlaps.
  std::vector<std::string> highlight = {};
};

// Buffers without an offset are not drawn. `check` may come from check_plan on the same
// problem (its overlap findings are drawn in red); pass nullptr to skip.
std::string plan_svg(const PlanProblem& plan, const PlanCheckResult* check,
                     const SvgOptions& options = {});

}  // namespace npuforge::planner
