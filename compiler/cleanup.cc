#include "compiler/cleanup.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include <fmt/format.h>

#include "compiler/graph_edit.h"
#include "model/infer.h"
#include "util/error.h"

namespace npuforge::compiler {

namespace {

using model::Graph;
using model::Node;
using model::Tensor;

const Tensor* constant_input(const Graph& g, const Node& n, size_t i) {
  const std::string& name = n.input(i);
  return name.empty() ? nullptr : g.find_constant(name);
}

bool is_scalar_value(const Tensor* t, double v) {
  if (!t || t->numel() != 1) return false;
  return t->real_at(0) == v;
}

void move_range_hint(QuantHints* hints, const std::string& from, const std::string& to) {
  if (!hints) return;
  auto it = hints->ranges.find(from);
  if (it == hints->ranges.end()) return;
  if (!hints->ranges.count(to)) hints->ranges[to] = it->second;
  hints->ranges.erase(it);
}

// ---- no-ops ----

bool same_shape(const Graph& g, const std::string& a, const std::string& b) {
  const model::ValueInfo* va = g.find_value(a);
  const model::ValueInfo* vb = g.find_value(b);
  return va && vb && va->shape_known() && vb->shape_known() && va->shape == vb->shape && va->dtype == vb->dtype;
}

// The input a no-op node passes through unchanged, or nullopt.
std::optional<std::string> noop_source(const Graph& g, const Node& n) {
  if (n.outputs.empty() || n.outputs[0].empty() || n.inputs.empty() || n.input(0).empty()) return std::nullopt;
  const std::string& x = n.input(0);
  const std::string& y = n.outputs[0];
  for (size_t i = 1; i < n.outputs.size(); ++i)
    if (!n.outputs[i].empty() && (!readers(g, n.outputs[i]).empty() || is_graph_output(g, n.outputs[i])))
      return std::nullopt;  // a second output someone reads (Dropout's mask)
  const std::string& op = n.op_type;
  if (!n.domain.empty()) return std::nullopt;
  if (op == "Identity") return x;
  if (op == "Dropout") {
    const Tensor* training = constant_input(g, n, 2);
    if (n.input(2).empty() || (training && training->numel() == 1 && training->int_at(0) == 0)) return x;
    return std::nullopt;
  }
  // x op c with a scalar constant c that changes nothing (either operand order for Mul/Add).
  if (op == "Mul" || op == "Add") {
    const double unit = op == "Mul" ? 1.0 : 0.0;
    for (size_t i = 0; i < 2; ++i) {
      const std::string& v = n.input(1 - i);
      if (is_scalar_value(constant_input(g, n, i), unit) && !g.is_constant(v) && same_shape(g, v, y)) return v;
    }
    return std::nullopt;
  }
  if (!same_shape(g, x, y)) return std::nullopt;
  if (op == "Cast" || op == "Reshape" || op == "Flatten" || op == "Squeeze" || op == "Unsqueeze" || op == "Expand")
    return x;
  if (op == "Concat" && n.inputs.size() == 1) return x;
  if (op == "Transpose") {
    const auto perm = n.attr_ints("perm", std::vector<int64_t>{});
    for (size_t i = 0; i < perm.size(); ++i)
      if (perm[i] != static_cast<int64_t>(i)) return std::nullopt;
    return perm.empty() && value_shape(g, x).size() > 1 ? std::nullopt : std::optional<std::string>(x);
  }
  if (op == "Pad") {
    const Tensor* pads = constant_input(g, n, 1);
    std::vector<int64_t> p = pads ? pads->to_int64s() : n.attr_ints("pads", std::vector<int64_t>{});
    if (!pads && g.opset >= 11) return std::nullopt;
    for (int64_t v : p)
      if (v != 0) return std::nullopt;
    return x;
  }
  if ((op == "Div" && is_scalar_value(constant_input(g, n, 1), 1.0)) ||
      (op == "Sub" && is_scalar_value(constant_input(g, n, 1), 0.0)))
    return x;
  return std::nullopt;
}

bool remove_noops(Graph& g, CleanupReport& report, QuantHints* hints) {
  bool changed = false;
  std::vector<bool> dead(g.nodes.size(), false);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    const std::optional<std::string> src = noop_source(g, n);
    if (!src) continue;
    const std::string x = *src, y = n.outputs[0];
    if (is_graph_output(g, y)) {
      // Keep the model's output name: the producer of x writes y instead.
      if (is_graph_input(g, x) || g.is_constant(x) || is_graph_output(g, x)) continue;
      dead[i] = true;
      g.nodes[i].inputs.clear();  // so the rename leaves the dead node alone
      g.nodes[i].outputs.clear();
      rename_value(g, x, y);
      move_range_hint(hints, x, y);
    } else {
      dead[i] = true;
      g.nodes[i].outputs.clear();
      replace_reads(g, y, x);
      move_range_hint(hints, y, x);
    }
    report.removed_noops.push_back(n.name);
    changed = true;
  }
  erase_nodes(g, dead);
  return changed;
}

// ---- folds into Conv / Gemm ----

// A Conv or Gemm whose weights (and bias) are constants, seen as y[.., c] = W_c . x + b_c
// along its output-channel axis.
struct Affine {
  size_t node = 0;
  size_t channel_axis = 1;   // axis of the output that the channel runs along
  size_t weight_input = 1;   // which input holds the weights
  int64_t weight_axis = 0;   // axis of the weight tensor that is the output channel
  int64_t channels = 0;
  bool scale_only = false;   // MatMul: no bias to fold an addition into
};

std::optional<Affine> as_affine(const Graph& g, size_t i) {
  const Node& n = g.nodes[i];
  if (!n.domain.empty() || n.outputs.empty()) return std::nullopt;
  const Tensor* w = constant_input(g, n, 1);
  if (!w || w->dtype() != model::DType::kFloat32) return std::nullopt;
  if (!n.input(2).empty()) {
    const Tensor* b = constant_input(g, n, 2);
    if (!b || b->dtype() != model::DType::kFloat32) return std::nullopt;
  }
  if (n.op_type == "Conv") {
    if (w->rank() < 3) return std::nullopt;
    return Affine{i, 1, 1, 0, w->shape()[0]};
  }
  if (n.op_type == "MatMul") {
    // Rows of any rank: only scales fold (there is no bias input to take an Add).
    const model::ValueInfo* a = g.find_value(n.input(0));
    if (w->rank() != 2 || !a || !a->shape_known() || a->shape.size() < 2) return std::nullopt;
    Affine m{i, a->shape.size() - 1, 1, 1, w->shape()[1]};
    m.scale_only = true;
    return m;
  }
  if (n.op_type == "Gemm") {
    if (n.attr_int("transA", 0) != 0 || w->rank() != 2) return std::nullopt;
    const bool trans_b = n.attr_int("transB", 0) != 0;
    const int64_t nn = trans_b ? w->shape()[0] : w->shape()[1];
    if (!n.input(2).empty()) {
      // C must be per column (or scalar) for a per-column bias.
      if (!varies_only_along(g.find_constant(n.input(2))->shape(), 2, 1)) return std::nullopt;
    }
    return Affine{i, 1, 1, trans_b ? 0 : 1, nn};
  }
  return std::nullopt;
}

// y = x * mul + add per channel, for the node reading the affine op's output; nullopt when
// it is not such a node.
struct ChannelMap {
  std::vector<double> mul, add;
};

std::vector<double> per_channel(const Tensor& c, int64_t channels) {
  std::vector<double> v(static_cast<size_t>(channels));
  for (int64_t i = 0; i < channels; ++i) v[static_cast<size_t>(i)] = c.real_at(c.numel() == 1 ? 0 : i);
  return v;
}

std::optional<ChannelMap> channel_map(const Graph& g, const Node& n, const std::string& x, const Affine& a) {
  if (!n.domain.empty() || n.outputs.empty()) return std::nullopt;
  const size_t rank = value_shape(g, x).size();
  const int64_t c = a.channels;
  ChannelMap m{std::vector<double>(static_cast<size_t>(c), 1.0), std::vector<double>(static_cast<size_t>(c), 0.0)};
  if (n.op_type == "BatchNormalization") {
    if (n.input(0) != x || rank < 2 || a.channel_axis != 1) return std::nullopt;
    if (g.opset < 9 && n.attr_int("spatial", 1) == 0) return std::nullopt;
    if (n.attr_int("training_mode", 0) != 0) return std::nullopt;
    for (size_t i = 1; i < n.outputs.size(); ++i)
      if (!n.outputs[i].empty()) return std::nullopt;
    const Tensor* t[4];
    for (size_t i = 0; i < 4; ++i) {
      t[i] = constant_input(g, n, i + 1);
      if (!t[i] || t[i]->numel() != c) return std::nullopt;
    }
    const double eps = n.attr_float("epsilon", 1e-5f);
    for (int64_t i = 0; i < c; ++i) {
      const double s = t[0]->real_at(i) / std::sqrt(t[3]->real_at(i) + eps);
      m.mul[static_cast<size_t>(i)] = s;
      m.add[static_cast<size_t>(i)] = t[1]->real_at(i) - t[2]->real_at(i) * s;
    }
    return m;
  }
  const std::string& op = n.op_type;
  if (op != "Mul" && op != "Div" && op != "Add" && op != "Sub") return std::nullopt;
  if (n.inputs.size() != 2) return std::nullopt;
  const bool x_first = n.input(0) == x;
  if (!x_first && (op == "Div" || op == "Sub")) return std::nullopt;
  const Tensor* k = constant_input(g, n, x_first ? 1 : 0);
  if (!k || (x_first ? n.input(1) : n.input(0)) == x) return std::nullopt;
  if (!varies_only_along(k->shape(), rank, a.channel_axis)) return std::nullopt;
  if (k->numel() != 1 && k->numel() != c) return std::nullopt;
  const std::vector<double> v = per_channel(*k, c);
  for (size_t i = 0; i < v.size(); ++i) {
    if (op == "Mul") m.mul[i] = v[i];
    if (op == "Div") {
      if (v[i] == 0) return std::nullopt;
      m.mul[i] = 1.0 / v[i];
    }
    if (op == "Add") m.add[i] = v[i];
    if (op == "Sub") m.add[i] = -v[i];
  }
  return m;
}

// The folded weights are the old ones times m.mul per channel: so are their scales.
void move_weight_hint(QuantHints* hints, const std::string& old_w, const std::string& new_w, const Affine& a,
                      const ChannelMap& m) {
  if (!hints) return;
  auto it = hints->weights.find(old_w);
  if (it == hints->weights.end() || (it->second.axis >= 0 && it->second.axis != a.weight_axis)) return;
  WeightHint h;
  h.axis = a.weight_axis;
  for (int64_t c = 0; c < a.channels; ++c) {
    const float s = it->second.axis < 0 ? it->second.scales.at(0) : it->second.scales.at(static_cast<size_t>(c));
    h.scales.push_back(static_cast<float>(s * std::fabs(m.mul[static_cast<size_t>(c)])));
  }
  hints->weights[new_w] = std::move(h);
}

std::string describe_fold(const Node& folded, const Node& into) { return fmt::format("{} -> {}", folded.name, into.name); }

void apply_fold(Graph& g, const Affine& a, const ChannelMap& m, QuantHints* hints) {
  Node& n = g.nodes[a.node];
  const std::string old_w = n.input(a.weight_input);
  Tensor w = *g.find_constant(old_w);
  const model::Shape& ws = w.shape();
  // Scale weight slices along weight_axis.
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < a.weight_axis; ++d) outer *= ws[static_cast<size_t>(d)];
  for (size_t d = static_cast<size_t>(a.weight_axis) + 1; d < ws.size(); ++d) inner *= ws[d];
  auto wv = w.values<float>();
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t c = 0; c < a.channels; ++c)
      for (int64_t i = 0; i < inner; ++i) {
        float& x = wv[(o * a.channels + c) * inner + i];
        x = static_cast<float>(x * m.mul[static_cast<size_t>(c)]);
      }
  // Bias: b * mul + add (Gemm: beta * C, beta then 1).
  if (a.scale_only) {
    const std::string new_w = fresh_name(g, n.name + ".weight~folded");
    g.constants[new_w] = std::move(w);
    n.inputs[a.weight_input] = new_w;
    move_weight_hint(hints, old_w, new_w, a, m);
    return;
  }
  std::vector<double> bias(static_cast<size_t>(a.channels), 0.0);
  if (!n.input(2).empty()) {
    const Tensor& b = *g.find_constant(n.input(2));
    const double beta = n.op_type == "Gemm" ? n.attr_float("beta", 1.0f) : 1.0;
    for (int64_t c = 0; c < a.channels; ++c) bias[static_cast<size_t>(c)] = beta * b.real_at(b.numel() == 1 ? 0 : c);
  }
  Tensor b(model::DType::kFloat32, {a.channels});
  auto bv = b.values<float>();
  for (size_t c = 0; c < bias.size(); ++c) bv[c] = static_cast<float>(bias[c] * m.mul[c] + m.add[c]);
  if (n.op_type == "Gemm") n.attributes["beta"] = model::Attribute{1.0f};

  const std::string new_w = fresh_name(g, n.name + ".weight~folded");
  g.constants[new_w] = std::move(w);
  const std::string new_b = fresh_name(g, n.name + ".bias~folded");
  g.constants[new_b] = std::move(b);
  n.inputs.resize(std::max<size_t>(n.inputs.size(), 3));
  n.inputs[a.weight_input] = new_w;
  n.inputs[2] = new_b;

  move_weight_hint(hints, old_w, new_w, a, m);
}

