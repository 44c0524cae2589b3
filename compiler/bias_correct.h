#pragma once
// Empirical bias correction (after Nagel et al., "Data-Free Quantization", section 4.2, with
// calibration data instead of batch-norm statistics). Rounding weights and activations to int8
// shifts each output channel's mean: a per-channel constant error that the next layers carry
// and add to (on the PP-OCR detector about half of every layer's squared error was such a
// shift, FrontReport / drift.h `mean_share`). For every conv in schedule order, the int8
// reference runs on the calibration samples with the corrections made so far, and the conv's
// int32 bias takes the difference between the float model's mean of the conv's pre-activation
// value and the mean of its int8 accumulator, per output channel. Gemms (MatMul/Gemm, channels on
// the last axis) get the same per column: the PP-OCR recogniser's classifier logits carried 83%
// of their squared error as a per-class shift. Only bias constants change,
// so the NPU program and the int8 reference stay bit-exact with each other.
#include <vector>

#include "compiler/qgraph.h"
#include "model/interpreter.h"
#include "model/ir.h"

namespace npuforge::compiler {

struct BiasCorrectionReport {
  size_t convs = 0;     // convs and gemms whose bias changed
  size_t channels = 0;  // output channels whose bias changed
};

// `graph` scheduled; `float_graph` the cleaned float graph it was quantized from; `samples`
// the calibration inputs (ONNX layout).
BiasCorrectionReport correct_biases(QGraph& graph, const model::Graph& float_graph,
                                    const std::vector<model::TensorMap>& samples);

}  // namespace npuforge::compiler
