// `npuforge compile MODEL -o OUT/`: a model to NPU programs (one per NPU segment), CPU steps
// and a manifest (compiler/driver.h). Prints the front half's report (calibration source,
// per-op NPU/CPU choices) and a summary (segments, instructions, SRAM peak, arena peak and
// lower bound, time).
#include <fmt/core.h>

#include "compiler/driver.h"
#include "isa/isa.h"
#include "tools/command.h"
#include "tools/input_file.h"
#include "util/error.h"

namespace npuforge::tools {
namespace {

struct CompileCliOptions {
  std::string model;
  std::vector<std::string> input_shapes;
  std::string npu;
  std::vector<std::string> calibrate;
  int samples = 4;
  uint64_t seed = 1;
  std::string clip = "mse";
  std::vector<float> random_range = {-1, 1};
  std::string arena_algo;
  std::string arena_plan;
  double arena_budget = 10.0;
  std::string export_lifetimes;
  std::string sram_policy = "first-fit";
  std::string out;
  std::string plant_bug;
  bool quiet = false;
};

compiler::ClipMethod parse_clip(const std::string& s) {
  for (auto m : {compiler::ClipMethod::kAbsMax, compiler::ClipMethod::kPercentile, compiler::ClipMethod::kMse})
    if (compiler::clip_method_name(m) == s) return m;
  throw Error(fmt::format("--clip '{}': expected absmax, percentile or mse", s));
}

int run_compile(const CompileCliOptions& c) {
  if (c.out.empty() && c.export_lifetimes.empty())
    throw Error("compile: give -o OUT (the compiled model) or --export-lifetimes FILE (the arena problem), or both");
  compiler::CompileOptions o;
  o.model = c.model;
  for (const std::string& text : c.input_shapes) {
    auto [name, shape] = model::parse_input_shape(text);
    if (!o.input_shapes.emplace(name, shape).second)
      throw Error(fmt::format("--input-shape: input '{}' is given twice", name));
  }
  for (const std::string& f : c.calibrate) o.front.calibration.files.emplace_back(f);
  o.front.calibration.random_samples = c.samples;
  o.front.calibration.seed = c.seed;
  if (c.random_range.size() != 2 || !(c.random_range[0] < c.random_range[1]))
    throw Error(fmt::format("--random-range: expected LO HI with LO < HI, got {} value(s)", c.random_range.size()));
  o.front.calibration.random_lo = c.random_range[0];
  o.front.calibration.random_hi = c.random_range[1];
  o.front.calibration.method = parse_clip(c.clip);
  o.npu = isa::load_npu_config(c.npu);
  o.policy = allocator::parse_policy(c.sram_policy);
  o.arena_algo = c.arena_algo;
  o.arena_plan = c.arena_plan;
  o.arena_time_budget_s = c.arena_budget;
  o.export_lifetimes = c.export_lifetimes;
  o.out = c.out;
  o.plant_bug = c.plant_bug;
  if (!o.plant_bug.empty() && o.out.empty()) throw Error("--plant-bug needs -o OUT (it edits the compiled programs)");
  const compiler::CompileResult r = compiler::compile_model(o, isa::builtin_isa());
  if (!c.quiet) fmt::print("{}", compiler::format_report(r.front.report));
  fmt::print("{}", compiler::format_summary(r, o));
  return kExitOk;
}

}  // namespace

void add_compile_command(CLI::App& app, Runner& run) {
  auto opts = std::make_shared<CompileCliOptions>();
  CLI::App* sub = app.add_subcommand(
      "compile", "compile a model (ONNX or YAML graph) to NPU programs, CPU steps and a manifest in OUT/");
  sub->add_option("model", opts->model, "model file (.onnx, or a .yaml graph)")->required()->check(input_file("model"));
  sub->add_option("--input-shape", opts->input_shapes, "fix an open input dimension: NAME=1x3x224x224 (repeatable)");
  sub->add_option("--npu", opts->npu, "NPU config (default: the built-in configs/npu/default.yaml)")
      ->transform(config_file("--npu", ConfigKind::kNpu));
  sub->add_option("--calibrate", opts->calibrate,
                  "calibration inputs (.npy, one per model input per sample, in input order); without them seeded "
                  "random samples are used (said in the report)")
      ->check(input_file("--calibrate"));
  sub->add_option("--samples", opts->samples, "random calibration samples when no --calibrate is given")
      ->check(CLI::Range(1, 1000));
  sub->add_option("--seed", opts->seed, "seed of the random calibration samples");
  sub->add_option("--random-range", opts->random_range,
                  "LO HI: the random calibration samples are uniform in [LO, HI) (default -1 1)")
      ->expected(2);
  sub->add_option("--clip", opts->clip, "activation clip: absmax, percentile or mse");
  sub->add_option("--arena-algo", opts->arena_algo,
                  "activation arena planner (npuforge plan --help lists them; default: the best of the fast ones)");
  sub->add_option("--arena-plan", opts->arena_plan,
                  "take the arena offsets from another compiler's plan (MiniMalloc CSV, one row per tensor by name); "
                  "its static check is printed, a wrong plan is compiled anyway")
      ->check(input_file("--arena-plan"));
  sub->add_option("--arena-budget", opts->arena_budget, "seconds a planner with a time budget may take")
      ->check(CLI::Range(0.0, 3600.0));
  sub->add_option("--export-lifetimes", opts->export_lifetimes,
                  "write the arena problem (tensor lifetimes in op steps and sizes) as MiniMalloc CSV");
  sub->add_option("--sram-policy", opts->sram_policy, "SRAM allocator policy: first-fit, best-fit or next-fit");
  sub->add_option("-o,--out", opts->out, "output directory");
  sub->add_option("--plant-bug", opts->plant_bug,
                  "testing hook: plant a compiler bug the simulator must catch (early-free, im2col-short, drop-token)");
  sub->add_flag("-q,--quiet", opts->quiet, "print the summary only, not the front half's report");
  bind_runner(sub, opts, run, &run_compile);
}

}  // namespace npuforge::tools
