#pragma once
// Quantization (docs/compiler.md section 7), first half: the scale of every int8 tensor. A value is int8 when an NPU
// group reads or writes it. Its scale (real = scale * q) comes from, in this order:
//  - the op: pools, Relu clamps and aliases keep their input's scale (the ISA does not
//    requantize there); a fused Clip(0, hi) whose input reaches hi in calibration gets hi / 127
//    (int8 saturation is then the clip, exactly);
//  - the model: a pre-quantized model's range for the value (hints.h);
//  - calibration: clip / 127 (calibrate.h).
// Add inputs must share a scale and Concat inputs need the output's: an input whose producer
// requantizes anyway (conv, gemm, add, mul, lut, a CPU step, the model input) and that nothing
// else reads takes that scale; otherwise the consumer reads a rescaled copy (a lut).
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "compiler/calibrate.h"
#include "compiler/hints.h"
#include "compiler/partition.h"
#include "model/ir.h"

namespace npuforge::compiler {

struct ScaleChoice {
  float scale = 0;
  std::string source;  // why this scale, for the report
};

struct ScalePlan {
  std::map<std::string, ScaleChoice, std::less<>> scales;  // every int8 value
  // Values with one scale per channel (QTensor::channel_scales; `scales` holds their largest).
  std::map<std::string, std::vector<float>, std::less<>> channel_scales;
  // (value, index of the reading group) -> the scale that group needs it at (a rescale lut).
  std::map<std::pair<std::string, size_t>, float> rescales;
};

// Per-channel scales around LUTs (lut_channel_groups >= 2): a per-tensor scale is set by the
// largest channel, so small channels keep few levels, and no per-channel rescale can cross a
// nonlinear table. So a LUT's output that only convs read (they fold a per-input-channel scale
// into their float weights), and its input when a conv writes it for this LUT alone (per-channel
// requant), get one scale per group of contiguous channels: at most lut_channel_groups groups,
// chosen to lose the fewest bits (sum over channels of log2(group absmax / channel absmax)).
// The LUT then runs one table per group (LutOp::channel_tables).
ScalePlan plan_scales(const model::Graph& graph, const Partition& partition, const Calibration& calibration,
                      const QuantHints& hints, int lut_channel_groups = 0);

// The partition of `absmax` (per channel) into at most `max_groups` contiguous ranges that
// minimises the bits lost (sum of log2(range max / channel), each channel floored at 1/256 of
// the largest): the ends of the ranges, ascending. Exposed for tests.
std::vector<size_t> channel_ranges(const std::vector<std::vector<float>>& absmax, size_t max_groups);

// Inputs and outputs of a group as value names (constants excluded; CPU: the node's outputs
// that some other group or the model output reads).
std::vector<std::string> group_inputs(const model::Graph& graph, const Group& group);
std::vector<std::string> group_outputs(const model::Graph& graph, const Partition& partition, const Group& group);

}  // namespace npuforge::compiler
