#pragma once
// 256-entry tables for the NPU's lut instruction: entry q + 128 is the int8 result for the
// int8 input q (isa: dst = table[uint8(src) ^ 0x80]).
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "model/ir.h"

namespace npuforge::compiler {

using LutTable = std::array<int8_t, 256>;

// The table of an element-wise region of `graph`: the nodes at `nodes` (ascending), whose only
// non-constant input is `input`, evaluated in float by the reference interpreter on the 256
// values q * in_scale, and `output` quantized to out_scale (nearest, ties to even, saturating).
LutTable region_table(const model::Graph& graph, const std::vector<size_t>& nodes, const std::string& input,
                      const std::string& output, float in_scale, float out_scale);

// q * in_scale re-quantized to out_scale.
LutTable rescale_table(float in_scale, float out_scale);

}  // namespace npuforge::compiler
