#pragma once
// Builds small ONNX models with protobuf in the tests (no binary model files in the tree).
#include <cstring>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <string>
#include <unistd.h>
#include <vector>

#include <onnx/onnx_pb.h>

#include "model/tensor.h"

namespace npuforge::model::testing {

inline int32_t onnx_type(DType t) {
  switch (t) {
    case DType::kFloat32: return onnx::TensorProto_DataType_FLOAT;
    case DType::kUInt8: return onnx::TensorProto_DataType_UINT8;
    case DType::kInt8: return onnx::TensorProto_DataType_INT8;
    case DType::kInt32: return onnx::TensorProto_DataType_INT32;
    case DType::kInt64: return onnx::TensorProto_DataType_INT64;
    case DType::kBool: return onnx::TensorProto_DataType_BOOL;
  }
  return 0;
}

// raw_data encoding (the common one); typed fields are tested separately.
inline onnx::TensorProto to_proto(const std::string& name, const Tensor& t) {
  onnx::TensorProto p;
  p.set_name(name);
  p.set_data_type(onnx_type(t.dtype()));
  for (int64_t d : t.shape()) p.add_dims(d);
  p.set_raw_data(std::string(reinterpret_cast<const char*>(t.bytes().data()), t.byte_size()));
  return p;
}

inline std::filesystem::path temp_dir() {
  const auto dir = std::filesystem::temp_directory_path() / ("npuforge_model_test_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  return dir;
}

inline std::filesystem::path write_temp(const std::string& name, const std::string& bytes) {
  const auto p = temp_dir() / name;
  std::ofstream(p, std::ios::binary) << bytes;
  return p;
}

class OnnxBuilder {
 public:
  explicit OnnxBuilder(int64_t opset = 13) {
    model.set_ir_version(7);
    model.set_producer_name("npuforge tests");
    auto* op = model.add_opset_import();
    op->set_domain("");
    op->set_version(opset);
    model.mutable_graph()->set_name("test");
  }

  onnx::GraphProto& graph() { return *model.mutable_graph(); }

  // dims: -1 is an unknown dimension with dim_param `param`.
  static void set_type(onnx::ValueInfoProto* v, DType dtype, const std::vector<int64_t>& dims,
                       const std::string& param = "N") {
    auto* tt = v->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(onnx_type(dtype));
    auto* shape = tt->mutable_shape();
    for (int64_t d : dims) {
      auto* dim = shape->add_dim();
      if (d < 0) dim->set_dim_param(param);
      else dim->set_dim_value(d);
    }
  }

  OnnxBuilder& input(const std::string& name, DType dtype, const std::vector<int64_t>& dims) {
    auto* v = graph().add_input();
    v->set_name(name);
    set_type(v, dtype, dims);
    return *this;
  }

  OnnxBuilder& output(const std::string& name, DType dtype, const std::vector<int64_t>& dims) {
    auto* v = graph().add_output();
    v->set_name(name);
    set_type(v, dtype, dims);
    return *this;
  }

  // An output with no declared shape.
  OnnxBuilder& output(const std::string& name, DType dtype) {
    auto* v = graph().add_output();
    v->set_name(name);
    v->mutable_type()->mutable_tensor_type()->set_elem_type(onnx_type(dtype));
    return *this;
  }

  OnnxBuilder& initializer(const std::string& name, const Tensor& t) {
    *graph().add_initializer() = to_proto(name, t);
    return *this;
  }

  onnx::NodeProto& node(const std::string& op, std::initializer_list<std::string> inputs,
                        std::initializer_list<std::string> outputs, const std::string& name = "") {
    auto* n = graph().add_node();
    n->set_op_type(op);
    if (!name.empty()) n->set_name(name);
    for (const auto& i : inputs) n->add_input(i);
    for (const auto& o : outputs) n->add_output(o);
    return *n;
  }

  static void attr_int(onnx::NodeProto& n, const std::string& name, int64_t v) {
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto_AttributeType_INT);
    a->set_i(v);
  }

  static void attr_tensor(onnx::NodeProto& n, const std::string& name, const Tensor& t) {
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto_AttributeType_TENSOR);
    *a->mutable_t() = to_proto("", t);
  }

  std::string bytes() const { return model.SerializeAsString(); }
  std::filesystem::path save(const std::string& file) const { return write_temp(file, bytes()); }

  onnx::ModelProto model;
};

inline Tensor floats(Shape shape, std::vector<float> v) { return Tensor::from<float>(std::move(shape), v); }
inline Tensor int64s(Shape shape, std::vector<int64_t> v) { return Tensor::from<int64_t>(std::move(shape), v); }

}  // namespace npuforge::model::testing
