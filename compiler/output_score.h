#pragma once
// How close a quantized graph's model outputs come to the float graph's on sample inputs: the
// score a compiler setting is chosen by (front.h: clip candidates). Real toolchains pick their
// clip the same way (the setting with the least output error on the calibration data); the
// per-tensor clip statistics alone cannot see how a tensor's error grows through the layers
// after it (the PP-OCR recogniser is best clipped by percentile, the detector by MSE).
#include <string>
#include <vector>

#include "compiler/qgraph.h"
#include "model/interpreter.h"
#include "model/ir.h"

namespace npuforge::compiler {

struct OutputScore {
  double min_cosine = 1;   // worst over samples and model outputs
  double mean_cosine = 1;  // mean over the same
  std::vector<double> per_sample;  // worst over the model outputs, one per sample
  // Better: the larger worst case, then the larger mean.
  bool better_than(const OutputScore& o) const {
    return min_cosine != o.min_cosine ? min_cosine > o.min_cosine : mean_cosine > o.mean_cosine;
  }
};

double cosine_similarity(const model::Tensor& a, const model::Tensor& b);

// The float graph's model outputs on each sample, computed once for scoring several QGraphs.
std::vector<model::TensorMap> float_outputs(const model::Graph& float_graph,
                                           const std::vector<model::TensorMap>& samples);

// The int8 reference of `graph` on `samples` against `want` (float_outputs of the same samples).
OutputScore score_outputs(const QGraph& graph, const std::vector<model::TensorMap>& samples,
                          const std::vector<model::TensorMap>& want);

}  // namespace npuforge::compiler
