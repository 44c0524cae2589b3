#pragma once
// Quantization (docs/compiler.md section 7), second half: builds the QGraph from the partition and the scales.
// NPU groups become int8 ops: symmetric int8 weights per output channel (scale absmax / 127, or
// the pre-quantized model's own scale), int32 bias round(b / (s_in * s_w[c])), requant
// multipliers s_in * s_w[c] / s_out as isa::make_requant (31-bit scale, shift <= 62 per channel;
// 16-bit scale, shift <= 40 for eltwise), lut tables from the float ops, rescale luts where a
// reader needs another scale. Every other node becomes a CpuStepOp of that one node (the
// schedule merges neighbours). Ops are in partition order (topological), unscheduled.
#include "compiler/hints.h"
#include "compiler/partition.h"
#include "compiler/qgraph.h"
#include "compiler/scales.h"
#include "model/ir.h"

namespace npuforge::compiler {

QGraph quantize(const model::Graph& graph, const Partition& partition, const ScalePlan& scales,
                const QuantHints& hints);

// Symmetric int8 quantization of one weight channel: the scale (absmax / 127, at least what
// keeps `bias` / (in_scale * scale) within int32), exposed for tests.
float weight_scale(float absmax, double bias, float in_scale);

}  // namespace npuforge::compiler
