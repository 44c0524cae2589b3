#include "model/subgraph.h"

#include <algorithm>
#include <set>

#include <fmt/core.h>

#include "util/error.h"

namespace npuforge::model {

Graph extract_subgraph(const Graph& graph, std::vector<size_t> indices) {
  std::sort(indices.begin(), indices.end());
  indices.erase(std::unique(indices.begin(), indices.end()), indices.end());
  Graph sub;
  sub.source = graph.source;
  sub.name = graph.name;
  sub.opset = graph.opset;
  std::set<std::string, std::less<>> produced, chosen_readers;
  std::vector<bool> chosen(graph.nodes.size(), false);
  for (size_t i : indices) {
    if (i >= graph.nodes.size())
      throw Error(fmt::format("{}: node index {} is out of range ({} nodes)", graph.source, i, graph.nodes.size()));
    chosen[i] = true;
  }
  const auto copy_info = [&](const std::string& name) {
    if (const ValueInfo* v = graph.find_value(name)) sub.values[name] = *v;
  };
  for (size_t i : indices) {
    const Node& n = graph.nodes[i];
    for (const std::string& in : n.inputs) {
      if (in.empty() || produced.count(in)) continue;
      if (const Tensor* c = graph.find_constant(in)) {
        sub.constants.emplace(in, *c);
      } else if (std::find(sub.inputs.begin(), sub.inputs.end(), in) == sub.inputs.end()) {
        sub.inputs.push_back(in);
      }
      copy_info(in);
    }
    for (const std::string& out : n.outputs)
      if (!out.empty()) {
        produced.insert(out);
        copy_info(out);
      }
    sub.nodes.push_back(n);
  }
  // Outputs: produced here and read by a node outside, or a graph output; in node order.
  std::set<std::string, std::less<>> read_outside(graph.outputs.begin(), graph.outputs.end());
  for (size_t i = 0; i < graph.nodes.size(); ++i)
    if (!chosen[i])
      for (const std::string& in : graph.nodes[i].inputs) read_outside.insert(in);
  for (const Node& n : sub.nodes)
    for (const std::string& out : n.outputs)
      if (!out.empty() && read_outside.count(out)) sub.outputs.push_back(out);
  return sub;
}

}  // namespace npuforge::model
