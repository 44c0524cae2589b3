#pragma once
// Zero points, centring and requantization shared by the integer Conv and MatMul ops
// (ConvInteger, QLinearConv, MatMulInteger, QLinearMatMul); internal header.
//
// Requantization is onnxruntime's (MlasRequantizeOutput), which the ONNX spec leaves to
// "saturate(round(x))": the fp32 multiplier is (input scale * weight scale) / output scale
// computed in fp32 in that order, the int32 accumulator (bias already added) is converted
// to fp32 and multiplied by it in fp32, rounded to nearest with ties to even, the zero
// point added and the result saturated to the output type.
#include <cstdint>
#include <string_view>
#include <vector>

#include "model/ir.h"
#include "model/tensor.h"

namespace npuforge::model {

// A zero point or scale that is either one value for the whole tensor or one per index
// along some axis (per channel / per row / per column).
template <class T>
struct PerIndex {
  std::vector<T> values;  // size 1 (per tensor) or `count`
  T operator[](int64_t i) const { return values.size() == 1 ? values[0] : values[static_cast<size_t>(i)]; }
  bool per_tensor() const { return values.size() == 1; }
};

// Reads an optional zero point (nullptr: 0) of the given element type: a scalar, a
// one-element tensor or, when count > 0, a 1-D tensor of `count` values.
PerIndex<int32_t> read_zero_point(const Node& node, const Tensor* zp, std::string_view name, DType expected,
                                  int64_t count);
// Reads a float32 scale with the same shape rules; every scale must be finite and > 0.
PerIndex<float> read_scale(const Node& node, const Tensor& scale, std::string_view name, int64_t count);

// int8/uint8 tensor -> (value - zero point) as uint32 (two's complement), the zero point
// chosen per slice: slice i covers `inner` consecutive elements, index i % zp count.
std::vector<uint32_t> centred(const Tensor& t, const PerIndex<int32_t>& zp, int64_t inner);

// True for the 8-bit types the integer ops accept.
bool is_8bit(DType t);

// saturate(round_half_even(float(acc) * multiplier) + zero_point) for an int8/uint8 output.
int32_t requantize(int32_t acc, float multiplier, int32_t zero_point, DType out);

// Writes an int32 value (already within the type's range) into element i of an 8-bit tensor.
void store_8bit(Tensor& t, int64_t i, int32_t v);

}  // namespace npuforge::model
