#include "model/infer.h"

#include <algorithm>
#include <set>

#include <fmt/core.h>

#include "util/error.h"

namespace npuforge::model {
namespace {

bool is_graph_output(const Graph& g, std::string_view name) {
  return std::find(g.outputs.begin(), g.outputs.end(), name) != g.outputs.end();
}

std::string info_str(const ValueInfo& v) {
  return fmt::format("{} {}", dtype_name(v.dtype), v.has_shape ? shape_str(v.shape) : "(unknown shape)");
}

// True when a value of type `actual` may stand where `expected` is: same dtype, and the
// same rank and dimensions wherever both are known.
bool compatible(const ValueInfo& expected, const ValueInfo& actual) {
  if (expected.dtype != actual.dtype) return false;
  if (!expected.has_shape || !actual.has_shape) return true;
  if (expected.shape.size() != actual.shape.size()) return false;
  for (size_t i = 0; i < expected.shape.size(); ++i)
    if (expected.shape[i] >= 0 && actual.shape[i] >= 0 && expected.shape[i] != actual.shape[i]) return false;
  return true;
}

// Records an inferred value; a graph output's declared type (from the file) must agree.
void record(Graph& g, const Node& node, const std::string& name, ValueInfo info) {
  auto it = g.values.find(name);
  if (it != g.values.end() && is_graph_output(g, name)) {
    const ValueInfo& declared = it->second;
    if (!compatible(declared, info))
      node.fail(fmt::format("computes graph output '{}' as {}, but the model declares {}", name, info_str(info),
                            info_str(declared)));
    if (declared.has_shape && info.has_shape && info.dim_names.empty()) info.dim_names = declared.dim_names;
  }
  g.values[name] = std::move(info);
}

void check_opset(const Graph& g, const Node& node) {
  if (g.opset < kMinOpset || g.opset > kMaxOpset)
    node.fail(fmt::format("the model's opset {} of the default ONNX domain is not supported (npuforge reads "
                          "opsets {} to {})", g.opset, kMinOpset, kMaxOpset));
}

bool all_inputs_constant(const Graph& g, const Node& node) {
  for (const std::string& in : node.inputs)
    if (!in.empty() && !g.is_constant(in)) return false;
  return true;
}

// Values an op's infer returned for every output, or nothing.
std::optional<std::vector<Tensor>> values_from_infer(const Node& node, InferResult& r) {
  std::vector<Tensor> out(node.outputs.size());
  for (size_t i = 0; i < node.outputs.size(); ++i) {
    if (node.outputs[i].empty()) continue;
    if (i >= r.values.size() || !r.values[i]) return std::nullopt;
    out[i] = std::move(*r.values[i]);
  }
  return out;
}

// Turns a node's computed outputs into graph constants (checked against its inference).
void fold(Graph& g, const Node& node, std::vector<Tensor> outputs) {
  for (size_t i = 0; i < node.outputs.size(); ++i) {
    const std::string& name = node.outputs[i];
    if (name.empty()) continue;
    if (i >= outputs.size()) node.fail(fmt::format("computed no value for output {} ('{}')", i, name));
    const ValueInfo actual = known(outputs[i].dtype(), outputs[i].shape());
    if (!compatible(g.values.at(name), actual))
      node.fail(fmt::format("computed output '{}' as {}, but its shape inference said {}", name, info_str(actual),
                            info_str(g.values.at(name))));
    g.values[name] = actual;
    g.constants[name] = std::move(outputs[i]);
  }
}

}  // namespace

void infer_shapes(Graph& g, const InferOptions& options) {
  const OpRegistry& ops = options.ops ? *options.ops : builtin_ops();
  for (const auto& [name, t] : g.constants) {
    auto it = g.values.find(name);
    if (it != g.values.end() && is_graph_output(g, name) && !compatible(it->second, known(t.dtype(), t.shape())))
      throw Error(fmt::format("graph output '{}' is a constant of {} {}, but the model declares {}", name,
                              dtype_name(t.dtype()), shape_str(t.shape()), info_str(it->second)));
    g.values[name] = known(t.dtype(), t.shape());
  }
  remove_unused(g);  // an unsupported op nothing reads is no reason to fail
  std::vector<Node> kept;
  kept.reserve(g.nodes.size());
  for (Node& node : g.nodes) {
    check_opset(g, node);
    const OpDef& def = op_for(node, g.opset, ops);
    if (!def.infer) node.fail("has no shape inference in npuforge");
    InferContext ctx{.node = node, .opset = g.opset, .inputs = {}, .constants = {}};
    for (const std::string& in : node.inputs) {
      if (in.empty()) {
        ctx.inputs.push_back(nullptr);
        ctx.constants.push_back(nullptr);
        continue;
      }
      const ValueInfo* info = g.find_value(in);
      if (!info) node.fail(fmt::format("input '{}' has no known type (it is computed after this node?)", in));
      ctx.inputs.push_back(info);
      ctx.constants.push_back(g.find_constant(in));
    }
    InferResult result = def.infer(ctx);
    for (size_t i = 0; i < node.outputs.size(); ++i) {
      if (node.outputs[i].empty()) continue;
      if (i >= result.outputs.size())
        node.fail(fmt::format("output {} ('{}') is not supported by npuforge", i, node.outputs[i]));
      record(g, node, node.outputs[i], result.outputs[i]);
    }
    if (auto values = values_from_infer(node, result)) {
      fold(g, node, std::move(*values));
      continue;
    }
    const bool keep = std::find(options.keep_ops.begin(), options.keep_ops.end(), node.op_type) != options.keep_ops.end();
    if (options.fold_constants && !keep && def.run && all_inputs_constant(g, node)) {
      RunContext run{.node = node, .opset = g.opset, .inputs = {}};
      for (const std::string& in : node.inputs) run.inputs.push_back(in.empty() ? nullptr : g.find_constant(in));
      fold(g, node, def.run(run));
      continue;
    }
    kept.push_back(std::move(node));
  }
  g.nodes = std::move(kept);
  remove_unused(g);
}

void remove_unused(Graph& g) {
  std::set<std::string, std::less<>> needed(g.outputs.begin(), g.outputs.end());
  std::vector<bool> live(g.nodes.size(), false);
  for (size_t k = g.nodes.size(); k-- > 0;) {
    const Node& n = g.nodes[k];
    for (const std::string& out : n.outputs) live[k] = live[k] || (!out.empty() && needed.count(out));
    if (!live[k]) continue;
    for (const std::string& in : n.inputs)
      if (!in.empty()) needed.insert(in);
  }
  std::vector<Node> nodes;
  std::set<std::string, std::less<>> produced(g.inputs.begin(), g.inputs.end());
  for (size_t k = 0; k < g.nodes.size(); ++k) {
    if (!live[k]) continue;
    for (const std::string& out : g.nodes[k].outputs) produced.insert(out);
    nodes.push_back(std::move(g.nodes[k]));
  }
  g.nodes = std::move(nodes);
  std::erase_if(g.constants, [&](const auto& kv) { return !needed.count(kv.first); });
  std::erase_if(g.values, [&](const auto& kv) {
    return !produced.count(kv.first) && !g.constants.count(kv.first) && !is_graph_output(g, kv.first);
  });
}

}  // namespace npuforge::model
