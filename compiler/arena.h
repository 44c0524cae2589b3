#pragma once
// Where a compiled model's tensors live in DDR (docs/compiler.md sections 10 and 11):
//   [weights/bias/qp/tables | model inputs | activation arena | model outputs]
// every region aligned to the NPU alignment.
//
// Lifetimes: in op steps of the schedule. A tensor produced by op p and last read
// by op c lives [p, c + 1) (half-open, the planners' convention); one nobody reads lives
// [p, p + 1). An AliasOp's output is its input's bytes: the alias group shares one buffer
// whose lifetime covers every member's readers. Groups holding a model input live in the
// input region, groups holding a model output in the output region (both whole-run), every
// other group in the arena, sized to its bytes padded to the alignment. CPU-step outputs are
// arena tensors too (float ones at 4 bytes per element).
//
// The arena is planned by planner/ (`--arena-algo`; by default the best of the fast planners,
// or the planner named `best` when planner/ offers one) or taken from another compiler's plan
// (`--arena-plan`, MiniMalloc-style CSV with offsets, rows by tensor name). An outside plan
// is not refused when it is wrong: its static check (planner::check_plan) is reported, and
// the simulator's checkers must catch what it breaks.
#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "compiler/qgraph.h"
#include "isa/npu_config.h"
#include "planner/plan_problem.h"

namespace npuforge::compiler {

enum class Region : uint8_t { kNone, kWeights, kInput, kArena, kOutput };
std::string_view region_name(Region r);  // "weights", "input", "arena", "output"

struct ArenaTensor {
  TensorId root;
  std::string name;          // the root tensor's name: the plan's buffer id
  uint64_t bytes = 0;        // padded to the alignment
  planner::Lifespan life;    // op steps, half-open
};

struct Lifetimes {
  std::vector<TensorId> root;      // per tensor: the first tensor of its alias group
  std::vector<Region> region;      // per tensor (its group's)
  std::vector<int64_t> arena_of;   // per tensor: index into `arena`, or -1
  std::vector<ArenaTensor> arena;  // one per arena group, in order of production
  std::vector<TensorId> input_roots, output_roots;  // groups of the input / output regions
  std::vector<int64_t> first_step;  // per root: producing op, -1 for a model input
  std::vector<int64_t> last_step;   // per root: latest reading op over the group, -1 if none
};

Lifetimes derive_lifetimes(const QGraph& g, uint64_t alignment);

// The arena as a planning problem: one buffer per arena group (id = its name, lifespan,
// padded size, the alignment), no offsets, no capacity.
planner::PlanProblem arena_problem(const Lifetimes& lifetimes, uint64_t alignment);

struct ArenaPlan {
  std::string planner;             // the planner's name, or "outside:<file>"
  std::vector<uint64_t> offsets;   // per arena tensor
  uint64_t peak = 0;               // max offset + size
  uint64_t lower_bound = 0;        // no plan can have a smaller peak
  bool clean = true;               // the static check found nothing
  std::string verdict;             // planner::check_plan's report
  std::vector<std::pair<std::string, uint64_t>> tried;  // default choice: each planner's peak
};

// `algo` empty: the default choice. Throws npuforge::Error for an unknown planner or one that
// finds no placement.
ArenaPlan plan_arena(const planner::PlanProblem& problem, const std::string& algo, double time_budget_s);

// Offsets from another compiler's plan (CSV or YAML, planner/plan_io.h). Every arena tensor
// needs a row with an offset, and every row must name an arena tensor (errors name the file
// and the tensor); the plan's lifetimes and sizes are ignored. Not refused when it overlaps.
ArenaPlan read_arena_plan(const planner::PlanProblem& problem, const std::filesystem::path& path);

struct DdrRegion {
  uint64_t base = 0, bytes = 0;
  uint64_t end() const { return base + bytes; }
};

struct DdrLayout {
  uint64_t alignment = 64;
  DdrRegion weights, inputs, arena, outputs;
  std::vector<uint64_t> addr;  // per tensor: DDR address of its bytes (its group's)
  uint64_t end() const { return outputs.end(); }
};

// Places the regions and every tensor. Throws npuforge::Error when the model does not fit the
// NPU's DDR (naming the sizes of the regions).
DdrLayout layout_ddr(const QGraph& g, const Lifetimes& lifetimes, const ArenaPlan& plan, uint64_t weights_bytes,
                     const isa::NpuConfig& npu);

}  // namespace npuforge::compiler
