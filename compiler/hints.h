#pragma once
// What a pre-quantized model says about its own quantization, carried through the float
// passes to the quantizer: activation ranges from its QuantizeLinear nodes and the weight
// scales of its integer weights (so that re-quantizing gives back its own ints).
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace npuforge::compiler {

// The real range a QuantizeLinear(scale s, zero point z, [qmin, qmax]) can represent:
// [(qmin - z) * s, (qmax - z) * s].
struct RangeHint {
  float lo = 0, hi = 0;
  std::string node;  // the QuantizeLinear (or QLinear op) it came from, for the report
};

// Scales of a float constant that is exactly ints * scale with zero point 0: one scale for
// the whole tensor (axis -1) or one per index of `axis`.
struct WeightHint {
  int64_t axis = -1;
  std::vector<float> scales;
};

struct QuantHints {
  bool pre_quantized = false;                        // the model had Q/DQ or QLinear/Integer ops
  std::map<std::string, RangeHint, std::less<>> ranges;    // float value name -> range
  std::map<std::string, WeightHint, std::less<>> weights;  // constant name -> scales
};

}  // namespace npuforge::compiler
