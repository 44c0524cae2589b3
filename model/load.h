#pragma once
// Loading a model file of either format into a shape-inferred graph, with the
// `--input-shape name=1x3x224x224` overrides for dynamic input dimensions.
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <utility>

#include "model/infer.h"
#include "model/ir.h"

namespace npuforge::model {

using InputShapes = std::map<std::string, Shape, std::less<>>;

// "name=1x3x224x224" (dims separated by 'x' or ','; "name=scalar" for rank 0). The name is
// everything before the last '='. Malformed text is an error quoting it.
std::pair<std::string, Shape> parse_input_shape(std::string_view text);

// Fixes the unknown dimensions of graph inputs. An unknown input name, a rank that differs
// from the model's, or a dimension the model already fixes to another value is an error.
void apply_input_shapes(Graph& graph, const InputShapes& shapes);

// An error naming the first input whose shape is not fully known, with the fix.
void require_known_inputs(const Graph& graph);

// Imports .onnx or .yaml/.yml (by extension) without inference.
Graph import_model(const std::filesystem::path& path);

struct LoadOptions {
  InputShapes input_shapes;
  InferOptions infer;
};

// apply_input_shapes, require_known_inputs, infer_shapes on an imported graph. Errors from
// the graph passes are prefixed with the graph's source file.
void prepare_graph(Graph& graph, const LoadOptions& options = {});

// import_model, then prepare_graph.
Graph load_model(const std::filesystem::path& path, const LoadOptions& options = {});

}  // namespace npuforge::model
