#pragma once
// The front half of the model compiler, in one call: what the CLI (`npuforge compile`) and the
// back half (tiling, placement, emission) start from.
//   dequantize_model (pre-quantized models) -> cleanup -> equalize (float models) -> calibrate -> partition ->
//   plan_scales + quantize -> schedule -> validate
#include <map>
#include <string>
#include <vector>

#include "compiler/bias_correct.h"
#include "compiler/calibrate.h"
#include "compiler/cleanup.h"
#include "compiler/equalize.h"
#include "compiler/hints.h"
#include "compiler/output_score.h"
#include "compiler/partition.h"
#include "compiler/qgraph.h"
#include "compiler/scales.h"
#include "model/ir.h"
#include "model/load.h"

namespace npuforge::compiler {

// One quantization setting to choose from (FrontOptions::candidates).
struct QuantCandidate {
  ClipCandidate clip;
  int lut_channel_groups = 0;
};
std::string candidate_name(const QuantCandidate& c);  // "mse, 4 lut groups"

struct FrontOptions {
  CalibrationOptions calibration;
  // Cross-layer range equalisation (equalize.h) of float models before calibration.
  bool equalize = true;
  // Per-channel-group scales around LUTs (scales.h: plan_scales); below 2: per-tensor scales.
  // Off by default: measured on the PP-OCR models, it helps the
  // classifier and the detector's real sample but loses on the detector's random-noise inputs,
  // whose per-channel ranges the text calibration set does not predict.
  int lut_channel_groups = 0;
  // Per-channel bias correction on the calibration samples (bias_correct.h); on by default
  // (on the PP-OCR detector, half of every layer's error was a per-channel mean shift).
  bool bias_correction = true;
  // More than one entry: the float model is quantized with each setting (calibration.method,
  // .percentile and lut_channel_groups are then ignored) and the one whose int8 reference comes
  // closest to the float outputs on the calibration samples is kept (output_score.h), ties to
  // the earlier entry. Costs one quantization and one int8 run per sample per candidate.
  std::vector<QuantCandidate> candidates;
  NpuLimits limits;
};

// Settings to try as FrontOptions::candidates (the accuracy tests do; the CLI's --clip picks
// one method): MSE clips with per-tensor scales (the
// default), with 4 and with 8 channel groups around LUTs, and percentile 99.99 clips.
std::vector<QuantCandidate> auto_candidates();

// One decision of the partition, for the report.
struct OpChoice {
  std::vector<std::string> nodes;  // model nodes (after clean-up)
  std::string ops;                 // their op types, "Conv+Relu"
  Target target = Target::kNpu;
  std::string kind;                // group kind ("conv", "lut", "cpu", ...)
  std::string reason;
};

struct FrontReport {
  std::string source;
  bool pre_quantized = false;
  std::string calibration;         // where the samples came from ("seeded random" is said here)
  ClipMethod method = ClipMethod::kMse;
  double percentile = 99.99;       // with kPercentile
  int lut_channel_groups = 0;
  // With FrontOptions::candidates: each candidate and its score, in the order tried.
  std::vector<std::pair<QuantCandidate, OutputScore>> candidate_scores;
  CleanupReport cleanup;
  EqualizeReport equalize;
  BiasCorrectionReport bias_correction;
  std::vector<OpChoice> choices;   // in partition order
  std::map<std::string, ScaleChoice, std::less<>> scales;  // every int8 tensor of the model
  size_t npu_ops = 0, cpu_steps = 0, segments = 0, rescales = 0;
};

struct CompileFront {
  QGraph graph;               // scheduled and validated
  model::Graph float_graph;   // the cleaned float graph the QGraph was made from
  QuantHints hints;
  FrontReport report;
};

// `graph` must be shape-inferred with every input shape known; load it with
// front_load_options() so that a pre-quantized model's weight DequantizeLinear nodes are kept
// (folded ones still work, but the model's own int weights are then re-derived).
// A batch above 1 is an error, as is a node the interpreter lacks (named).
CompileFront compile_front(const model::Graph& graph, const FrontOptions& options = {});

model::LoadOptions front_load_options(const model::InputShapes& shapes = {});

// Human-readable report (what `npuforge compile` prints).
std::string format_report(const FrontReport& report);

}  // namespace npuforge::compiler
