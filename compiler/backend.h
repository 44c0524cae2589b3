#pragma once
// The back half of the model compiler (docs/compiler.md sections 10-13): from a scheduled QGraph to one
// program per NPU segment. Lifetimes and the DDR arena (arena.h), the op constants in the
// weights region, then per NPU segment: every op lowered to tiles (lower.h) and emitted into
// one program (emitter.h): SRAM through allocator::SymbolTable, tokens from the accesses,
// fix-up, memory map with SRAM and DDR buffers. Writing the files is bundle.h.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "allocator/allocator.h"
#include "compiler/arena.h"
#include "compiler/emitter.h"
#include "compiler/lower.h"
#include "compiler/qgraph.h"
#include "isa/isa.h"
#include "isa/npu_config.h"
#include "planner/plan_problem.h"

namespace npuforge::compiler {

struct BackendOptions {
  isa::NpuConfig npu;
  allocator::Policy policy = allocator::Policy::FirstFit;
  std::string arena_algo;                 // empty: the default choice (arena.h)
  std::filesystem::path arena_plan;       // another compiler's offsets instead of planning
  double arena_time_budget_s = 10.0;      // for planners with a budget (exact, best)
  std::string header;                     // heads every memory map (no comment marker)
};

struct CompiledSegment {
  Segment segment;                 // the QGraph's: target, ops [first, end), inputs, outputs
  SegmentProgram program;          // NPU segments only
  uint64_t macs = 0;
};

struct CompiledModel {
  Lifetimes lifetimes;
  planner::PlanProblem arena_problem;
  ArenaPlan arena;
  ConstImage consts;
  std::vector<OpConsts> op_consts;  // per op
  DdrLayout ddr;
  std::vector<CompiledSegment> segments;
  uint64_t macs = 0, instructions = 0, sram_peak = 0, tokens = 0;
};

// The DDR side only (lifetimes, arena plan, constants, layout): enough for
// --export-lifetimes and the manifest's arena, without lowering.
CompiledModel plan_model(const QGraph& g, const BackendOptions& options);

// Everything: plan_model, then every NPU segment lowered and emitted.
CompiledModel compile_backend(const QGraph& g, const isa::Isa& isa, const BackendOptions& options);

// The DDR buffers segment `s` may touch (tensors live during it, its ops' constant blobs), as
// the emitter takes them, with the index of each tensor's group and of each blob.
struct SegmentDdr {
  std::vector<DdrBufferSpec> specs;
  std::vector<int32_t> tensor_buf;   // per tensor (through its group), or kNoDdrBuffer
  std::vector<std::pair<uint64_t, int32_t>> blob_buf;  // (blob address, index), sorted
};
SegmentDdr segment_ddr(const QGraph& g, const CompiledModel& m, const Segment& s);

}  // namespace npuforge::compiler
