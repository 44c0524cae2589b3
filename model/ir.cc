#include "model/ir.h"

#include <deque>
#include <set>
#include <unordered_map>

#include <fmt/core.h>

#include "util/error.h"

namespace npuforge::model {
namespace {

template <class T>
const T* get_attr(const Node& node, std::string_view name, std::string_view expected) {
  auto it = node.attributes.find(name);
  if (it == node.attributes.end()) return nullptr;
  const T* v = std::get_if<T>(&it->second.value);
  if (!v) node.fail(fmt::format("attribute '{}' must be {}", name, expected));
  return v;
}

template <class T>
T attr_or(const Node& node, std::string_view name, const std::optional<T>& fallback, std::string_view expected) {
  if (const T* v = get_attr<T>(node, name, expected)) return *v;
  if (!fallback) node.fail(fmt::format("missing required attribute '{}'", name));
  return *fallback;
}

}  // namespace

std::string Node::describe() const { return fmt::format("node '{}' ({})", name, op_type); }

void Node::fail(std::string_view reason) const { throw Error(fmt::format("{}: {}", describe(), reason)); }

int64_t Node::attr_int(std::string_view name, std::optional<int64_t> fallback) const {
  return attr_or<int64_t>(*this, name, fallback, "an integer");
}

float Node::attr_float(std::string_view name, std::optional<float> fallback) const {
  // Some exporters store a float attribute with an integral value as an int.
  auto it = attributes.find(name);
  if (it != attributes.end())
    if (const int64_t* i = std::get_if<int64_t>(&it->second.value)) return static_cast<float>(*i);
  return attr_or<float>(*this, name, fallback, "a float");
}

std::string Node::attr_string(std::string_view name, std::optional<std::string> fallback) const {
  return attr_or<std::string>(*this, name, fallback, "a string");
}

std::vector<int64_t> Node::attr_ints(std::string_view name, std::optional<std::vector<int64_t>> fallback) const {
  return attr_or<std::vector<int64_t>>(*this, name, fallback, "a list of integers");
}

std::vector<float> Node::attr_floats(std::string_view name, std::optional<std::vector<float>> fallback) const {
  return attr_or<std::vector<float>>(*this, name, fallback, "a list of floats");
}

const Tensor& Node::attr_tensor(std::string_view name) const {
  const Tensor* t = get_attr<Tensor>(*this, name, "a tensor");
  if (!t) fail(fmt::format("missing required attribute '{}'", name));
  return *t;
}

const std::string& Node::input(size_t i) const {
  static const std::string kNone;
  return i < inputs.size() ? inputs[i] : kNone;
}

bool ValueInfo::shape_known() const {
  if (!has_shape) return false;
  for (int64_t d : shape)
    if (d < 0) return false;
  return true;
}

const ValueInfo* Graph::find_value(std::string_view name) const {
  auto it = values.find(name);
  return it == values.end() ? nullptr : &it->second;
}

const Tensor* Graph::find_constant(std::string_view name) const {
  auto it = constants.find(name);
  return it == constants.end() ? nullptr : &it->second;
}

std::string with_source(const Graph& graph, std::string_view message) {
  if (graph.source.empty() || message.starts_with(graph.source)) return std::string(message);
  return fmt::format("{}: {}", graph.source, message);
}

void sort_topologically(Graph& graph) {
  std::unordered_map<std::string, size_t> producer;
  for (size_t i = 0; i < graph.nodes.size(); ++i)
    for (const std::string& out : graph.nodes[i].outputs)
      if (!out.empty() && !producer.emplace(out, i).second)
        graph.nodes[i].fail(fmt::format("output '{}' is also produced by {}", out,
                                        graph.nodes[producer[out]].describe()));
  std::set<std::string, std::less<>> available(graph.inputs.begin(), graph.inputs.end());
  for (const auto& [name, t] : graph.constants) available.insert(name);
  std::vector<size_t> missing(graph.nodes.size(), 0);
  std::vector<std::vector<size_t>> readers(graph.nodes.size());
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    for (const std::string& in : graph.nodes[i].inputs) {
      if (in.empty() || available.count(in)) continue;
      auto p = producer.find(in);
      if (p == producer.end())
        graph.nodes[i].fail(fmt::format("input '{}' is not a graph input, an initializer or any node's output", in));
      ++missing[i];
      readers[p->second].push_back(i);
    }
  }
  // Kahn's algorithm, always taking the lowest ready index: the file's order when valid.
  std::set<size_t> ready;
  for (size_t i = 0; i < graph.nodes.size(); ++i)
    if (missing[i] == 0) ready.insert(i);
  std::vector<Node> sorted;
  sorted.reserve(graph.nodes.size());
  std::vector<bool> done(graph.nodes.size(), false);
  while (!ready.empty()) {
    const size_t i = *ready.begin();
    ready.erase(ready.begin());
    done[i] = true;
    for (size_t r : readers[i])
      if (--missing[r] == 0) ready.insert(r);
    sorted.push_back(std::move(graph.nodes[i]));
  }
  if (sorted.size() != graph.nodes.size()) {
    for (size_t i = 0; i < graph.nodes.size(); ++i)
      if (!done[i]) graph.nodes[i].fail("is on a cycle of the graph");
  }
  graph.nodes = std::move(sorted);
}

}  // namespace npuforge::model
