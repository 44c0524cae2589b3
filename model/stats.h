#pragma once
// What a user checks first about a model (`npuforge model-info`), and what the compiler's
// reports reuse: op histogram, parameters, activation sizes and multiply-accumulates.
#include <cstdint>
#include <map>
#include <string>

#include "model/ir.h"

namespace npuforge::model {

struct GraphStats {
  std::map<std::string, int64_t> op_counts;   // op_type (domain-qualified outside ai.onnx) -> nodes
  int64_t parameter_count = 0;                // elements of the constants nodes read
  int64_t parameter_bytes = 0;
  int64_t activation_count = 0;               // graph inputs and node outputs with known shapes
  int64_t activation_bytes = 0;               // their sum
  std::string largest_activation;             // name of the largest one
  int64_t largest_activation_bytes = 0;
  int64_t macs = 0;                           // Conv, ConvTranspose, Gemm, MatMul and their integer forms
  std::string largest_conv;                   // the Conv node with the most MACs ("" if none)
  int64_t largest_conv_macs = 0;
};

// Multiply-accumulates of one node from the inferred shapes; 0 for ops that have none or
// whose shapes are not known.
int64_t node_macs(const Graph& graph, const Node& node);

GraphStats graph_stats(const Graph& graph);

}  // namespace npuforge::model
