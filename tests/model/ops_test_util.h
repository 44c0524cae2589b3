#pragma once
// Running one op of the builtin registry on hand-made tensors, for the op family tests.
#include <gtest/gtest.h>

#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include "model/ir.h"
#include "model/op.h"
#include "model/tensor.h"
#include "util/error.h"

namespace npuforge::model::testing {

// A node named "n" of `op_type` reading inputs "in0".. and writing outputs "out0"...
// An input named "" in `omitted` positions is an omitted optional input.
inline Node make_node(const std::string& op_type, size_t inputs, size_t outputs = 1, const std::string& domain = "") {
  Node n;
  n.name = "n";
  n.op_type = op_type;
  n.domain = domain;
  for (size_t i = 0; i < inputs; ++i) n.inputs.push_back("in" + std::to_string(i));
  for (size_t i = 0; i < outputs; ++i) n.outputs.push_back("out" + std::to_string(i));
  return n;
}

template <class V>
void set_attr(Node& n, const std::string& name, V value) {
  n.attributes[name] = Attribute{Attribute::Value(std::move(value))};
}

inline Tensor F(Shape shape, std::vector<float> v) { return Tensor::from<float>(std::move(shape), v); }
inline Tensor I64(Shape shape, std::vector<int64_t> v) { return Tensor::from<int64_t>(std::move(shape), v); }
inline Tensor I32(Shape shape, std::vector<int32_t> v) { return Tensor::from<int32_t>(std::move(shape), v); }
inline Tensor U8(Shape shape, std::vector<uint8_t> v) { return Tensor::from<uint8_t>(std::move(shape), v); }
inline Tensor I8(Shape shape, std::vector<int8_t> v) { return Tensor::from<int8_t>(std::move(shape), v); }
inline Tensor B(Shape shape, std::vector<int> v) {
  Tensor t(DType::kBool, std::move(shape));
  for (size_t i = 0; i < v.size(); ++i) t.values<bool>()[i] = v[i] != 0;
  return t;
}

// Runs the op; optional inputs are std::nullopt.
inline std::vector<Tensor> run(const Node& node, int64_t opset, const std::vector<std::optional<Tensor>>& inputs) {
  RunContext ctx{node, opset, {}};
  for (const auto& t : inputs) ctx.inputs.push_back(t ? &*t : nullptr);
  return op_for(node, opset).run(ctx);
}

inline Tensor run1(const Node& node, int64_t opset, const std::vector<std::optional<Tensor>>& inputs) {
  std::vector<Tensor> out = run(node, opset, inputs);
  EXPECT_EQ(out.size(), 1u);
  return out.at(0);
}

// Shape inference with some inputs given as constants (their info follows from them).
struct InferInput {
  ValueInfo info;
  std::optional<Tensor> value;
};
inline InferInput info_of(DType t, Shape s) { return {known(t, std::move(s)), std::nullopt}; }
inline InferInput const_of(const Tensor& t) { return {known(t.dtype(), t.shape()), t}; }
inline InferInput no_shape(DType t) {
  ValueInfo v;
  v.dtype = t;
  return {v, std::nullopt};
}

inline InferResult infer(const Node& node, int64_t opset, const std::vector<std::optional<InferInput>>& inputs) {
  InferContext ctx{node, opset, {}, {}};
  for (const auto& in : inputs) {
    ctx.inputs.push_back(in ? &in->info : nullptr);
    ctx.constants.push_back(in && in->value ? &*in->value : nullptr);
  }
  return op_for(node, opset).infer(ctx);
}

// Checks that `f` throws npuforge::Error whose message contains every one of `parts`.
template <class F>
void expect_error(F&& f, std::initializer_list<const char*> parts) {
  try {
    f();
    ADD_FAILURE() << "no error thrown";
  } catch (const Error& e) {
    for (const char* p : parts) EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << e.what() << " lacks " << p;
  }
}

template <class T>
std::vector<T> vals(const Tensor& t) {
  auto s = t.values<T>();
  return {s.begin(), s.end()};
}

}  // namespace npuforge::model::testing
