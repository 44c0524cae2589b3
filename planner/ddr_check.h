#pragma once
// The static side of the DDR ownership check (sim/ddr_owner.h is the dynamic side): the DDR
// buffers of a compiled program's memory map (arena tensors, model inputs and outputs, weight
// blobs) as a plan, checked like any plan: two tensors that are live at the same instruction
// and share a byte are an overlap finding naming both, their DDR ranges and lifetimes.
// What `npuforge check-plan segK.memmap.yaml` adds for compiled programs.
#include "planner/plan_check.h"
#include "planner/plan_problem.h"

namespace npuforge::planner {

// One buffer per DDR buffer: id = its name, lifespan [first, last + 1) in instructions,
// offset = its DDR address, alignment 1 (DDR addresses are absolute), no capacity.
PlanProblem ddr_problem_from_memmap(const MemMap& map);

// Overlaps of live DDR tensors; an empty, clean result for a map without DDR buffers.
PlanCheckResult check_memmap_ddr(const MemMap& map, PlanCheckOptions options = {});

}  // namespace npuforge::planner
