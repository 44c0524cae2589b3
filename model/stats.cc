#include "model/stats.h"

#include <set>

#include "model/tensor.h"

namespace npuforge::model {
namespace {

const ValueInfo* known_value(const Graph& g, const std::string& name) {
  if (name.empty()) return nullptr;
  const ValueInfo* v = g.find_value(name);
  return v && v->shape_known() ? v : nullptr;
}

int64_t product(const Shape& s, size_t from, size_t to) {
  int64_t p = 1;
  for (size_t i = from; i < to && i < s.size(); ++i) p *= s[i];
  return p;
}

}  // namespace

int64_t node_macs(const Graph& g, const Node& n) {
  if (!n.domain.empty() || n.outputs.empty()) return 0;
  const ValueInfo* out = known_value(g, n.outputs[0]);
  if (!out) return 0;
  const std::string& op = n.op_type;
  // Conv-like: each output element reads (Cin / group) x kernel elements of the weight.
  if (op == "Conv" || op == "ConvInteger" || op == "QLinearConv") {
    const ValueInfo* w = known_value(g, n.input(op == "QLinearConv" ? 3 : 1));
    if (!w || w->shape.size() < 2) return 0;
    return element_count(out->shape) * product(w->shape, 1, w->shape.size());
  }
  if (op == "ConvTranspose") {
    // Each input element is scattered to (Cout / group) x kernel outputs.
    const ValueInfo* x = known_value(g, n.input(0));
    const ValueInfo* w = known_value(g, n.input(1));
    if (!x || !w || w->shape.size() < 2) return 0;
    return element_count(x->shape) * product(w->shape, 1, w->shape.size());
  }
  if (op == "Gemm" || op == "MatMul" || op == "MatMulInteger" || op == "QLinearMatMul") {
    const ValueInfo* a = known_value(g, n.input(0));
    if (!a || a->shape.empty()) return 0;
    int64_t k = a->shape.back();
    if (op == "Gemm" && n.has_attr("transA") && n.attr_int("transA") != 0 && a->shape.size() == 2) k = a->shape[0];
    return element_count(out->shape) * k;
  }
  return 0;
}

GraphStats graph_stats(const Graph& g) {
  GraphStats s;
  std::set<std::string, std::less<>> params, activations(g.inputs.begin(), g.inputs.end());
  for (const Node& n : g.nodes) {
    ++s.op_counts[n.domain.empty() ? n.op_type : n.domain + "." + n.op_type];
    for (const std::string& in : n.inputs)
      if (!in.empty() && g.is_constant(in)) params.insert(in);
    for (const std::string& out : n.outputs)
      if (!out.empty()) activations.insert(out);
    const int64_t macs = node_macs(g, n);
    s.macs += macs;
    if ((n.op_type == "Conv" || n.op_type == "QLinearConv" || n.op_type == "ConvInteger") && macs > s.largest_conv_macs) {
      s.largest_conv = n.name;
      s.largest_conv_macs = macs;
    }
  }
  for (const std::string& p : params) {
    const Tensor& t = *g.find_constant(p);
    s.parameter_count += t.numel();
    s.parameter_bytes += static_cast<int64_t>(t.byte_size());
  }
  for (const std::string& a : activations) {
    const ValueInfo* v = known_value(g, a);
    if (!v) continue;
    const int64_t bytes = element_count(v->shape) * static_cast<int64_t>(dtype_size(v->dtype));
    ++s.activation_count;
    s.activation_bytes += bytes;
    if (bytes > s.largest_activation_bytes) {
      s.largest_activation = a;
      s.largest_activation_bytes = bytes;
    }
  }
  return s;
}

}  // namespace npuforge::model
