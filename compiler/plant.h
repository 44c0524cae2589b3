#pragma once
// Planted compiler bugs (a testing hook: `npuforge compile --plant-bug KIND`): each edits the
// compiled programs the way a faulty compiler pass would, so that tests can show the simulator
// catches it with a finding that names the tensor or tile. A fourth kind of bug, two
// live activations at overlapping arena offsets, needs no hook: it is an outside plan
// (`--arena-plan`, arena.h).
//   early-free     a tile buffer's memory map says it is freed one instruction before its last
//                  read (the allocator would hand its bytes out while a reader still needs them);
//   im2col-short   an IM2COL scratch buffer one row (GEMM k bytes) too small in the memory map;
//   drop-token     the token between a LOAD and the GEMM that reads what it loaded is removed
//                  (signal and wait both, so the rest stays paired).
// Each edits the first NPU segment where it applies; an error when no segment has a place for it.
#include <string>
#include <vector>

#include "compiler/backend.h"

namespace npuforge::compiler {

const std::vector<std::string>& planted_bug_names();

// Applies bug `kind` to `m`; returns what it did (segment, instruction, buffer) for the report.
std::string plant_bug(CompiledModel& m, const std::string& kind);

}  // namespace npuforge::compiler
