// TensorProto, ValueInfoProto and AttributeProto decoding for the ONNX importer.
#include <cstring>
#include <limits>

#include <fmt/core.h>

#include "model/onnx_proto_util.h"
#include "util/error.h"

namespace npuforge::model::onnx_detail {
namespace {

template <class T, class Field>
void copy_typed(const Field& field, Tensor& t, std::string_view what, std::string_view field_name) {
  if (field.size() != t.numel())
    throw Error(fmt::format("{}: {} holds {} values, the shape {} needs {}", what, field_name, field.size(),
                            shape_str(t.shape()), t.numel()));
  std::span<T> out = t.values<T>();
  for (int i = 0; i < field.size(); ++i) {
    const auto v = field.Get(i);
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, decltype(v)>) {
      if (v < std::numeric_limits<T>::min() || v > std::numeric_limits<T>::max())
        throw Error(fmt::format("{}: {} value {} is out of range for {}", what, field_name, v,
                                dtype_name(t.dtype())));
    }
    out[static_cast<size_t>(i)] = static_cast<T>(v);
  }
}

}  // namespace

std::string onnx_type_name(int32_t elem_type) {
  if (onnx::TensorProto_DataType_IsValid(elem_type))
    return onnx::TensorProto_DataType_Name(static_cast<onnx::TensorProto_DataType>(elem_type));
  return fmt::format("type {}", elem_type);
}

std::optional<DType> dtype_from_onnx(int32_t elem_type) {
  switch (elem_type) {
    case onnx::TensorProto_DataType_FLOAT: return DType::kFloat32;
    case onnx::TensorProto_DataType_UINT8: return DType::kUInt8;
    case onnx::TensorProto_DataType_INT8: return DType::kInt8;
    case onnx::TensorProto_DataType_INT32: return DType::kInt32;
    case onnx::TensorProto_DataType_INT64: return DType::kInt64;
    case onnx::TensorProto_DataType_BOOL: return DType::kBool;
    default: return std::nullopt;
  }
}

Tensor tensor_from_proto(const onnx::TensorProto& proto, std::string_view what) {
  if (proto.data_location() == onnx::TensorProto_DataLocation_EXTERNAL || proto.external_data_size() > 0)
    throw Error(fmt::format("{}: tensor data stored in an external file is not supported (save the model "
                            "with its weights inside the .onnx file)", what));
  if (proto.has_segment()) throw Error(fmt::format("{}: segmented tensors are not supported", what));
  const auto dtype = dtype_from_onnx(proto.data_type());
  if (!dtype)
    throw Error(fmt::format("{}: element type {} is not supported (float32, uint8, int8, int32, int64, bool)",
                            what, onnx_type_name(proto.data_type())));
  Shape shape;
  for (int64_t d : proto.dims()) {
    if (d < 0) throw Error(fmt::format("{}: negative dimension {}", what, d));
    shape.push_back(d);
  }
  Tensor t;
  try {
    t = Tensor(*dtype, shape);
  } catch (const Error& e) {
    throw Error(fmt::format("{}: {}", what, e.what()));
  }
  if (proto.has_raw_data()) {
    const std::string& raw = proto.raw_data();
    if (raw.size() != t.byte_size())
      throw Error(fmt::format("{}: raw_data has {} bytes, the shape {} of {} needs {}", what, raw.size(),
                              shape_str(shape), dtype_name(*dtype), t.byte_size()));
    // The host is little-endian, as is ONNX's raw_data.
    if (!raw.empty()) std::memcpy(t.bytes().data(), raw.data(), raw.size());
    if (*dtype == DType::kBool)
      for (std::byte& b : t.bytes()) b = std::byte{b != std::byte{0}};
    return t;
  }
  switch (*dtype) {
    case DType::kFloat32: copy_typed<float>(proto.float_data(), t, what, "float_data"); break;
    case DType::kUInt8: copy_typed<uint8_t>(proto.int32_data(), t, what, "int32_data"); break;
    case DType::kInt8: copy_typed<int8_t>(proto.int32_data(), t, what, "int32_data"); break;
    case DType::kInt32: copy_typed<int32_t>(proto.int32_data(), t, what, "int32_data"); break;
    case DType::kInt64: copy_typed<int64_t>(proto.int64_data(), t, what, "int64_data"); break;
    case DType::kBool: copy_typed<bool>(proto.int32_data(), t, what, "int32_data"); break;
  }
  return t;
}