bool fold_into_affine(Graph& g, CleanupReport& report, QuantHints* hints) {
  bool changed = false;
  std::vector<bool> dead(g.nodes.size(), false);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (dead[i]) continue;
    const std::optional<Affine> a = as_affine(g, i);
    if (!a) continue;
    const std::string y = g.nodes[i].outputs[0];
    if (is_graph_output(g, y)) continue;
    const std::vector<size_t> r = readers(g, y);
    if (r.size() != 1 || dead[r[0]]) continue;
    const Node& next = g.nodes[r[0]];
    const std::optional<ChannelMap> m = channel_map(g, next, y, *a);
    if (!m) continue;
    if (a->scale_only && std::any_of(m->add.begin(), m->add.end(), [](double v) { return v != 0; })) continue;
    if (!same_shape(g, y, next.outputs[0])) continue;
    apply_fold(g, *a, *m, hints);
    report.folded.push_back(describe_fold(next, g.nodes[i]));
    const std::string z = next.outputs[0];
    dead[r[0]] = true;
    g.nodes[r[0]].inputs.clear();
    g.nodes[r[0]].outputs.clear();
    rename_value(g, y, z);
    if (hints) hints->ranges.erase(y);
    changed = true;
  }
  erase_nodes(g, dead);
  return changed;
}

