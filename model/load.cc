#include "model/load.h"

#include <algorithm>
#include <charconv>

#include <fmt/core.h>

#include "model/onnx_import.h"
#include "model/yaml_import.h"
#include "util/error.h"

namespace npuforge::model {
namespace {

std::string list_inputs(const Graph& g) {
  std::string s;
  for (const std::string& in : g.inputs) s += fmt::format("{}'{}'", s.empty() ? "" : ", ", in);
  return s.empty() ? "none" : s;
}

std::string with_source(const Graph& g, const std::string& message) {
  if (g.source.empty() || message.rfind(g.source, 0) == 0) return message;
  return fmt::format("{}: {}", g.source, message);
}

}  // namespace

std::pair<std::string, Shape> parse_input_shape(std::string_view text) {
  const size_t eq = text.rfind('=');
  const auto bad = [&](std::string_view why) {
    return Error(fmt::format("--input-shape '{}': {} (expected name=DIMS, e.g. x=1x3x224x224)", text, why));
  };
  if (eq == std::string_view::npos || eq == 0) throw bad("no name");
  std::string name(text.substr(0, eq));
  std::string_view dims = text.substr(eq + 1);
  Shape shape;
  if (dims == "scalar") return {name, shape};
  if (dims.empty()) throw bad("no dimensions");
  size_t pos = 0;
  while (pos <= dims.size()) {
    size_t end = dims.find_first_of("x,", pos);
    if (end == std::string_view::npos) end = dims.size();
    const std::string_view part = dims.substr(pos, end - pos);
    int64_t v = 0;
    const auto [ptr, ec] = std::from_chars(part.data(), part.data() + part.size(), v);
    if (part.empty() || ec != std::errc() || ptr != part.data() + part.size() || v < 0)
      throw bad(fmt::format("'{}' is not a non-negative dimension", part));
    shape.push_back(v);
    pos = end + 1;
  }
  return {name, shape};
}

void apply_input_shapes(Graph& graph, const InputShapes& shapes) {
  for (const auto& [name, shape] : shapes) {
    if (std::find(graph.inputs.begin(), graph.inputs.end(), name) == graph.inputs.end())
      throw Error(fmt::format("{}: --input-shape names '{}', which is not an input of the model (its inputs: {})",
                              graph.source, name, list_inputs(graph)));
    ValueInfo& info = graph.values[name];
    if (info.has_shape && info.shape.size() != shape.size())
      throw Error(fmt::format("{}: --input-shape {}={} has rank {}, but input '{}' has rank {} ({})", graph.source,
                              name, shape_str(shape), shape.size(), name, info.shape.size(), shape_str(info.shape)));
    for (size_t i = 0; info.has_shape && i < shape.size(); ++i)
      if (info.shape[i] >= 0 && info.shape[i] != shape[i])
        throw Error(fmt::format("{}: --input-shape {}={} changes dimension {} of input '{}', which the model fixes "
                                "to {} ({})", graph.source, name, shape_str(shape), i, name, info.shape[i],
                                shape_str(info.shape)));
    if (info.dim_names.size() != shape.size()) info.dim_names.assign(shape.size(), "");
    info.has_shape = true;
    info.shape = shape;
  }
}

void require_known_inputs(const Graph& graph) {
  for (const std::string& name : graph.inputs) {
    const ValueInfo* info = graph.find_value(name);
    if (info && info->shape_known()) continue;
    std::string shape = "unknown rank";
    if (info && info->has_shape) {
      shape.clear();
      for (size_t i = 0; i < info->shape.size(); ++i) {
        const std::string& param = i < info->dim_names.size() ? info->dim_names[i] : std::string();
        shape += (i ? "x" : "") + (info->shape[i] >= 0 ? std::to_string(info->shape[i]) : param.empty() ? "?" : param);
      }
    }
    throw Error(fmt::format("{}: input '{}' has a dimension that is not known ({}); fix it with --input-shape "
                            "{}=DIMS, e.g. {}=1x3x224x224", graph.source, name, shape, name, name));
  }
}

Graph import_model(const std::filesystem::path& path) {
  const std::string ext = path.extension().string();
  if (ext == ".onnx") return import_onnx_file(path);
  if (ext == ".yaml" || ext == ".yml") return import_yaml_file(path);
  throw Error(fmt::format("{}: unknown model format '{}' (expected .onnx, .yaml or .yml)", path.string(), ext));
}

void prepare_graph(Graph& g, const LoadOptions& options) {
  apply_input_shapes(g, options.input_shapes);
  require_known_inputs(g);
  try {
    infer_shapes(g, options.infer);
  } catch (const Error& e) {
    throw Error(with_source(g, e.what()));
  }
}

Graph load_model(const std::filesystem::path& path, const LoadOptions& options) {
  Graph g = import_model(path);
  prepare_graph(g, options);
  return g;
}

}  // namespace npuforge::model
