#include "compiler/equalize.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <span>

#include <fmt/format.h>

#include "compiler/graph_edit.h"

namespace npuforge::compiler {

namespace {

using model::Graph;
using model::Node;
using model::Tensor;

// The float weight (input 1) and optional bias (input 2) of a Conv, or nullptr.
const Tensor* float_weight(const Graph& g, const Node& n) {
  if (n.op_type != "Conv" || !n.domain.empty() || n.inputs.size() < 2) return nullptr;
  const Tensor* w = g.find_constant(n.input(1));
  if (!w || w->dtype() != model::DType::kFloat32 || w->rank() < 3) return nullptr;
  if (n.inputs.size() > 2 && !n.input(2).empty()) {
    const Tensor* b = g.find_constant(n.input(2));
    if (!b || b->dtype() != model::DType::kFloat32) return nullptr;
  }
  return w;
}

// Ops between the two Convs that commute with a positive per-channel scale.
bool scale_commutes(const Node& n) {
  return n.domain.empty() && (n.op_type == "Relu" || n.op_type == "LeakyRelu" || n.op_type == "MaxPool");
}

// The only reader of `value`, or nullopt (several readers, none, or a graph output).
std::optional<size_t> sole_reader(const Graph& g, const std::string& value) {
  if (is_graph_output(g, value)) return std::nullopt;
  const std::vector<size_t> r = readers(g, value);
  if (r.size() != 1) return std::nullopt;
  return r[0];
}

struct Pair {
  size_t first = 0, second = 0;
  std::string value;  // what the second Conv reads (the int8 tensor whose channels matter)
};

std::vector<Pair> find_pairs(const Graph& g) {
  std::vector<Pair> pairs;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& a = g.nodes[i];
    if (!float_weight(g, a) || a.outputs.empty()) continue;
    std::string v = a.outputs[0];
    std::optional<size_t> r = sole_reader(g, v);
    while (r && scale_commutes(g.nodes[*r]) && g.nodes[*r].input(0) == v) {
      v = g.nodes[*r].outputs[0];
      r = sole_reader(g, v);
    }
    if (!r || !float_weight(g, g.nodes[*r]) || g.nodes[*r].input(0) != v) continue;
    pairs.push_back({i, *r, v});
  }
  return pairs;
}

// Absmax per channel (axis 1) of every value in `ranges` (keys) over the samples, from one float
// run per sample (statistics only, no intermediate kept).
void channel_absmax(const Graph& g, const std::vector<model::TensorMap>& samples,
                    std::map<std::string, std::vector<double>, std::less<>>& ranges) {
  model::RunOptions ro;
  ro.on_node = [&](const Node& n, std::span<const Tensor> outputs) {
    for (size_t o = 0; o < outputs.size() && o < n.outputs.size(); ++o) {
      auto it = ranges.find(n.outputs[o]);
      if (it == ranges.end() || outputs[o].rank() < 2) continue;
      const Tensor& t = outputs[o];
      const int64_t c = t.shape()[1], inner = t.numel() / (t.shape()[0] * c);
      std::vector<double>& m = it->second;
      m.resize(static_cast<size_t>(c), 0.0);
      for (int64_t i = 0; i < t.numel(); ++i) {
        double& x = m[static_cast<size_t>((i / inner) % c)];
        x = std::max(x, std::fabs(t.real_at(i)));
      }
    }
  };
  for (const model::TensorMap& in : samples) model::run_graph(g, in, ro);
}

std::string replace_constant(Graph& g, const std::string& old_name, Tensor t, const std::string& tag) {
  const std::string name = fresh_name(g, old_name + "~" + tag);
  g.constants[name] = std::move(t);
  return name;
}

// Divides output channel c of `first` by s[c] and multiplies input channel c of `second` by it.
void apply(Graph& g, const Pair& p, const std::vector<double>& s) {
  Node& a = g.nodes[p.first];
  Tensor w1 = *g.find_constant(a.input(1));
  const int64_t per_out = w1.numel() / w1.shape()[0];
  auto w1v = w1.values<float>();
  for (int64_t i = 0; i < w1.numel(); ++i) w1v[i] = static_cast<float>(w1v[i] / s[static_cast<size_t>(i / per_out)]);
  a.inputs[1] = replace_constant(g, a.input(1), std::move(w1), "equalized");
  if (a.inputs.size() > 2 && !a.input(2).empty()) {
    Tensor b = *g.find_constant(a.input(2));
    auto bv = b.values<float>();
    for (int64_t c = 0; c < b.numel(); ++c) bv[c] = static_cast<float>(bv[c] / s[static_cast<size_t>(c)]);
    a.inputs[2] = replace_constant(g, a.input(2), std::move(b), "equalized");
  }
  Node& b2 = g.nodes[p.second];
  Tensor w2 = *g.find_constant(b2.input(1));
  const model::Shape& ws = w2.shape();  // [cout, cin / groups, k...]
  const int64_t groups = b2.attr_int("group", 1);
  const int64_t cout = ws[0], cin_g = ws[1], k = w2.numel() / (cout * cin_g), cout_g = cout / groups;
  auto w2v = w2.values<float>();
  for (int64_t o = 0; o < cout; ++o)
    for (int64_t ci = 0; ci < cin_g; ++ci) {
      const double sc = s[static_cast<size_t>((o / cout_g) * cin_g + ci)];
      for (int64_t j = 0; j < k; ++j) {
        float& x = w2v[(o * cin_g + ci) * k + j];
        x = static_cast<float>(x * sc);
      }
    }
  b2.inputs[1] = replace_constant(g, b2.input(1), std::move(w2), "equalized");
}

// The largest |weight| of `second` reading each of its input channels.
std::vector<double> weight_absmax_per_input(const Graph& g, const Node& second, int64_t channels) {
  const Tensor& w = *g.find_constant(second.input(1));
  const int64_t groups = second.attr_int("group", 1);
  const int64_t cout = w.shape()[0], cin_g = w.shape()[1], k = w.numel() / (cout * cin_g), cout_g = cout / groups;
  std::vector<double> m(static_cast<size_t>(channels), 0.0);
  for (int64_t o = 0; o < cout; ++o)
    for (int64_t ci = 0; ci < cin_g; ++ci) {
      double& x = m[static_cast<size_t>((o / cout_g) * cin_g + ci)];
      for (int64_t j = 0; j < k; ++j) x = std::max(x, std::fabs(w.real_at((o * cin_g + ci) * k + j)));
    }
  return m;
}

double spread(const std::vector<double>& v) {
  double lo = 0, hi = 0;
  for (double x : v)
    if (x > 0) {
      lo = lo == 0 ? x : std::min(lo, x);
      hi = std::max(hi, x);
    }
  return lo > 0 ? hi / lo : 1;
}

}  // namespace