// ---- MatMul(A [M, K], constant B [K, N]) is a Gemm, which folds bias and scales ----

void matmul_to_gemm(Graph& g) {
  for (Node& n : g.nodes) {
    if (n.op_type != "MatMul" || !n.domain.empty() || n.inputs.size() != 2) continue;
    const Tensor* b = constant_input(g, n, 1);
    const model::ValueInfo* a = g.find_value(n.input(0));
    if (!b || b->rank() != 2 || b->dtype() != model::DType::kFloat32 || !a || !a->shape_known() ||
        a->shape.size() != 2 || a->dtype != model::DType::kFloat32)
      continue;
    n.op_type = "Gemm";
    n.attributes.clear();
  }
}

// ---- BatchNormalization that nothing can absorb: Mul + Add ----

void decompose_batchnorms(Graph& g, CleanupReport& report) {
  std::vector<Node> out;
  for (Node& n : g.nodes) {
    if (n.op_type != "BatchNormalization" || !n.domain.empty() || n.outputs.size() > 1) {
      out.push_back(std::move(n));
      continue;
    }
    const std::string x = n.input(0);
    const model::Shape& xs = value_shape(g, x);
    const Tensor* t[4];
    bool ok = xs.size() >= 2 && (g.opset >= 9 || n.attr_int("spatial", 1) != 0);
    for (size_t i = 0; ok && i < 4; ++i) {
      t[i] = constant_input(g, n, i + 1);
      ok = t[i] && t[i]->numel() == xs[1];
    }
    if (!ok) {
      out.push_back(std::move(n));
      continue;
    }
    model::Shape cs(xs.size() - 1, 1);
    cs[0] = xs[1];
    Tensor mul(model::DType::kFloat32, cs), add(model::DType::kFloat32, cs);
    const double eps = n.attr_float("epsilon", 1e-5f);
    for (int64_t c = 0; c < xs[1]; ++c) {
      const double s = t[0]->real_at(c) / std::sqrt(t[3]->real_at(c) + eps);
      mul.values<float>()[c] = static_cast<float>(s);
      add.values<float>()[c] = static_cast<float>(t[1]->real_at(c) - t[2]->real_at(c) * s);
    }
    const std::string mul_name = fresh_name(g, n.name + ".mul"), add_name = fresh_name(g, n.name + ".add");
    g.constants[mul_name] = std::move(mul);
    g.constants[add_name] = std::move(add);
    const std::string mid = fresh_name(g, n.outputs[0] + "~scaled");
    g.values[mid] = *g.find_value(n.outputs[0]);
    Node m{n.name + "~mul", "Mul", "", {x, mul_name}, {mid}, {}};
    Node a{n.name + "~add", "Add", "", {mid, add_name}, {n.outputs[0]}, {}};
    report.decomposed.push_back(n.name);
    out.push_back(std::move(m));
    out.push_back(std::move(a));
  }
  g.nodes = std::move(out);
}

}  // namespace

CleanupReport cleanup(Graph& graph, QuantHints* hints) {
  CleanupReport report;
  matmul_to_gemm(graph);
  // Each round may expose more (a no-op between a Conv and its BatchNormalization).
  for (int round = 0; round < 16; ++round) {
    const bool a = remove_noops(graph, report, hints);
    const bool b = fold_into_affine(graph, report, hints);
    if (!a && !b) break;
  }
  decompose_batchnorms(graph, report);
  // A Mul/Add from a decomposition may now fold into nothing, but later no-ops may remain.
  remove_noops(graph, report, hints);
  model::remove_unused(graph);
  if (hints)
    for (auto it = hints->weights.begin(); it != hints->weights.end();)
      it = graph.constants.count(it->first) ? std::next(it) : hints->weights.erase(it);
  return report;
}

}  // namespace npuforge::compiler
