#pragma once
// Shape checks and output shapes of the Conv family (Conv, ConvTranspose, ConvInteger,
// QLinearConv), shared by their infer and run functions (internal header).
#include <cstddef>

#include "model/conv_kernels.h"
#include "model/op.h"

namespace npuforge::model {

enum class ConvKind { kForward, kTranspose };

// Checks x [N, C, spatial...] against w ([M, C/group, k...] forward, [C, M/group, k...]
// transpose) and the node's attributes; every mismatch is node.fail() with the reason.
ConvProblem conv_problem(const Node& node, const Shape& x, const Shape& w, ConvKind kind);

// [N, M, spatial out...] of a problem.
Shape conv_output_shape(const ConvProblem& p);

// The output ValueInfo for shape inference: x is input 0, w is input `w_input`; unknown
// dimensions stay unknown where they cannot be derived.
ValueInfo conv_output_info(const InferContext& ctx, size_t w_input, DType dtype, ConvKind kind);

// Fails unless input `i` of the node has one of the given dtypes (infer and run share it).
void require_dtype(const Node& node, size_t i, DType actual, std::initializer_list<DType> allowed);

}  // namespace npuforge::model
