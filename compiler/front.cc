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

std::string candidate_name(const QuantCandidate& c) {
  return c.lut_channel_groups >= 2 ? fmt::format("{}, {} lut groups", clip_candidate_name(c.clip), c.lut_channel_groups)
                                   : clip_candidate_name(c.clip);
}

std::vector<QuantCandidate> auto_candidates() {
  return {{{ClipMethod::kMse, 99.99}, 0},
          {{ClipMethod::kMse, 99.99}, 4},
          {{ClipMethod::kMse, 99.99}, 8},
          {{ClipMethod::kPercentile, 99.99}, 0}};
}

namespace {

struct Quantized {
  Partition part;
  ScalePlan scales;
  QGraph graph;
  BiasCorrectionReport bias_correction;
  std::string calibration;
};

// Passes 2-4 on the cleaned (and equalised) float graph `g` with one calibration setting.
Quantized quantize_with(const model::Graph& g, const FrontOptions& options, const CalibrationOptions& co,
                        int lut_groups, const QuantHints& hints, const std::vector<model::TensorMap>& samples) {
  Quantized q;
  const Calibration cal = calibrate(g, co);
  q.calibration = cal.source;
  q.part = partition(g, options.limits);
  q.scales = plan_scales(g, q.part, cal, hints, lut_groups);
  q.graph = quantize(g, q.part, q.scales, hints);
  schedule(q.graph);
  // A pre-quantized model's biases are its own, like its scales.
  if (options.bias_correction && !hints.pre_quantized) q.bias_correction = correct_biases(q.graph, g, samples);
  return q;
}

// The candidate of options.candidates whose int8 outputs come closest to the float ones on
// the calibration samples; every score goes to the report.
Quantized choose_candidate(const model::Graph& g, const FrontOptions& options, const QuantHints& hints,
                           const std::vector<model::TensorMap>& samples, FrontReport& r) {
  const std::vector<model::TensorMap> want = float_outputs(g, samples);
  Quantized best;
  OutputScore best_score;
  for (size_t i = 0; i < options.candidates.size(); ++i) {
    const QuantCandidate& c = options.candidates[i];
    CalibrationOptions co = options.calibration;
    co.method = c.clip.method;
    co.percentile = c.clip.percentile;
    Quantized q = quantize_with(g, options, co, c.lut_channel_groups, hints, samples);
    const OutputScore score = score_outputs(q.graph, samples, want);
    r.candidate_scores.emplace_back(c, score);
    if (i == 0 || score.better_than(best_score)) {
      best = std::move(q);
      best_score = score;
      r.method = c.clip.method;
      r.percentile = c.clip.percentile;
      r.lut_channel_groups = c.lut_channel_groups;
    }
  }
  return best;
}

}  // namespace

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
  const std::vector<model::TensorMap> samples = calibration_inputs(g, options.calibration);
  // A pre-quantized model's own scales are taken as they are: its weights must stay its own.
  if (options.equalize && !out.hints.pre_quantized) r.equalize = equalize_channels(g, samples);
  r.method = options.calibration.method;
  r.percentile = options.calibration.percentile;
  r.lut_channel_groups = options.lut_channel_groups;
  // A pre-quantized model's scales are its own: nothing to choose.
  Quantized q = options.candidates.size() > 1 && !out.hints.pre_quantized
                    ? choose_candidate(g, options, out.hints, samples, r)
                    : quantize_with(g, options, options.calibration, options.lut_channel_groups, out.hints, samples);
  out.graph = std::move(q.graph);
  r.calibration = q.calibration;
  r.bias_correction = q.bias_correction;
  validate(out.graph);
  const Partition& part = q.part;
  const ScalePlan& scales = q.scales;

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
  s += fmt::format("calibration: {}; clip by {}\n", r.calibration,
                   candidate_name({{r.method, r.percentile}, r.lut_channel_groups}));
  for (const auto& [c, score] : r.candidate_scores)
    s += fmt::format("  candidate {:24} int8 vs float outputs on the calibration samples: min cosine {:.5f}, mean "
                     "{:.5f}\n", candidate_name(c), score.min_cosine, score.mean_cosine);
  s += fmt::format("clean-up: {} no-ops removed, {} nodes folded into Conv/Gemm, {} BatchNormalization decomposed\n",
                   r.cleanup.removed_noops.size(), r.cleanup.folded.size(), r.cleanup.decomposed.size());
  s += fmt::format("equalisation: {} Conv pair(s) (cross-layer, per-channel ranges from the calibration)\n",
                   r.equalize.pairs.size());
  for (const std::string& p : r.equalize.pairs) s += "  " + p + "\n";
  s += fmt::format("bias correction: {} output channel(s) of {} conv(s) and gemm(s) moved to the float means\n",
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
