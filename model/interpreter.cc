#include "model/interpreter.h"

#include <algorithm>

#include <fmt/core.h>

#include "util/error.h"

namespace npuforge::model {
namespace {

bool is_graph_output(const Graph& g, std::string_view name) {
  return std::find(g.outputs.begin(), g.outputs.end(), name) != g.outputs.end();
}

bool shape_fits(const ValueInfo& info, const Shape& shape) {
  if (!info.has_shape) return true;
  if (info.shape.size() != shape.size()) return false;
  for (size_t i = 0; i < shape.size(); ++i)
    if (info.shape[i] >= 0 && info.shape[i] != shape[i]) return false;
  return true;
}

std::string expected_str(const ValueInfo& info) {
  return fmt::format("{} {}", dtype_name(info.dtype), info.has_shape ? shape_str(info.shape) : "(any shape)");
}

}  // namespace

Interpreter::Interpreter(const Graph& graph, const OpRegistry* ops) : graph_(graph) {
  const OpRegistry& registry = ops ? *ops : builtin_ops();
  defs_.reserve(graph.nodes.size());
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const Node& node = graph.nodes[i];
    const OpDef& def = op_for(node, graph.opset, registry);
    if (!def.run) node.fail("has no reference implementation in npuforge");
    defs_.push_back(&def);
    for (const std::string& in : node.inputs)
      if (!in.empty()) last_use_[in] = i;
    for (const std::string& out : node.outputs)
      if (!out.empty() && !last_use_.count(out)) last_use_[out] = i;  // never read: freed at once
  }
}

void Interpreter::check_inputs(const TensorMap& inputs) const {
  for (const auto& [name, t] : inputs) {
    if (std::find(graph_.inputs.begin(), graph_.inputs.end(), name) != graph_.inputs.end()) continue;
    std::string list;
    for (const std::string& in : graph_.inputs) list += fmt::format("{}'{}'", list.empty() ? "" : ", ", in);
    throw Error(fmt::format("{}: '{}' is not an input of the model (its inputs: {})", graph_.source, name,
                            list.empty() ? "none" : list));
  }
  for (const std::string& name : graph_.inputs) {
    auto it = inputs.find(name);
    if (it == inputs.end()) throw Error(fmt::format("{}: no value given for input '{}'", graph_.source, name));
    const ValueInfo* info = graph_.find_value(name);
    if (!info) continue;
    const Tensor& t = it->second;
    if (t.dtype() != info->dtype || !shape_fits(*info, t.shape()))
      throw Error(fmt::format("{}: input '{}' is {} {}, the model expects {}", graph_.source, name,
                              dtype_name(t.dtype()), shape_str(t.shape()), expected_str(*info)));
  }
}

// Catches an op whose computation disagrees with its own shape inference.
void Interpreter::check_output(const Node& node, const std::string& name, const Tensor& value) const {
  const ValueInfo* info = graph_.find_value(name);
  if (!info) return;
  if (value.dtype() != info->dtype || !shape_fits(*info, value.shape()))
    node.fail(fmt::format("computed output '{}' as {} {}, but shape inference said {}", name,
                          dtype_name(value.dtype()), shape_str(value.shape()), expected_str(*info)));
}

TensorMap Interpreter::run(TensorMap inputs, const RunOptions& options, RunStats* stats) const {
  check_inputs(inputs);
  std::unordered_map<std::string, Tensor> live;
  size_t live_bytes = 0, peak = 0;
  for (auto& [name, t] : inputs) {
    live_bytes += t.byte_size();
    live.emplace(name, std::move(t));
  }
  peak = live_bytes;
  const auto value_of = [&](const Node& node, const std::string& name) -> const Tensor* {
    if (name.empty()) return nullptr;
    if (const Tensor* c = graph_.find_constant(name)) return c;
    auto it = live.find(name);
    if (it == live.end()) node.fail(fmt::format("input '{}' has not been computed before this node", name));
    return &it->second;
  };
  for (size_t i = 0; i < graph_.nodes.size(); ++i) {
    const Node& node = graph_.nodes[i];
    RunContext ctx{.node = node, .opset = graph_.opset, .inputs = {}};
    for (const std::string& in : node.inputs) ctx.inputs.push_back(value_of(node, in));
    std::vector<Tensor> outputs = defs_[i]->run(ctx);
    for (size_t k = 0; k < node.outputs.size(); ++k) {
      if (node.outputs[k].empty()) continue;
      if (k >= outputs.size()) node.fail(fmt::format("computed no value for output {} ('{}')", k, node.outputs[k]));
      check_output(node, node.outputs[k], outputs[k]);
    }
    if (options.on_node) options.on_node(node, outputs);
    for (size_t k = 0; k < node.outputs.size() && k < outputs.size(); ++k) {
      if (node.outputs[k].empty()) continue;
      live_bytes += outputs[k].byte_size();
      live[node.outputs[k]] = std::move(outputs[k]);
    }
    peak = std::max(peak, live_bytes);
    if (options.keep_intermediates) continue;
    // Free what this node read (or wrote) for the last time; graph outputs stay.
    const auto release = [&](const std::string& name) {
      if (name.empty() || is_graph_output(graph_, name)) return;
      auto use = last_use_.find(name);
      if (use == last_use_.end() || use->second != i) return;
      auto it = live.find(name);
      if (it == live.end()) return;
      live_bytes -= it->second.byte_size();
      live.erase(it);
    };
    for (const std::string& in : node.inputs) release(in);
    for (const std::string& out : node.outputs) release(out);
  }
  if (stats) stats->peak_live_bytes = peak;
  TensorMap result;
  if (options.keep_intermediates)
    for (auto& [name, t] : live) result.emplace(name, std::move(t));
  for (const std::string& name : graph_.outputs) {
    if (result.count(name)) continue;
    if (const Tensor* c = graph_.find_constant(name)) {
      result.emplace(name, *c);
      continue;
    }
    auto it = live.find(name);
    if (it == live.end()) throw Error(fmt::format("{}: graph output '{}' was not computed", graph_.source, name));
    result.emplace(name, std::move(it->second));
  }
  return result;
}

TensorMap run_graph(const Graph& graph, TensorMap inputs, const RunOptions& options) {
  return Interpreter(graph).run(std::move(inputs), options);
}

}  // namespace npuforge::model
