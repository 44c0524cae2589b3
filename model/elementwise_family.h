#pragma once
// The parts of the element-wise op family kept in their own files; register_elementwise_ops
// (ops_elementwise.cc) calls them (internal header).
#include "model/op.h"

namespace npuforge::model {

void register_activation_ops(OpRegistry& r);  // ops_activation.cc: unary maths, activations, Clip, PRelu
void register_pow_cast_ops(OpRegistry& r);    // ops_pow_cast.cc: Pow, Cast

}  // namespace npuforge::model
