#pragma once
// Part of pass 2 (quantization): the scale of every int8 tensor. A value is int8 when an NPU
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
  // (value, index of the reading group) -> the scale that group needs it at (a rescale lut).
  std::map<std::pair<std::string, size_t>, float> rescales;
};

ScalePlan plan_scales(const model::Graph& graph, const Partition& partition, const Calibration& calibration,
                      const QuantHints& hints);

// Inputs and outputs of a group as value names (constants excluded; CPU: the node's outputs
// that some other group or the model output reads).
std::vector<std::string> group_inputs(const model::Graph& graph, const Group& group);
std::vector<std::string> group_outputs(const model::Graph& graph, const Partition& partition, const Group& group);

}  // namespace npuforge::compiler
