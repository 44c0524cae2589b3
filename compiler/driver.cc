#include "compiler/driver.h"

#include <chrono>

#include <fmt/core.h>

#include "compiler/bundle.h"
#include "compiler/plant.h"
#include "compiler/qref.h"
#include "planner/plan_io.h"
#include "util/error.h"
#include "util/file_io.h"

namespace npuforge::compiler {
namespace {

double since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

CompileResult compile_model(const CompileOptions& o, const isa::Isa& isa) {
  CompileResult r;
  auto t0 = std::chrono::steady_clock::now();
  const model::Graph graph = model::load_model(o.model, front_load_options(o.input_shapes));
  r.times.load_s = since(t0);

  t0 = std::chrono::steady_clock::now();
  FrontOptions front = o.front;  // the partition respects the fields of the ISA emitted for
  front.limits = NpuLimits(isa);
  front.limits.broadcast_mul = o.front.limits.broadcast_mul;
  r.front = compile_front(graph, front);
  r.times.front_s = since(t0);

  t0 = std::chrono::steady_clock::now();
  BackendOptions b;
  b.npu = o.npu.config;
  b.policy = o.policy;
  b.arena_algo = o.arena_algo;
  b.arena_plan = o.arena_plan;
  b.arena_time_budget_s = o.arena_time_budget_s;
  b.header = fmt::format("npuforge compile; model: {}", o.model.filename().string());
  if (!o.export_lifetimes.empty()) {
    // The problem alone, written before anything else can fail: planning elsewhere needs it.
    const Lifetimes l = derive_lifetimes(r.front.graph, b.npu.alignment.value);
    util::write_file(o.export_lifetimes, planner::write_plan_csv(arena_problem(l, b.npu.alignment.value)),
                     "lifetimes CSV");
  }
  if (o.out.empty()) {
    r.compiled = plan_model(r.front.graph, b);
    r.times.back_s = since(t0);
    return r;
  }
  r.compiled = compile_backend(r.front.graph, isa, b);
  if (!o.plant_bug.empty()) r.planted = plant_bug(r.compiled, o.plant_bug);
  r.times.back_s = since(t0);

  // The sample input: the first calibration sample (the user's files, or the seeded random
  // ones the front half calibrated on).
  t0 = std::chrono::steady_clock::now();
  std::string sample_source;
  const std::vector<model::TensorMap> samples =
      calibration_inputs(graph, o.front.calibration, &sample_source);
  if (samples.empty()) throw Error(fmt::format("{}: no sample input to place in DDR", o.model.string()));
  const QrefResult ref = run_qref(r.front.graph, samples.front());
  r.times.reference_s = since(t0);

  t0 = std::chrono::steady_clock::now();
  BundleOptions bo;
  bo.model = o.model.filename().string();
  bo.npu = o.npu;
  bo.sample = "first sample of the calibration: " + sample_source;
  r.manifest = write_bundle(o.out, r.front.graph, r.compiled, isa, ref.values, bo);
  // The float model beside the bundle (under the manifest's `model` name): run-model's accuracy judge.
  const std::filesystem::path copy = o.out / bo.model;
  std::error_code same;
  if (!std::filesystem::equivalent(o.model, copy, same))
    std::filesystem::copy_file(o.model, copy, std::filesystem::copy_options::overwrite_existing);
  r.times.write_s = since(t0);
  return r;
}

std::string format_summary(const CompileResult& r, const CompileOptions& o) {
  const CompiledModel& m = r.compiled;
  std::string s = "segments:\n";
  for (size_t i = 0; i < m.segments.size(); ++i) {
    const CompiledSegment& cs = m.segments[i];
    const Segment& seg = cs.segment;
    if (seg.target == Target::kNpu) {
      s += fmt::format("  seg{:<3} NPU  {:4} ops  {:8} instructions  SRAM peak {:8}  {:12} MACs  {} tokens\n", i,
                       seg.end - seg.first, cs.program.instrs.size(), cs.program.sram_peak, cs.macs, cs.program.tokens);
    } else {
      const auto& step = std::get<CpuStepOp>(r.front.graph.ops.at(seg.first));
      s += fmt::format("  seg{:<3} CPU  {} nodes ({}{})\n", i, step.nodes.size(), step.nodes.empty() ? "" : step.nodes[0],
                       step.nodes.size() > 1 ? ", ..." : "");
    }
  }
  s += fmt::format("instructions: {}  SRAM peak: {} of {} bytes  MACs: {}\n", m.instructions, m.sram_peak,
                   o.npu.config.sram_bytes.value, m.macs);
  s += fmt::format("arena: {} tensors, planner {}, peak {} bytes, lower bound {} ({:.1f}% above)\n",
                   m.lifetimes.arena.size(), m.arena.planner, m.arena.peak, m.arena.lower_bound,
                   m.arena.lower_bound ? 100.0 * (double(m.arena.peak) - double(m.arena.lower_bound)) /
                                             double(m.arena.lower_bound)
                                       : 0.0);
  for (const auto& [name, peak] : m.arena.tried) s += fmt::format("  tried {}: peak {}\n", name, peak);
  if (!o.arena_plan.empty())
    s += fmt::format("check-plan on {}: {}\n", o.arena_plan.string(), m.arena.clean ? "clean" : "FINDINGS (compiled anyway: the simulator must catch them)");
  if (!m.arena.clean || !o.arena_plan.empty()) s += m.arena.verdict + "\n";
  s += fmt::format("DDR: weights {} + inputs {} + arena {} + outputs {} = {} bytes\n", m.ddr.weights.bytes,
                   m.ddr.inputs.bytes, m.ddr.arena.bytes, m.ddr.outputs.bytes, m.ddr.end());
  if (!r.planted.empty()) s += fmt::format("PLANTED BUG (testing hook): {}\n", r.planted);
  s += fmt::format("time: {:.3f} s (load {:.3f}, front {:.3f}, back {:.3f}, reference {:.3f}, write {:.3f})\n",
                   r.times.total(), r.times.load_s, r.times.front_s, r.times.back_s, r.times.reference_s,
                   r.times.write_s);
  if (!o.out.empty()) s += fmt::format("wrote {}\n", (o.out / "manifest.yaml").string());
  if (!o.export_lifetimes.empty()) s += fmt::format("wrote {}\n", o.export_lifetimes.string());
  return s;
}

}  // namespace npuforge::compiler
