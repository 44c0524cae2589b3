#pragma once
// The op families the builtin registry is made of, one .cc file each (internal header).
#include "model/op.h"

namespace npuforge::model {

void register_elementwise_ops(OpRegistry& r);  // ops_elementwise.cc: arithmetic, activations, comparisons, Cast
void register_shape_ops(OpRegistry& r);        // ops_shape.cc: Shape, Reshape, Concat, Slice, Transpose, Pad, ...
void register_conv_ops(OpRegistry& r);         // ops_conv.cc: Conv, ConvTranspose
void register_conv_integer_ops(OpRegistry& r); // ops_conv_int.cc: ConvInteger, QLinearConv
void register_matmul_ops(OpRegistry& r);       // ops_matmul.cc: Gemm, MatMul
void register_matmul_integer_ops(OpRegistry& r);  // ops_matmul_int.cc: MatMulInteger, QLinearMatMul
void register_pool_ops(OpRegistry& r);         // ops_pool.cc: MaxPool, AveragePool, global pools
void register_norm_ops(OpRegistry& r);         // ops_norm.cc: BatchNormalization, InstanceNormalization, LRN, Softmax
void register_reduce_ops(OpRegistry& r);       // ops_reduce.cc: Reduce*, ArgMax, ArgMin
void register_resize_ops(OpRegistry& r);       // ops_resize.cc: Resize, Upsample
void register_quant_ops(OpRegistry& r);        // ops_quant.cc: QuantizeLinear, DequantizeLinear, QLinearAdd, ...
void register_core_ops(OpRegistry& r);         // ops_core.cc: Identity (what the importers leave in a graph)

}  // namespace npuforge::model
