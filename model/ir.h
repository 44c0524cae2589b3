#pragma once
// The model IR: a graph of nodes over named tensors, the same for every importer (ONNX,
// the project's YAML graph). Node and attribute names follow ONNX, so an ONNX operator's
// specification is the specification of the node of the same op_type here.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "model/tensor.h"

namespace npuforge::model {

struct Attribute {
  using Value = std::variant<int64_t, float, std::string, std::vector<int64_t>, std::vector<float>,
                             std::vector<std::string>, Tensor>;
  Value value;
};

struct Node {
  std::string name;     // unique in the graph; importers make one up ("Conv_3") when missing
  std::string op_type;  // "Conv", "QLinearMatMul", ...
  std::string domain;   // "" is the default ONNX domain (ai.onnx)
  std::vector<std::string> inputs;   // "" marks an omitted optional input
  std::vector<std::string> outputs;  // "" marks an omitted optional output
  std::map<std::string, Attribute, std::less<>> attributes;

  // "node 'Conv_3' (Conv)": how every error about a node starts.
  std::string describe() const;
  // Throws npuforge::Error "node 'X' (Op): <reason>".
  [[noreturn]] void fail(std::string_view reason) const;

  bool has_attr(std::string_view name) const { return attributes.find(name) != attributes.end(); }
  // Typed attribute reads. Without a fallback a missing attribute is an error; an attribute
  // of another type is always an error (both name the node, the op and the attribute).
  int64_t attr_int(std::string_view name, std::optional<int64_t> fallback = std::nullopt) const;
  float attr_float(std::string_view name, std::optional<float> fallback = std::nullopt) const;
  std::string attr_string(std::string_view name, std::optional<std::string> fallback = std::nullopt) const;
  std::vector<int64_t> attr_ints(std::string_view name,
                                 std::optional<std::vector<int64_t>> fallback = std::nullopt) const;
  std::vector<float> attr_floats(std::string_view name,
                                 std::optional<std::vector<float>> fallback = std::nullopt) const;
  const Tensor& attr_tensor(std::string_view name) const;

  // Input i's name, or "" when the node has fewer inputs (an omitted optional input).
  const std::string& input(size_t i) const;
};

// Type and shape of a value as far as they are known. Importers fill what the file says;
// shape inference fills the rest.
struct ValueInfo {
  DType dtype = DType::kFloat32;
  bool has_shape = false;          // false: not even the rank is known
  Shape shape;                     // kUnknownDim for a dimension not known yet
  std::vector<std::string> dim_names;  // symbolic names of dims (ONNX dim_param), "" if none

  bool shape_known() const;        // has_shape and every dimension known
};

struct Graph {
  std::string source;              // file the graph came from, for error messages
  std::string name;
  int64_t opset = 0;               // version of the default ONNX domain
  std::vector<std::string> inputs;   // graph inputs fed at run time (initializers excluded)
  std::vector<std::string> outputs;
  std::map<std::string, ValueInfo, std::less<>> values;   // every named value
  std::map<std::string, Tensor, std::less<>> constants;   // initializers, Constant nodes, folded values
  std::vector<Node> nodes;         // in topological order once imported

  const ValueInfo* find_value(std::string_view name) const;
  const Tensor* find_constant(std::string_view name) const;
  bool is_constant(std::string_view name) const { return find_constant(name) != nullptr; }
};

// "SOURCE: message" (the graph's file first), unless the message already starts with it.
std::string with_source(const Graph& graph, std::string_view message);

// Sorts graph.nodes topologically (stable: the file's order where it is already valid);
// throws npuforge::Error naming a node on a cycle or a node reading a value nobody produces.
void sort_topologically(Graph& graph);

}  // namespace npuforge::model
