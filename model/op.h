#pragma once
// What the model layer knows about an operator: how to infer its outputs' types and shapes
// and how to compute it (the fp32/integer reference). One OpDef per op_type; the registry
// is built once and is immutable.
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "model/ir.h"

namespace npuforge::model {

struct InferContext {
  const Node& node;
  int64_t opset;                            // default-domain opset of the graph
  std::vector<const ValueInfo*> inputs;     // nullptr for an omitted optional input
  std::vector<const Tensor*> constants;     // an input's value when known at compile time

  size_t input_count() const { return inputs.size(); }
  bool has_input(size_t i) const { return i < inputs.size() && inputs[i] != nullptr; }
  // Input i's info; an error naming the node when it is missing.
  const ValueInfo& input(size_t i) const;
  // Input i's compile-time value; nullptr when it is only known at run time.
  const Tensor* constant(size_t i) const { return i < constants.size() ? constants[i] : nullptr; }
};

struct InferResult {
  std::vector<ValueInfo> outputs;           // one per node output
  // Set by ops whose outputs follow from shapes alone (Shape, Size): the value becomes a
  // constant of the graph, so shape sub-graphs fold away.
  std::vector<std::optional<Tensor>> values;
};

struct RunContext {
  const Node& node;
  int64_t opset;
  std::vector<const Tensor*> inputs;        // nullptr for an omitted optional input

  bool has_input(size_t i) const { return i < inputs.size() && inputs[i] != nullptr; }
  // Input i; an error naming the node when it is missing.
  const Tensor& input(size_t i) const;
};

struct OpDef {
  std::string_view domain;                  // "" = ai.onnx, "com.microsoft", ...
  std::string_view op_type;
  int64_t min_opset = 1;                    // versions of the op this definition implements
  int64_t max_opset = 17;
  InferResult (*infer)(const InferContext&) = nullptr;
  std::vector<Tensor> (*run)(const RunContext&) = nullptr;
};

class OpRegistry {
 public:
  void add(const OpDef& def);
  // nullptr when no definition covers (domain, op_type).
  const OpDef* find(std::string_view domain, std::string_view op_type) const;
  std::span<const OpDef> all() const { return defs_; }

 private:
  std::vector<OpDef> defs_;
};

// Every operator npuforge implements. Built on first use, then read-only.
const OpRegistry& builtin_ops();

// Looks up the node's op and checks that the graph's opset lies in its supported range;
// throws npuforge::Error naming the node, the op and the reason otherwise.
const OpDef& op_for(const Node& node, int64_t opset);
// The same lookup in another registry (tests, or a compiler that restricts the ops).
const OpDef& op_for(const Node& node, int64_t opset, const OpRegistry& registry);

// ---- helpers every op definition uses ----

// NumPy/ONNX multidirectional broadcasting; an error naming the node when the shapes do
// not broadcast. Unknown dimensions stay unknown unless the other side fixes them.
Shape broadcast_shapes(const Node& node, const Shape& a, const Shape& b);
// Normalises a possibly negative axis into [0, rank); an error naming the node otherwise.
int64_t normalize_axis(const Node& node, int64_t axis, int64_t rank);
// A ValueInfo with a known shape.
ValueInfo known(DType dtype, Shape shape);

}  // namespace npuforge::model
