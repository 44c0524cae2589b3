#pragma once
// The ONNX importer: a ModelProto file becomes a Graph of the model IR.
//
// - initializers and Constant nodes (every value_* form) become graph constants;
// - Identity and inference-mode Dropout are removed, their consumers rewired (a graph
//   output keeps its name; only an input passed straight to an output keeps an Identity);
// - graph inputs that are also initializers are constants, not run-time inputs;
// - inputs and outputs keep their declared types and shapes (dim_param names kept, the
//   dimension unknown until an --input-shape override or shape inference fixes it);
// - nodes are sorted topologically and given unique names.
// Everything the IR cannot hold (subgraphs, external data, sparse or string tensors,
// element types other than float32/uint8/int8/int32/int64/bool) is an npuforge::Error
// naming the file and the node, value or tensor. The opset is recorded, not checked: shape
// inference checks it per operator.
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>

#include "model/ir.h"
#include "model/tensor.h"

namespace npuforge::model {

Graph import_onnx_file(const std::filesystem::path& path);
// `source` names the bytes in errors (usually the file's path).
Graph import_onnx_bytes(std::span<const uint8_t> bytes, std::string_view source);

// One serialized TensorProto, the format of ONNX's test data (input_0.pb, output_0.pb).
// `name`, when given, receives the tensor's name field (often empty).
Tensor read_tensor_pb(const std::filesystem::path& path, std::string* name = nullptr);
Tensor parse_tensor_pb(std::span<const uint8_t> bytes, std::string_view source, std::string* name = nullptr);

}  // namespace npuforge::model
