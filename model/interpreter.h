#pragma once
// The reference interpreter: runs a shape-inferred graph on named input tensors through each
// op's OpDef::run, in the graph's (topological) order. A value is freed right after its last
// consumer has run (reference counting, docs/compiler.md section 10), so memory follows the live
// activations, not the graph.
#include <functional>
#include <map>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "model/ir.h"
#include "model/op.h"

namespace npuforge::model {

using TensorMap = std::map<std::string, Tensor, std::less<>>;

struct RunOptions {
  // Return every value computed (graph inputs and every node output), not only the graph
  // outputs: what a compiler calibrating activations, or a debugger, wants.
  bool keep_intermediates = false;
  // Called after each node with its outputs (same order as node.outputs; an omitted optional
  // output is an empty tensor). Lets a caller collect statistics without keeping the values.
  std::function<void(const Node& node, std::span<const Tensor> outputs)> on_node;
};

struct RunStats {
  size_t peak_live_bytes = 0;  // largest sum of live activation bytes (constants excluded)
};

class Interpreter {
 public:
  // Looks every node's op up now, so an unsupported node is an error before anything runs.
  // `graph` must outlive the interpreter; `ops` nullptr means builtin_ops().
  explicit Interpreter(const Graph& graph, const OpRegistry* ops = nullptr);
  Interpreter(Graph&&, const OpRegistry* = nullptr) = delete;  // would dangle

  // `inputs` holds one tensor per graph input, of its dtype and (where known) its shape;
  // anything else is an npuforge::Error naming the input. Returns the graph outputs (plus
  // every intermediate with keep_intermediates).
  TensorMap run(TensorMap inputs, const RunOptions& options = {}, RunStats* stats = nullptr) const;

  const Graph& graph() const { return graph_; }

 private:
  void prepare(const OpRegistry& registry);
  TensorMap run_nodes(TensorMap inputs, const RunOptions& options, RunStats* stats) const;
  void check_inputs(const TensorMap& inputs) const;
  void check_output(const Node& node, const std::string& name, const Tensor& value) const;

  const Graph& graph_;
  std::vector<const OpDef*> defs_;                       // one per node
  std::unordered_map<std::string, size_t> last_use_;     // value -> index of its last reader
};

// Shorthand for a single run.
TensorMap run_graph(const Graph& graph, TensorMap inputs, const RunOptions& options = {});

}  // namespace npuforge::model