ValueInfo value_info_from_proto(const onnx::ValueInfoProto& proto, std::string_view what) {
  if (!proto.has_type() || !proto.type().has_tensor_type()) {
    const char* kind = "no type";
    if (proto.has_type()) {
      const auto& type = proto.type();
      kind = type.has_sequence_type() ? "a sequence type"
             : type.has_map_type()    ? "a map type"
             : type.has_optional_type() ? "an optional type"
             : type.has_sparse_tensor_type() ? "a sparse tensor type"
                                             : "a non-tensor type";
    }
    throw Error(fmt::format("{}: has {}; only dense tensors are supported", what, kind));
  }
  const auto& tensor_type = proto.type().tensor_type();
  const auto dtype = dtype_from_onnx(tensor_type.elem_type());
  if (!dtype)
    throw Error(fmt::format("{}: element type {} is not supported (float32, uint8, int8, int32, int64, bool)",
                            what, onnx_type_name(tensor_type.elem_type())));
  ValueInfo info;
  info.dtype = *dtype;
  if (!tensor_type.has_shape()) return info;
  info.has_shape = true;
  for (const auto& dim : tensor_type.shape().dim()) {
    if (dim.has_dim_value()) {
      if (dim.dim_value() < 0) throw Error(fmt::format("{}: negative dimension {}", what, dim.dim_value()));
      info.shape.push_back(dim.dim_value());
      info.dim_names.emplace_back();
    } else {
      info.shape.push_back(kUnknownDim);
      info.dim_names.push_back(dim.has_dim_param() ? dim.dim_param() : std::string());
    }
  }
  return info;
}

[[noreturn]] void attribute_fail(const onnx::AttributeProto& a, const Node& node, std::string_view source,
                                 std::string_view reason) {
  throw Error(fmt::format("{}: {}: attribute '{}' {}", source, node.describe(), a.name(), reason));
}

Attribute attribute_from_proto(const onnx::AttributeProto& a, const Node& node, std::string_view source) {
  const auto fail = [&](std::string_view reason) { attribute_fail(a, node, source, reason); };
  if (!a.ref_attr_name().empty()) fail("refers to a function attribute; ONNX functions are not supported");
  auto type = a.type();
  if (type == onnx::AttributeProto_AttributeType_UNDEFINED) {
    // Old exporters leave the type out; the field that is set says it.
    if (a.has_f()) type = onnx::AttributeProto_AttributeType_FLOAT;
    else if (a.has_i()) type = onnx::AttributeProto_AttributeType_INT;
    else if (a.has_s()) type = onnx::AttributeProto_AttributeType_STRING;
    else if (a.has_t()) type = onnx::AttributeProto_AttributeType_TENSOR;
    else if (a.has_g() || a.graphs_size()) type = onnx::AttributeProto_AttributeType_GRAPH;
    else if (a.floats_size()) type = onnx::AttributeProto_AttributeType_FLOATS;
    else if (a.ints_size()) type = onnx::AttributeProto_AttributeType_INTS;
    else if (a.strings_size()) type = onnx::AttributeProto_AttributeType_STRINGS;
    else attribute_fail(a, node, source, "has no type and no value");
  }
  switch (type) {
    case onnx::AttributeProto_AttributeType_FLOAT: return {a.f()};
    case onnx::AttributeProto_AttributeType_INT: return {static_cast<int64_t>(a.i())};
    case onnx::AttributeProto_AttributeType_STRING: return {a.s()};
    case onnx::AttributeProto_AttributeType_TENSOR:
      return {tensor_from_proto(a.t(), fmt::format("{}: {}: attribute '{}'", source, node.describe(), a.name()))};
    case onnx::AttributeProto_AttributeType_FLOATS: return {std::vector<float>(a.floats().begin(), a.floats().end())};
    case onnx::AttributeProto_AttributeType_INTS: return {std::vector<int64_t>(a.ints().begin(), a.ints().end())};
    case onnx::AttributeProto_AttributeType_STRINGS:
      return {std::vector<std::string>(a.strings().begin(), a.strings().end())};
    case onnx::AttributeProto_AttributeType_GRAPH:
    case onnx::AttributeProto_AttributeType_GRAPHS:
      attribute_fail(a, node, source, "holds a subgraph; control flow (If, Loop, Scan) and subgraphs are not supported");
    default:
      attribute_fail(a, node, source, fmt::format("has type {}, which npuforge does not support",
                       onnx::AttributeProto_AttributeType_IsValid(type)
                           ? onnx::AttributeProto_AttributeType_Name(type)
                           : std::to_string(type)));
  }
}

}  // namespace npuforge::model::onnx_detail
