#include "model/onnx_import.h"

#include <climits>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include <fmt/core.h>

#include "model/onnx_proto_util.h"
#include "model/op.h"
#include "util/error.h"
#include "util/file_io.h"

namespace npuforge::model {
namespace {

using namespace onnx_detail;

onnx::ModelProto parse_model(std::span<const uint8_t> bytes, std::string_view source) {
  if (bytes.empty()) throw Error(fmt::format("{}: empty file, not an ONNX model", source));
  if (bytes.size() > static_cast<size_t>(INT_MAX))
    throw Error(fmt::format("{}: {} bytes is beyond protobuf's 2 GB limit", source, bytes.size()));
  onnx::ModelProto model;
  if (!model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
    throw Error(fmt::format("{}: not a valid ONNX model (protobuf parsing failed: a truncated or corrupt "
                            "file, or not a .onnx file)", source));
  // Random bytes occasionally parse as a protobuf message; a real model has both.
  if (!model.has_ir_version() || !model.has_graph())
    throw Error(fmt::format("{}: not an ONNX model (no {}; a truncated or corrupt file?)", source,
                            model.has_ir_version() ? "graph" : "ir_version"));
  return model;
}

int64_t default_opset(const onnx::ModelProto& model, std::string_view source) {
  for (const auto& op : model.opset_import())
    if (op.domain().empty() || op.domain() == "ai.onnx") return op.version();
  throw Error(fmt::format("{}: the model imports no opset of the default ONNX domain", source));
}

// The tensor a Constant node defines, from whichever value_* attribute it carries.
Tensor constant_value(const onnx::NodeProto& proto, const Node& node, std::string_view source) {
  if (proto.attribute_size() != 1)
    throw Error(fmt::format("{}: {}: a Constant needs exactly one value attribute, it has {}", source,
                            node.describe(), proto.attribute_size()));
  const auto& a = proto.attribute(0);
  const std::string& n = a.name();
  if (n == "value") return tensor_from_proto(a.t(), fmt::format("{}: {}: value", source, node.describe()));
  if (n == "value_float") return Tensor::scalar<float>(a.f());
  if (n == "value_int") return Tensor::scalar<int64_t>(a.i());
  if (n == "value_floats") {
    std::vector<float> v(a.floats().begin(), a.floats().end());
    return Tensor::from<float>({static_cast<int64_t>(v.size())}, v);
  }
  if (n == "value_ints") {
    std::vector<int64_t> v(a.ints().begin(), a.ints().end());
    return Tensor::from<int64_t>({static_cast<int64_t>(v.size())}, v);
  }
  throw Error(fmt::format("{}: {}: a Constant with attribute '{}' is not supported (string and sparse "
                          "tensors are not)", source, node.describe(), n));
}

void rename_everywhere(Graph& g, const std::string& from, const std::string& to) {
  for (Node& n : g.nodes) {
    for (std::string& in : n.inputs)
      if (in == from) in = to;
    for (std::string& out : n.outputs)
      if (out == from) out = to;
  }
}

bool is_output(const Graph& g, std::string_view name) {
  for (const std::string& o : g.outputs)
    if (o == name) return true;
  return false;
}

bool is_input(const Graph& g, std::string_view name) {
  for (const std::string& i : g.inputs)
    if (i == name) return true;
  return false;
}

bool is_read(const Graph& g, std::string_view name) {
  if (is_output(g, name)) return true;
  for (const Node& n : g.nodes)
    for (const std::string& in : n.inputs)
      if (in == name) return true;
  return false;
}

// Dropout in inference is the identity; a node that trains (training_mode true, or not
// known at compile time) or whose mask is read cannot be dropped.
void check_dropout(const Graph& g, const Node& n) {
  const std::string& training = n.input(2);
  if (!training.empty()) {
    const Tensor* t = g.find_constant(training);
    if (!t) n.fail("training_mode is a run-time input; npuforge only runs Dropout in inference mode");
    if (t->numel() != 1 || t->int_at(0) != 0) n.fail("training_mode is true; npuforge only runs inference");
  }
  if (n.outputs.size() > 1 && !n.outputs[1].empty() && is_read(g, n.outputs[1]))
    n.fail("the mask output is used; npuforge removes Dropout (inference) and has no mask to give");
}

// Removes Identity and Dropout nodes (torch aliases weights through Identity; Dropout does
// nothing at inference). Graph outputs keep their names.
void remove_passthrough(Graph& g) {
  for (size_t i = 0; i < g.nodes.size();) {
    Node& n = g.nodes[i];
    const bool identity = n.op_type == "Identity" && n.domain.empty();
    const bool dropout = n.op_type == "Dropout" && n.domain.empty();
    if (!identity && !dropout) {
      ++i;
      continue;
    }
    if (dropout) check_dropout(g, n);
    if (n.inputs.empty() || n.inputs[0].empty() || n.outputs.empty()) n.fail("needs one input and one output");
    const std::string src = n.inputs[0], dst = n.outputs[0];
    const bool src_produced = !is_input(g, src) && !g.is_constant(src);
    if (!is_output(g, dst)) {
      g.nodes.erase(g.nodes.begin() + static_cast<ptrdiff_t>(i));
      rename_everywhere(g, dst, src);  // consumers read the source directly
    } else if (src_produced && !is_output(g, src)) {
      g.nodes.erase(g.nodes.begin() + static_cast<ptrdiff_t>(i));
      rename_everywhere(g, src, dst);  // the producer writes the graph output's name
    } else if (g.is_constant(src) && !is_output(g, src)) {
      g.constants[dst] = g.constants.at(src);
      g.nodes.erase(g.nodes.begin() + static_cast<ptrdiff_t>(i));
    } else {
      // An input (or another output) passed straight to an output: the node stays.
      n.op_type = "Identity";
      n.inputs.resize(1);
      n.outputs.resize(1);
      n.attributes.clear();
      ++i;
    }
  }
}

void name_nodes(std::vector<Node>& nodes) {
  std::unordered_set<std::string> used;
  for (size_t i = 0; i < nodes.size(); ++i) {
    Node& n = nodes[i];
    if (n.name.empty() || used.count(n.name)) {
      std::string base = n.name.empty() ? fmt::format("{}_{}", n.op_type, i) : fmt::format("{}_{}", n.name, i);
      std::string name = base;
      for (int k = 1; used.count(name); ++k) name = fmt::format("{}_{}", base, k);
      n.name = name;
    }
    used.insert(n.name);
  }
}

Graph convert_graph(const onnx::ModelProto& model, std::string_view source) {
  const onnx::GraphProto& gp = model.graph();
  Graph g;
  g.source = std::string(source);
  g.name = gp.name();
  g.opset = default_opset(model, source);
  if (gp.sparse_initializer_size() > 0)
    throw Error(fmt::format("{}: sparse initializers are not supported", source));

  for (const auto& init : gp.initializer()) {
    if (init.name().empty()) throw Error(fmt::format("{}: an initializer has no name", source));
    const std::string what = fmt::format("{}: initializer '{}'", source, init.name());
    if (g.constants.count(init.name())) throw Error(fmt::format("{} is defined twice", what));
    g.constants.emplace(init.name(), tensor_from_proto(init, what));
  }
  for (const auto& in : gp.input()) {
    if (g.constants.count(in.name())) continue;  // an initializer listed as input (IR < 4)
    if (in.name().empty()) throw Error(fmt::format("{}: a graph input has no name", source));
    if (g.values.count(in.name())) throw Error(fmt::format("{}: graph input '{}' is listed twice", source, in.name()));
    g.values[in.name()] = value_info_from_proto(in, fmt::format("{}: graph input '{}'", source, in.name()));
    g.inputs.push_back(in.name());
  }
  for (const auto& out : gp.output()) {
    if (out.name().empty()) throw Error(fmt::format("{}: a graph output has no name", source));
    if (is_output(g, out.name())) throw Error(fmt::format("{}: graph output '{}' is listed twice", source, out.name()));
    g.outputs.push_back(out.name());
    // Declared types of outputs are kept; shape inference checks its result against them.
    if (!g.values.count(out.name()) && !g.constants.count(out.name()))
      g.values[out.name()] = value_info_from_proto(out, fmt::format("{}: graph output '{}'", source, out.name()));
  }

  std::vector<const onnx::NodeProto*> protos;
  for (const auto& np : gp.node()) {
    Node n;
    n.name = np.name();
    n.op_type = np.op_type();
    n.domain = np.domain() == "ai.onnx" ? std::string() : np.domain();
    n.inputs.assign(np.input().begin(), np.input().end());
    n.outputs.assign(np.output().begin(), np.output().end());
    g.nodes.push_back(std::move(n));
    protos.push_back(&np);
  }
  name_nodes(g.nodes);

  std::vector<Node> kept;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    Node& n = g.nodes[i];
    const onnx::NodeProto& np = *protos[i];
    if (n.op_type == "Constant" && n.domain.empty()) {
      if (n.outputs.size() != 1 || n.outputs[0].empty()) n.fail("a Constant needs exactly one output");
      if (g.constants.count(n.outputs[0]) || is_input(g, n.outputs[0]))
        n.fail(fmt::format("output '{}' is already defined", n.outputs[0]));
      g.constants.emplace(n.outputs[0], constant_value(np, n, source));
      continue;
    }
    for (const auto& a : np.attribute()) {
      if (n.attributes.count(a.name()))
        throw Error(fmt::format("{}: {}: attribute '{}' is given twice", source, n.describe(), a.name()));
      n.attributes.emplace(a.name(), attribute_from_proto(a, n, source));
    }
    kept.push_back(std::move(n));
  }
  g.nodes = std::move(kept);

  try {
    remove_passthrough(g);
    sort_topologically(g);
  } catch (const Error& e) {
    throw Error(fmt::format("{}: {}", source, e.what()));
  }
  for (const auto& [name, t] : g.constants) g.values[name] = known(t.dtype(), t.shape());
  for (const std::string& out : g.outputs) {
    bool produced = g.is_constant(out) || is_input(g, out);
    for (const Node& n : g.nodes)
      for (const std::string& o : n.outputs) produced = produced || o == out;
    if (!produced) throw Error(fmt::format("{}: graph output '{}' is not produced by any node", source, out));
  }
  return g;
}

}  // namespace

Graph import_onnx_bytes(std::span<const uint8_t> bytes, std::string_view source) {
  return convert_graph(parse_model(bytes, source), source);
}

Graph import_onnx_file(const std::filesystem::path& path) {
  const std::vector<uint8_t> bytes = util::read_binary_file(path, "ONNX model");
  return import_onnx_bytes(bytes, path.string());
}

Tensor parse_tensor_pb(std::span<const uint8_t> bytes, std::string_view source, std::string* name) {
  onnx::TensorProto proto;
  if (bytes.size() > static_cast<size_t>(INT_MAX) ||
      !proto.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
    throw Error(fmt::format("{}: not a valid TensorProto (protobuf parsing failed)", source));
  if (name) *name = proto.name();
  return tensor_from_proto(proto, proto.name().empty() ? std::string(source)
                                                       : fmt::format("{}: tensor '{}'", source, proto.name()));
}

Tensor read_tensor_pb(const std::filesystem::path& path, std::string* name) {
  const std::vector<uint8_t> bytes = util::read_binary_file(path, "TensorProto file");
  return parse_tensor_pb(bytes, path.string(), name);
}

}  // namespace npuforge::model
