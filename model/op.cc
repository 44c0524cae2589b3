#include "model/op.h"

#include <algorithm>

#include <fmt/core.h>

#include "model/op_families.h"
#include "util/error.h"

namespace npuforge::model {

const ValueInfo& InferContext::input(size_t i) const {
  if (!has_input(i)) node.fail(fmt::format("input {} is required", i));
  return *inputs[i];
}

const Tensor& RunContext::input(size_t i) const {
  if (!has_input(i)) node.fail(fmt::format("input {} is required", i));
  return *inputs[i];
}

void OpRegistry::add(const OpDef& def) { defs_.push_back(def); }

const OpDef* OpRegistry::find(std::string_view domain, std::string_view op_type) const {
  for (const OpDef& d : defs_)
    if (d.domain == domain && d.op_type == op_type) return &d;
  return nullptr;
}

const OpRegistry& builtin_ops() {
  // Immutable after construction (thread-safe static initialisation).
  static const OpRegistry registry = [] {
    OpRegistry r;
    register_elementwise_ops(r);
    register_shape_ops(r);
    register_conv_ops(r);
    register_conv_integer_ops(r);
    register_matmul_ops(r);
    register_matmul_integer_ops(r);
    register_pool_ops(r);
    register_norm_ops(r);
    register_reduce_ops(r);
    register_resize_ops(r);
    register_quant_ops(r);
    register_core_ops(r);  // last: a family's definition of the same op wins
    return r;
  }();
  return registry;
}

const OpDef& op_for(const Node& node, int64_t opset) { return op_for(node, opset, builtin_ops()); }

const OpDef& op_for(const Node& node, int64_t opset, const OpRegistry& registry) {
  const std::string_view domain = node.domain == "ai.onnx" ? std::string_view() : std::string_view(node.domain);
  const OpDef* def = registry.find(domain, node.op_type);
  if (!def) {
    node.fail(domain.empty() ? std::string("operator not supported by npuforge")
                             : fmt::format("operator of domain '{}' not supported by npuforge", domain));
  }
  if (domain.empty() && (opset < def->min_opset || opset > def->max_opset))
    node.fail(fmt::format("opset {} not supported for this operator (supported: {} to {})", opset,
                          def->min_opset, def->max_opset));
  return *def;
}

Shape broadcast_shapes(const Node& node, const Shape& a, const Shape& b) {
  const size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    const int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da == db) out[i] = da;
    else if (da == 1) out[i] = db;
    else if (db == 1) out[i] = da;
    else if (da == kUnknownDim) out[i] = db;
    else if (db == kUnknownDim) out[i] = da;
    else
      node.fail(fmt::format("shapes {} and {} do not broadcast", shape_str(a), shape_str(b)));
  }
  return out;
}

int64_t normalize_axis(const Node& node, int64_t axis, int64_t rank) {
  const int64_t a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= rank) node.fail(fmt::format("axis {} is out of range for rank {}", axis, rank));
  return a;
}

ValueInfo known(DType dtype, Shape shape) {
  ValueInfo v;
  v.dtype = dtype;
  v.has_shape = true;
  v.shape = std::move(shape);
  return v;
}

}  // namespace npuforge::model
