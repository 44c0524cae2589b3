#include "planner/ddr_check.h"

#include "bundle/memmap.h"

namespace npuforge::planner {

PlanProblem ddr_problem_from_memmap(const MemMap& map) {
  PlanProblem p;
  for (const bundle::MemDdrBuffer& b : map.ddr_buffers) {
    PlanBuffer pb;
    pb.id = b.name;
    pb.lifespan = {b.first, b.last + 1};
    pb.size = b.size;
    pb.offset = Offset{b.offset.value};
    p.buffers.push_back(std::move(pb));
  }
  return p;
}

PlanCheckResult check_memmap_ddr(const MemMap& map, PlanCheckOptions options) {
  return check_plan(ddr_problem_from_memmap(map), options);
}

}  // namespace npuforge::planner
