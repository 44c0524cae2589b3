#pragma once
// Host-side conversions at the edges of the NPU's work: a model input entering (quantize, ONNX
// layout -> storage layout), a CPU step's inputs and outputs, a model output leaving
// (dequantize, storage -> ONNX). The runner and the int8 reference (qref.h) use the same ones.
#include <cstdint>

#include "compiler/qgraph.h"
#include "model/tensor.h"

namespace npuforge::compiler {

// x / scale (in float, as ONNX QuantizeLinear) rounded to nearest, ties to even, saturated to int8.
int8_t quantize_value(float x, float scale);

// Reorders a tensor of `t`'s shape (any dtype) from the ONNX order to t's storage order (the
// result has t.storage_shape()), and back. An error naming the tensor on a shape mismatch.
model::Tensor to_storage(const model::Tensor& onnx, const QTensor& t);
model::Tensor from_storage(const model::Tensor& stored, const QTensor& t);

// float32 in the ONNX layout -> int8 at t.scale (or its channel_scales) in t's storage layout.
model::Tensor quantize(const model::Tensor& onnx_float, const QTensor& t);
// int8 in t's storage layout -> float32 (q * t.scale, or its channel's scale) in the ONNX layout.
model::Tensor dequantize(const model::Tensor& stored, const QTensor& t);

}  // namespace npuforge::compiler
