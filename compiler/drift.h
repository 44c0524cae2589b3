#pragma once
// Where quantization error enters: every tensor of a QGraph against the same value of the
// float graph it came from, on one input (per-layer cosine drift). The first tensor in
// schedule order whose cosine drops is where to look (a calibration clip, a fusion, a table).
#include <string>
#include <vector>

#include "compiler/qgraph.h"
#include "model/interpreter.h"
#include "model/ir.h"

namespace npuforge::compiler {

struct LayerDrift {
  std::string tensor;
  size_t op = 0;          // index of the producing op (schedule order)
  double cosine = 1;      // of the dequantized int8 value against the float value
  double max_abs = 0;     // largest |difference|
  float scale = 0;
  // Where the error comes from (1 when not measurable): `isolated` is the op alone, its int8
  // inputs quantized from the float values (its own numerics, weights and tables); `rounding`
  // is the float value itself quantized at this scale (the scale's clip and resolution);
  // `per_tensor` / `per_channel`: the value quantized at the absmax of this very value, one
  // scale per tensor / per channel (what a perfect calibration / per-channel scales would give).
  double isolated = 1, rounding = 1, per_tensor = 1, per_channel = 1;
  // The share of the squared error (against the float value) that is a constant per channel
  // (a shift a bias correction can remove); 0 for values without channels.
  double mean_share = 0;
};

// One entry per int8 tensor that the float graph also computes, in schedule order.
std::vector<LayerDrift> layer_drift(const QGraph& graph, const model::Graph& float_graph,
                                    const model::TensorMap& inputs);

}  // namespace npuforge::compiler
