#pragma once
// Equalisation (docs/compiler.md section 4; after clean-up, before calibration): cross-layer
// range equalisation (Nagel et al. 2019, "Data-Free Quantization", section 4.1), driven by
// calibration data. Where a Conv's output
// reaches another Conv only through ops that commute with a positive per-channel scale (nothing,
// Relu, LeakyRelu, MaxPool), channel c of that value can be divided by s_c > 0 (the first Conv's
// weights and bias of c) and the second Conv's weights reading c multiplied by s_c: the float
// model computes the same outputs. Per-tensor int8 activations lose the channels whose range is
// far below the tensor's largest; after folded BatchNorms those ranges differ by 100x and more
// (ppocr_det_v4: a depthwise 3x3 feeding a 1x1). The scales s_c = sqrt(a_c / w_c) meet in the
// middle: a_c, the channel's absmax over the samples, and w_c, the largest |weight| reading it,
// become both sqrt(a_c * w_c), so neither the activation (per tensor) nor the weight row (per
// output channel) carries the imbalance alone.
#include <string>
#include <vector>

#include "model/interpreter.h"
#include "model/ir.h"

namespace npuforge::compiler {

struct EqualizeReport {
  // "conv1 -> conv2: 48 channels, range spread 215x -> 3.1x", one per equalised pair.
  std::vector<std::string> pairs;
};

// `samples`: the calibration inputs (the per-channel ranges come from the float model on them).
// Skips a pair whose intermediate value is read elsewhere or is a graph output, Convs whose
// weights are not float constants, and channels that stay 0 on every sample.
EqualizeReport equalize_channels(model::Graph& graph, const std::vector<model::TensorMap>& samples);

}  // namespace npuforge::compiler
