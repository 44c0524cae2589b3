#pragma once
// NumPy matmul shapes for MatMul, MatMulInteger and QLinearMatMul (internal header):
// 1-D operands are promoted (A: [K] -> [1, K], B: [K] -> [K, 1]) and the promoted axis
// dropped from the result; the batch axes broadcast.
#include <cstdint>
#include <vector>

#include "model/op.h"

namespace npuforge::model {

struct MatMulShape {
  int64_t m = 0, k = 0, n = 0;
  Shape out;                    // the result's shape
  std::vector<int64_t> a_offset;  // per batch entry of the result: element offset into A
  std::vector<int64_t> b_offset;  // ... and into B
};

// Concrete shapes; node.fail() when they do not multiply or broadcast.
MatMulShape matmul_shape(const Node& node, const Shape& a, const Shape& b);

// The output ValueInfo for shape inference, unknown dimensions propagated.
ValueInfo matmul_output_info(const Node& node, const ValueInfo& a, const ValueInfo& b, DType dtype);

}  // namespace npuforge::model
