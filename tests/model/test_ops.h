#pragma once
// A few trivial ops in a test-only registry, so that the core (importers, inference,
// folding, interpreter) is tested without depending on the op families' definitions.
#include <algorithm>

#include <fmt/core.h>

#include "model/infer.h"
#include "model/op.h"

namespace npuforge::model::testing {

inline InferResult same_as_input(const InferContext& c) { return {.outputs = {c.input(0)}, .values = {}}; }

inline std::vector<Tensor> relu(const RunContext& c) {
  Tensor y = c.input(0);
  for (float& v : y.values<float>()) v = std::max(v, 0.0f);
  return {y};
}

// Add of float32 or int64 where one side has the other's shape or one element.
inline InferResult add_infer(const InferContext& c) {
  const ValueInfo& a = c.input(0);
  const ValueInfo& b = c.input(1);
  if (a.dtype != b.dtype) c.node.fail("input types differ");
  if (a.dtype != DType::kFloat32 && a.dtype != DType::kInt64) c.node.fail(fmt::format("dtype {} not supported", dtype_name(a.dtype)));
  return {.outputs = {known(a.dtype, broadcast_shapes(c.node, a.shape, b.shape))}, .values = {}};
}

template <class T>
Tensor add_typed(const Tensor& a, const Tensor& b) {
  const Tensor& big = a.numel() >= b.numel() ? a : b;
  Tensor y = big;
  auto out = y.values<T>();
  auto av = a.values<T>();
  auto bv = b.values<T>();
  for (size_t i = 0; i < out.size(); ++i) out[i] = av[av.size() == 1 ? 0 : i] + bv[bv.size() == 1 ? 0 : i];
  return y;
}

inline std::vector<Tensor> add_run(const RunContext& c) {
  const Tensor& a = c.input(0);
  const Tensor& b = c.input(1);
  if (a.numel() != b.numel() && a.numel() != 1 && b.numel() != 1) c.node.fail("test Add broadcasts only scalars");
  return {a.dtype() == DType::kFloat32 ? add_typed<float>(a, b) : add_typed<int64_t>(a, b)};
}

// Shape: its value follows from the input's shape, so infer returns it.
inline InferResult shape_infer(const InferContext& c) {
  const ValueInfo& x = c.input(0);
  if (!x.has_shape) c.node.fail("input rank unknown");
  InferResult r{.outputs = {known(DType::kInt64, {static_cast<int64_t>(x.shape.size())})}, .values = {}};
  if (x.shape_known()) r.values.push_back(Tensor::from<int64_t>({static_cast<int64_t>(x.shape.size())}, x.shape));
  return r;
}

inline std::vector<Tensor> shape_run(const RunContext& c) {
  const Shape& s = c.input(0).shape();
  return {Tensor::from<int64_t>({static_cast<int64_t>(s.size())}, s)};
}

// Reshape with a compile-time shape (0 copies, -1 is inferred).
inline Shape reshape_target(const Node& node, const Shape& in, const std::vector<int64_t>& spec) {
  Shape out;
  int64_t known_product = 1, infer_at = -1;
  for (size_t i = 0; i < spec.size(); ++i) {
    int64_t d = spec[i] == 0 ? in.at(i) : spec[i];
    if (d == -1) infer_at = static_cast<int64_t>(i);
    else known_product *= d;
    out.push_back(d);
  }
  if (infer_at >= 0) out[static_cast<size_t>(infer_at)] = element_count(in) / known_product;
  if (element_count(out) != element_count(in)) node.fail("element count changes");
  return out;
}

inline InferResult reshape_infer(const InferContext& c) {
  const Tensor* spec = c.constant(1);
  if (!spec) c.node.fail("shape input must be known at compile time");
  return {.outputs = {known(c.input(0).dtype, reshape_target(c.node, c.input(0).shape, spec->to_int64s()))}, .values = {}};
}

inline std::vector<Tensor> reshape_run(const RunContext& c) {
  return {c.input(0).reshaped(reshape_target(c.node, c.input(0).shape(), c.input(1).to_int64s()))};
}

// An op whose run disagrees with its inference (the interpreter must notice).
inline std::vector<Tensor> wrong_shape_run(const RunContext& /*c*/) { return {Tensor(DType::kFloat32, {1})}; }

inline const OpRegistry& test_registry() {
  static const OpRegistry r = [] {
    OpRegistry r;
    r.add({.domain = "", .op_type = "Relu", .min_opset = 6, .max_opset = 17, .infer = same_as_input, .run = relu});
    r.add({.domain = "", .op_type = "Add", .min_opset = 7, .max_opset = 17, .infer = add_infer, .run = add_run});
    r.add({.domain = "", .op_type = "Shape", .min_opset = 1, .max_opset = 17, .infer = shape_infer, .run = shape_run});
    r.add({.domain = "", .op_type = "Reshape", .min_opset = 5, .max_opset = 17, .infer = reshape_infer, .run = reshape_run});
    r.add({.domain = "", .op_type = "Identity", .min_opset = 1, .max_opset = 17, .infer = same_as_input,
           .run = [](const RunContext& c) { return std::vector<Tensor>{c.input(0)}; }});
    r.add({.domain = "test", .op_type = "WrongShape", .min_opset = 1, .max_opset = 17, .infer = same_as_input,
           .run = wrong_shape_run});
    r.add({.domain = "test", .op_type = "NoRun", .min_opset = 1, .max_opset = 17, .infer = same_as_input, .run = nullptr});
    return r;
  }();
  return r;
}

// Inference options that use the test registry.
inline InferOptions test_infer(bool fold = true, std::vector<std::string> keep_ops = {}) {
  InferOptions o;
  o.ops = &test_registry();
  o.fold_constants = fold;
  o.keep_ops = std::move(keep_ops);
  return o;
}

}  // namespace npuforge::model::testing
