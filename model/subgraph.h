#pragma once
// A run of a graph's nodes as a graph of its own: what a compiler's CPU-fallback segment is,
// and how one node is benchmarked alone.
#include <cstddef>
#include <vector>

#include "model/ir.h"

namespace npuforge::model {

// The nodes at `indices` (positions in graph.nodes, kept in graph order) with everything
// they need: inputs are the values they read that none of them produces and that are not
// constants; constants they read are copied; outputs are the values they produce that a
// node outside reads or that are graph outputs. ValueInfos are copied from the graph (which
// should be shape-inferred). An index out of range is an npuforge::Error.
Graph extract_subgraph(const Graph& graph, std::vector<size_t> indices);

}  // namespace npuforge::model
