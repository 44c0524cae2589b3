#pragma once
// Conversions from ONNX protobuf messages to the model IR (internal to model/: only
// onnx_import.cc and onnx_tensor.cc include the generated protobuf headers).
#include <optional>
#include <string>
#include <string_view>

#include <onnx/onnx_pb.h>

#include "model/ir.h"
#include "model/tensor.h"

namespace npuforge::model::onnx_detail {

// "FLOAT", "DOUBLE", ... for messages; "type N" for values outside the enum.
std::string onnx_type_name(int32_t elem_type);
std::optional<DType> dtype_from_onnx(int32_t elem_type);

// Decodes a TensorProto (typed fields or little-endian raw_data). `what` starts every error
// ("model.onnx: initializer 'w'"). External data, segments and unsupported element types
// are errors.
Tensor tensor_from_proto(const onnx::TensorProto& proto, std::string_view what);

// Type and shape of a graph input/output; non-tensor and unsupported types are errors.
ValueInfo value_info_from_proto(const onnx::ValueInfoProto& proto, std::string_view what);

// A node attribute; subgraphs and other kinds the IR lacks are errors naming the node.
Attribute attribute_from_proto(const onnx::AttributeProto& proto, const Node& node, std::string_view source);

}  // namespace npuforge::model::onnx_detail
