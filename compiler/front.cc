#include "compiler/front.h"

#include <fmt/format.h>

#include "compiler/prequant.h"
#include "compiler/quantize.h"
#include "compiler/schedule.h"
#include "model/op.h"
#include "util/error.h"

namespace npuforge::compiler {

namespace {

void check_model(const model::Graph& g) {
  for (const std::string& in : g.inputs) {
    const model::ValueInfo* v = g.find_value(in);
    if (!v || !v->shape_known())
      throw Error(with_source(g, fmt::format("input '{}' has no known shape (give --input-shape)", in)));
    if (v->shape.size() >= 3 && v->shape[0] != 1)
      throw Error(with_source(g, fmt::format("input '{}' has batch {} ({}): the compiler handles batch 1 only", in,
                                             v->shape[0], model::shape_str(v->shape))));
  }
  for (const model::Node& n : g.nodes) model::op_for(n, g.opset);  // the CPU fallback must know every op
}

}  // namespace

model::LoadOptions front_load_options(const model::InputShapes& shapes) {
  model::LoadOptions o;
  o.input_shapes = shapes;
  o.infer.keep_ops = {"DequantizeLinear"};
  return o;
}

CompileFront compile_front(const model::Graph& graph, const FrontOptions& options) {
  CompileFront out;
  out.float_graph = graph;
  model::Graph& g = out.float_graph;
  check_model(g);
  out.hints = dequantize_model(g);
  FrontReport& r = out.report;
  r.source = g.source;
  r.pre_quantized = out.hints.pre_quantized;
  r.cleanup = cleanup(g, &out.hints);
  // A pre-quantized model's own scales are taken as they are: its weights must stay its own.
  if (options.equalize && !out.hints.pre_quantized)
    r.equalize = equalize_channels(g, calibration_inputs(g, options.calibration));
  const Calibration cal = calibrate(g, options.calibration);
  r.calibration = cal.source;
  r.method = options.calibration.method;
  const Partition part = partition(g, options.limits);
  const ScalePlan scales = plan_scales(g, part, cal, out.hints, options.lut_channel_groups);
  out.graph = quantize(g, part, scales, out.hints);
  schedule(out.graph);
  // A pre-quantized model's biases are its own, like its scales.
  if (options.bias_correction && !out.hints.pre_quantized)
    r.bias_correction = correct_biases(out.graph, g, calibration_inputs(g, options.calibration));
  validate(out.graph);

  for (const Group& grp : part.groups) {
    OpChoice c;
    for (size_t i : grp.nodes) {
      c.nodes.push_back(g.nodes[i].name);
      c.ops += (c.ops.empty() ? "" : "+") + g.nodes[i].op_type;
    }
    c.target = grp.target();
    c.kind = std::string(group_kind_name(grp.kind));
    c.reason = grp.reason;
    r.choices.push_back(std::move(c));
  }
  r.scales = scales.scales;
  r.rescales = 0;
  for (const QOp& op : out.graph.ops) {
    if (op_target(op) == Target::kCpu) ++r.cpu_steps;
    else ++r.npu_ops;
    if (const auto* l = std::get_if<LutOp>(&op); l && l->nodes.empty()) ++r.rescales;
  }
  r.segments = out.graph.segments.size();
  return out;
}

std::string format_report(const FrontReport& r) {
  std::string s = fmt::format("model: {}{}\n", r.source, r.pre_quantized ? " (pre-quantized: the model's scales are used)" : "");
  s += fmt::format("calibration: {}; clip by {}\n", r.calibration, clip_method_name(r.method));
  s += fmt::format("clean-up: {} no-ops removed, {} nodes folded into Conv/Gemm, {} BatchNormalization decomposed\n",
                   r.cleanup.removed_noops.size(), r.cleanup.folded.size(), r.cleanup.decomposed.size());
  s += fmt::format("equalisation: {} Conv pair(s) (cross-layer, per-channel ranges from the calibration)\n",
                   r.equalize.pairs.size());
  for (const std::string& p : r.equalize.pairs) s += "  " + p + "\n";
  s += fmt::format("bias correction: {} output channel(s) of {} conv(s) moved to the float means\n",
                   r.bias_correction.channels, r.bias_correction.convs);
  s += fmt::format("result: {} NPU ops ({} rescale luts), {} CPU steps, {} segments\n", r.npu_ops, r.rescales,
                   r.cpu_steps, r.segments);
  s += "partition:\n";
  for (const OpChoice& c : r.choices)
    s += fmt::format("  {:3} {:14} {:40} {}\n", c.target == Target::kNpu ? "NPU" : "CPU", c.kind,
                     c.nodes.size() == 1 ? c.nodes[0] : fmt::format("{} (+{})", c.nodes[0], c.nodes.size() - 1), c.reason);
  s += "scales:\n";
  for (const auto& [name, sc] : r.scales) s += fmt::format("  {:40} {:<12.6g} {}\n", name, sc.scale, sc.source);
  return s;
}

}  // namespace npuforge::compiler
