#pragma once
// Reading and writing plan problems (and plans: problems whose buffers have offsets).
//
// CSV (google/minimalloc's format): a header line naming the columns in any order, then one
// buffer per line, fields separated by commas, no quoting; reading stops at the first empty
// line. Required columns id,lower,upper,size; optional alignment (default 1) and offset
// (empty = none). Lifetimes are half-open [lower, upper). Legacy aliases buffer/buffer_id
// (id), start/begin (lower) and end (upper, INCLUSIVE, as minimalloc's converter reads it).
// The column `hint` is accepted and ignored.
//
// YAML (npuforge's own):
//   # npuforge plan: 3 buffers, lower bound 8, peak 8
//   capacity: 12               # optional
//   lifetimes: half-open       # or `inclusive` for [first, last]
//   buffers:
//     - {id: b1, lower: 0, upper: 3, size: 4, alignment: 1, offset: 8}
//
// With PlanReadOptions::inclusive, `upper` (or `last`) is read as inclusive in both formats
// (TFLite-style [first, last]). Errors throw npuforge::Error naming file:line:column.
#include <filesystem>
#include <string>
#include <string_view>

#include "planner/plan_problem.h"

namespace npuforge::planner {

struct PlanReadOptions {
  bool inclusive = false;  // upper bounds are inclusive: [lower, upper] -> [lower, upper + 1)
};

PlanProblem read_plan_csv(std::string_view text, std::string_view source,
                          PlanReadOptions options = {});
PlanProblem read_plan_yaml(std::string_view text, std::string_view source,
                           PlanReadOptions options = {});
std::string write_plan_csv(const PlanProblem& plan);
std::string write_plan_yaml(const PlanProblem& plan);

// By extension: .csv, or .yaml/.yml. A *.memmap.yaml is not a plan: see is_memmap_path.
PlanProblem load_plan_file(const std::filesystem::path& path, PlanReadOptions options = {});
void save_plan_file(const PlanProblem& plan, const std::filesystem::path& path);
bool is_memmap_path(const std::filesystem::path& path);

}  // namespace npuforge::planner
