#pragma once
// `npuforge compile` as a library call: load the model, run the front half (front.h), the
// back half (backend.h), the int8 reference on the sample input, and write OUT/ (bundle.h).
#include <filesystem>
#include <string>

#include "compiler/backend.h"
#include "compiler/front.h"
#include "compiler/manifest.h"
#include "isa/isa.h"
#include "isa/npu_config.h"
#include "model/load.h"

namespace npuforge::compiler {

struct CompileOptions {
  std::filesystem::path model;
  model::InputShapes input_shapes;
  FrontOptions front;
  isa::NpuConfigSource npu;                  // the config and where it came from
  allocator::Policy policy = allocator::Policy::FirstFit;
  std::string arena_algo;                    // empty: the default choice
  std::filesystem::path arena_plan;          // another compiler's offsets
  double arena_time_budget_s = 10.0;
  std::filesystem::path export_lifetimes;    // write the arena problem (MiniMalloc CSV)
  std::filesystem::path out;                 // empty: compile without writing a bundle
  std::string plant_bug;                     // testing hook (plant.h): empty, or a bug to plant
};

struct CompileTimes {
  double load_s = 0, front_s = 0, back_s = 0, reference_s = 0, write_s = 0;
  double total() const { return load_s + front_s + back_s + reference_s + write_s; }
};

struct CompileResult {
  CompileFront front;
  CompiledModel compiled;
  Manifest manifest;
  CompileTimes times;
  std::string planted;  // what plant_bug did, when asked
};

CompileResult compile_model(const CompileOptions& options, const isa::Isa& isa);

// What `npuforge compile` prints after the front half's report: segments, instructions, SRAM
// peak, arena peak / lower bound (and the plan's static check), times.
std::string format_summary(const CompileResult& result, const CompileOptions& options);

}  // namespace npuforge::compiler
