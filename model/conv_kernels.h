#pragma once
// Convolution kernels shared by Conv, ConvInteger, QLinearConv and ConvTranspose:
// im2col + blocked GEMM (model/gemm.h), a direct loop for one input channel per group
// (depthwise), and col2im for the transpose. Layout NC[D]HW; 1 to 3 spatial axes.
//
// Element order of each output sum: input channel, then kernel positions in row-major
// order (the im2col row order); bias is added after the sum. The integer forms run on
// uint32 with two's-complement wrap-around (see gemm.h): callers pass values with the
// zero point already subtracted, so padding with 0 is padding with the real zero.
#include <cstdint>

#include "model/conv_geometry.h"

namespace npuforge::model {

struct ConvProblem {
  int64_t batch = 1;
  int64_t in_channels = 0;   // C
  int64_t out_channels = 0;  // M
  int64_t groups = 1;
  WindowGeometry geometry;   // spatial axes (1 to 3)

  int64_t in_per_group() const { return in_channels / groups; }
  int64_t out_per_group() const { return out_channels / groups; }
  int64_t in_spatial() const;   // product of the input's spatial extents
};

// y[N, M, out...] = conv(x[N, C, in...], w[M, C/groups, k...]); y is overwritten.
void conv_forward(const ConvProblem& p, const float* x, const float* w, float* y);
void conv_forward(const ConvProblem& p, const uint32_t* x, const uint32_t* w, uint32_t* y);

// y[N, M, out...] = conv_transpose(x[N, C, in...], w[C, M/groups, k...]); y is overwritten.
// The geometry is a transpose geometry (transpose_geometry()): `in` is x's extent.
void conv_transpose(const ConvProblem& p, const float* x, const float* w, float* y);

}  // namespace npuforge::model
