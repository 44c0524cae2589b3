#pragma once
// Helpers for op tests: build a node, run or infer one op through the registry (as the
// interpreter does), make seeded random tensors, compare float results.
#include <cmath>
#include <initializer_list>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "model/op.h"
#include "util/rng.h"

namespace npuforge::model::testing {

using AttrList = std::initializer_list<std::pair<std::string, Attribute::Value>>;

// A node of `op_type` with inputs "in0".."in{n-1}" and outputs "out0".."out{m-1}".
inline Node op_node(std::string op_type, size_t inputs, AttrList attrs = {}, size_t outputs = 1) {
  Node n;
  n.name = op_type + "_test";
  n.op_type = std::move(op_type);
  for (size_t i = 0; i < inputs; ++i) n.inputs.push_back("in" + std::to_string(i));
  for (size_t i = 0; i < outputs; ++i) n.outputs.push_back("out" + std::to_string(i));
  for (const auto& [k, v] : attrs) n.attributes[k] = Attribute{v};
  return n;
}

// Runs the node's op on the inputs (nullptr = omitted optional input).
inline std::vector<Tensor> run_op(const Node& node, std::vector<const Tensor*> inputs, int64_t opset = 17) {
  const OpDef& def = op_for(node, opset);
  return def.run(RunContext{node, opset, std::move(inputs)});
}

// Runs shape inference; `constants[i]` is input i's compile-time value when not null.
inline InferResult infer_op(const Node& node, const std::vector<std::optional<ValueInfo>>& inputs,
                            int64_t opset = 17, std::vector<const Tensor*> constants = {}) {
  const OpDef& def = op_for(node, opset);
  std::vector<const ValueInfo*> ptrs;
  for (const auto& v : inputs) ptrs.push_back(v ? &*v : nullptr);
  constants.resize(inputs.size(), nullptr);
  return def.infer(InferContext{node, opset, ptrs, constants});
}

inline ValueInfo info_of(const Tensor& t) { return known(t.dtype(), t.shape()); }

// Infers from the inputs' exact shapes, runs, and checks that both agree on dtype and shape.
inline std::vector<Tensor> run_checked(const Node& node, std::vector<const Tensor*> inputs, int64_t opset = 17) {
  std::vector<std::optional<ValueInfo>> infos;
  for (const Tensor* t : inputs) infos.push_back(t ? std::optional<ValueInfo>(info_of(*t)) : std::nullopt);
  const InferResult inferred = infer_op(node, infos, opset, inputs);
  std::vector<Tensor> out = run_op(node, inputs, opset);
  EXPECT_EQ(inferred.outputs.size(), node.outputs.size());
  for (size_t i = 0; i < out.size() && i < inferred.outputs.size(); ++i) {
    EXPECT_EQ(inferred.outputs[i].dtype, out[i].dtype()) << "output " << i;
    EXPECT_TRUE(inferred.outputs[i].has_shape) << "output " << i;
    EXPECT_EQ(inferred.outputs[i].shape, out[i].shape()) << "output " << i;
  }
  return out;
}

inline float uniform(Rng& rng, float lo, float hi) {
  return lo + (hi - lo) * static_cast<float>(static_cast<double>(rng.next() >> 11) * 0x1.0p-53);
}

inline Tensor random_floats(const Shape& shape, Rng& rng, float lo = -1.0f, float hi = 1.0f) {
  Tensor t(DType::kFloat32, shape);
  for (float& v : t.values<float>()) v = uniform(rng, lo, hi);
  return t;
}

template <class T>
Tensor random_ints(const Shape& shape, Rng& rng, int64_t lo, int64_t hi) {
  Tensor t(dtype_of<T>(), shape);
  for (T& v : t.values<T>()) v = static_cast<T>(rng.range(lo, hi));
  return t;
}

template <class T>
Tensor tensor(const Shape& shape, std::vector<T> values) {
  return Tensor::from<T>(shape, std::span<const T>(values));
}

// Element-wise |a - b| <= atol + rtol * |b|, with the first mismatch reported.
inline ::testing::AssertionResult near_all(const Tensor& actual, const std::vector<double>& expected,
                                           double rtol = 1e-5, double atol = 1e-6) {
  if (actual.numel() != static_cast<int64_t>(expected.size()))
    return ::testing::AssertionFailure() << "size " << actual.numel() << " vs expected " << expected.size();
  for (int64_t i = 0; i < actual.numel(); ++i) {
    const double a = actual.real_at(i), e = expected[static_cast<size_t>(i)];
    if (!(std::fabs(a - e) <= atol + rtol * std::fabs(e)))
      return ::testing::AssertionFailure() << "element " << i << ": " << a << " vs expected " << e;
  }
  return ::testing::AssertionSuccess();
}

// Expects `f` to throw npuforge::Error whose message contains `fragment`.
template <class F>
::testing::AssertionResult fails_with(F&& f, const std::string& fragment) {
  try {
    f();
  } catch (const Error& e) {
    if (std::string(e.what()).find(fragment) != std::string::npos) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << "message \"" << e.what() << "\" lacks \"" << fragment << "\"";
  }
  return ::testing::AssertionFailure() << "no npuforge::Error thrown";
}

}  // namespace npuforge::model::testing
