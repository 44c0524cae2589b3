#pragma once
// The part of a failing seed's memory timeline that shows its failure: the instructions around
// its first finding and the addresses of the buffers the finding names, with their neighbours.
// A program is thousands of instructions wide; drawn whole, a faulting buffer is a few pixels.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "planner/plan_problem.h"
#include "planner/plan_svg.h"

namespace npuforge::regress {

struct FailureWindow {
  planner::SvgWindow view;            // instructions, addresses, the finding's instruction marked
  std::vector<std::string> faulting;  // the finding's buffers live in the window
  std::vector<std::string> labelled;  // those and their neighbours (next below and above in SRAM)
};

// The window around the finding's instruction ("#N", else the start of the first buffer it
// names), `half_width` instructions to each side; its addresses span the finding's buffers
// (else its "sram[lo, hi)" range, else every buffer live in the window) and the nearest
// buffer below and above them. nullopt when the finding names no instruction or buffer of `plan`.
std::optional<FailureWindow> failure_window(const planner::PlanProblem& plan, const std::string& finding,
                                            planner::TimeValue half_width = 16);

// `svg` (from planner::plan_svg) given a viewBox from its own width and height, so that it
// scales with its container, and the CSS class `css_class`.
std::string scalable_svg(std::string svg, const std::string& css_class);

// The window of a seed's memory map as an SVG that scales with its container; "" when the
// finding gives no window. Throws npuforge::Error on an unreadable map.
std::string failure_window_svg(const std::filesystem::path& memmap, const std::string& title,
                               const std::string& finding);

}  // namespace npuforge::regress