EqualizeReport equalize_channels(Graph& graph, const std::vector<model::TensorMap>& samples) {
  EqualizeReport report;
  const std::vector<Pair> pairs = find_pairs(graph);
  if (pairs.empty() || samples.empty()) return report;
  std::map<std::string, std::vector<double>, std::less<>> ranges;
  for (const Pair& p : pairs) ranges[p.value];
  // Every pair's ranges come from one float run: equalising a pair leaves the values of every
  // other pair as they were (the first Conv's inputs and the second's outputs do not change).
  channel_absmax(graph, samples, ranges);
  for (const Pair& p : pairs) {
    const std::vector<double>& a = ranges.at(p.value);
    const Node& second = graph.nodes[p.second];
    const std::vector<double> w = weight_absmax_per_input(graph, second, static_cast<int64_t>(a.size()));
    if (static_cast<int64_t>(a.size()) != graph.find_constant(graph.nodes[p.first].input(1))->shape()[0]) continue;
    std::vector<double> s(a.size(), 1.0), after(a.size(), 0.0);
    for (size_t c = 0; c < a.size(); ++c) {
      if (a[c] > 0 && w[c] > 0) s[c] = std::clamp(std::sqrt(a[c] / w[c]), 1e-4, 1e4);
      after[c] = a[c] / s[c];
    }
    // Channels within kMinSpread of each other lose at most a bit at per-tensor scale: leave them.
    constexpr double kMinSpread = 2;
    const double before_spread = spread(a), after_spread = spread(after);
    if (before_spread < kMinSpread || after_spread >= before_spread) continue;
    apply(graph, p, s);
    report.pairs.push_back(fmt::format("{} -> {}: {} channels, range spread {:.1f}x -> {:.1f}x",
                                       graph.nodes[p.first].name, graph.nodes[p.second].name, a.size(), before_spread,
                                       after_spread));
  }
  return report;
}

}  // namespace npuforge::compiler
