#include "compiler/graph_edit.h"

#include <algorithm>

#include <fmt/format.h>

#include "util/error.h"

namespace npuforge::compiler {

std::vector<size_t> readers(const model::Graph& g, std::string_view value) {
  std::vector<size_t> out;
  for (size_t i = 0; i < g.nodes.size(); ++i)
    if (std::find(g.nodes[i].inputs.begin(), g.nodes[i].inputs.end(), value) != g.nodes[i].inputs.end())
      out.push_back(i);
  return out;
}

bool is_graph_output(const model::Graph& g, std::string_view value) {
  return std::find(g.outputs.begin(), g.outputs.end(), value) != g.outputs.end();
}

bool is_graph_input(const model::Graph& g, std::string_view value) {
  return std::find(g.inputs.begin(), g.inputs.end(), value) != g.inputs.end();
}

void replace_reads(model::Graph& g, std::string_view from, const std::string& to) {
  for (model::Node& n : g.nodes)
    for (std::string& in : n.inputs)
      if (in == from) in = to;
  for (std::string& out : g.outputs)
    if (out == from) out = to;
}

void rename_value(model::Graph& g, std::string_view from, const std::string& to) {
  for (model::Node& n : g.nodes)
    for (std::string& out : n.outputs)
      if (out == from) out = to;
  if (auto it = g.values.find(from); it != g.values.end()) {
    model::ValueInfo info = it->second;
    g.values.erase(it);
    g.values[to] = info;
  }
  replace_reads(g, from, to);
}

std::string fresh_name(const model::Graph& g, const std::string& base) {
  const auto taken = [&](const std::string& n) {
    if (g.values.count(n) || g.constants.count(n)) return true;
    for (const model::Node& node : g.nodes)
      if (std::find(node.outputs.begin(), node.outputs.end(), n) != node.outputs.end()) return true;
    return false;
  };
  if (!taken(base)) return base;
  for (int i = 1;; ++i) {
    std::string n = fmt::format("{}~{}", base, i);
    if (!taken(n)) return n;
  }
}

const model::Shape& value_shape(const model::Graph& g, std::string_view value) {
  if (const model::Tensor* c = g.find_constant(value)) return c->shape();
  const model::ValueInfo* v = g.find_value(value);
  if (!v || !v->shape_known())
    throw Error(fmt::format("{}: value '{}' has no known shape (the graph must be shape-inferred)", g.source, value));
  return v->shape;
}

bool varies_only_along(const model::Shape& shape, size_t rank, size_t axis) {
  if (shape.size() > rank) return false;
  const size_t offset = rank - shape.size();
  for (size_t d = 0; d < shape.size(); ++d)
    if (shape[d] != 1 && d + offset != axis) return false;
  return true;
}

model::Tensor to_float(const model::Tensor& t) {
  model::Tensor out(model::DType::kFloat32, t.shape());
  auto v = out.values<float>();
  for (int64_t i = 0; i < t.numel(); ++i) v[i] = static_cast<float>(t.real_at(i));
  return out;
}

void erase_nodes(model::Graph& g, const std::vector<bool>& dead) {
  std::vector<model::Node> kept;
  kept.reserve(g.nodes.size());
  for (size_t i = 0; i < g.nodes.size(); ++i)
    if (!dead[i]) kept.push_back(std::move(g.nodes[i]));
  g.nodes = std::move(kept);
}

}  // namespace npuforge::compiler
