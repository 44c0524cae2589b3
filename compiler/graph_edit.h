#pragma once
// Small edits of a model::Graph shared by the float passes (internal to compiler/).
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "model/ir.h"

namespace npuforge::compiler {

// Indices of the nodes reading `value` (once per node).
std::vector<size_t> readers(const model::Graph& g, std::string_view value);
bool is_graph_output(const model::Graph& g, std::string_view value);
bool is_graph_input(const model::Graph& g, std::string_view value);
// Every read of `from` (node inputs, graph outputs) becomes a read of `to`.
void replace_reads(model::Graph& g, std::string_view from, const std::string& to);
// Renames a node output and every read of it.
void rename_value(model::Graph& g, std::string_view from, const std::string& to);
// A value name not used yet, "<base>" or "<base>~N".
std::string fresh_name(const model::Graph& g, const std::string& base);
// The inferred shape of a value; an error naming it when unknown.
const model::Shape& value_shape(const model::Graph& g, std::string_view value);
// True when `shape`, broadcast against an output of rank `rank`, varies only along `axis`
// of that output (every other dimension 1): a per-channel (or scalar) constant.
bool varies_only_along(const model::Shape& shape, size_t rank, size_t axis);
// A float32 copy of any numeric tensor.
model::Tensor to_float(const model::Tensor& t);
// Erases the nodes marked in `dead` (same size as g.nodes).
void erase_nodes(model::Graph& g, const std::vector<bool>& dead);

}  // namespace npuforge::compiler
