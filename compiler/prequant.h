#pragma once
// For pre-quantized models (docs/compiler.md section 2): turns a QDQ graph (QuantizeLinear -> DequantizeLinear around
// float ops) or a QOperator graph (QLinearConv, QLinearMatMul, ConvInteger, MatMulInteger) into
// the equivalent float graph, and keeps what the model says about its quantization as hints:
//  - each quantized activation becomes its real value (x for QuantizeLinear(x), the float
//    Conv/MatMul for a QLinear/Integer op), with the range its QuantizeLinear represents,
//    [(qmin - zero point) * scale, (qmax - zero point) * scale];
//  - integer weights become float constants (ints - zero point) * scale; when the zero point
//    is 0, their scales are kept, so the quantizer gets the model's own ints back.
// Integer values that something else reads (a graph output of an integer type, an op with no
// float equivalent here) are re-created by a QuantizeLinear from the real value, so the graph
// still computes what the model computes, up to the rounding of the removed fake-quant steps.
// Expects a shape-inferred graph in which DequantizeLinear of constants was not folded
// (InferOptions::keep_ops = {"DequantizeLinear"}); re-infers shapes at the end.
#include "compiler/hints.h"
#include "model/ir.h"

namespace npuforge::compiler {

// True when the graph has any of the ops above.
bool is_pre_quantized(const model::Graph& graph);

// Rewrites `graph` as described; returns the hints (pre_quantized = is_pre_quantized()).
QuantHints dequantize_model(model::Graph& graph);

}  // namespace npuforge::compiler
