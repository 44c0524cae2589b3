#pragma once
// Shape inference and constant folding over a topologically sorted graph.
//
// Nodes are visited in order; each op's `infer` gets its inputs' ValueInfos and the inputs
// known at compile time, and its outputs are recorded in graph.values. A node whose inputs
// are all constants is evaluated now (OpDef::run) and replaced by constants, and so is a node
// whose `infer` already returns its values (Shape, Size): torch's Shape -> Gather ->
// Unsqueeze -> Concat -> Reshape chains fold away. Unsupported ops, opsets, attributes,
// dtypes or ranks are npuforge::Errors naming the node, the op and the reason.
#include <cstdint>
#include <string>
#include <vector>

#include "model/ir.h"
#include "model/op.h"

namespace npuforge::model {

// Versions of the default ONNX domain npuforge reads.
inline constexpr int64_t kMinOpset = 7;
inline constexpr int64_t kMaxOpset = 17;

struct InferOptions {
  const OpRegistry* ops = nullptr;  // nullptr: builtin_ops()
  bool fold_constants = true;
  // Ops never folded even with constant inputs: a compiler that takes a pre-quantized
  // model's int8 weights as they are keeps DequantizeLinear, for instance.
  std::vector<std::string> keep_ops;
};

// Fills graph.values for every node output and folds constants (see above). Graph outputs
// whose type the file declared are checked against the inferred ones.
void infer_shapes(Graph& graph, const InferOptions& options = {});

// Drops nodes none of whose outputs reach a graph output, then constants and values that
// nothing reads any more. Graph inputs stay (they are the model's interface).
void remove_unused(Graph& graph);

}  // namespace npuforge::model
