#include "compiler/scales.h"

#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/format.h>

#include "compiler/graph_edit.h"
#include "util/error.h"

namespace npuforge::compiler {

std::vector<std::string> group_inputs(const model::Graph& graph, const Group& group) {
  if (group.kind == GroupKind::kLut || group.kind == GroupKind::kClamp) return {group.input};
  std::set<std::string> produced;
  for (size_t i : group.nodes)
    for (const std::string& o : graph.nodes[i].outputs) produced.insert(o);
  std::vector<std::string> out;
  for (size_t i : group.nodes)
    for (const std::string& in : graph.nodes[i].inputs)
      if (!in.empty() && !graph.is_constant(in) && !produced.count(in) &&
          std::find(out.begin(), out.end(), in) == out.end())
        out.push_back(in);
  return out;
}

std::vector<std::string> group_outputs(const model::Graph& graph, const Partition& partition, const Group& group) {
  if (group.kind != GroupKind::kCpu) return {group.output};
  std::vector<std::string> out;
  for (const std::string& o : graph.nodes[group.nodes[0]].outputs) {
    if (o.empty()) continue;
    bool read = is_graph_output(graph, o);
    for (const Group& g : partition.groups) {
      if (read) break;
      const auto ins = group_inputs(graph, g);
      read = std::find(ins.begin(), ins.end(), o) != ins.end();
    }
    if (read) out.push_back(o);
  }
  return out;
}

namespace {

bool requantizes(GroupKind k) {
  return k == GroupKind::kConv || k == GroupKind::kGemm || k == GroupKind::kAdd || k == GroupKind::kMul ||
         k == GroupKind::kLut || k == GroupKind::kChannelAffine || k == GroupKind::kCpu;
}

class ScalePlanner {
 public:
  ScalePlanner(const model::Graph& g, const Partition& p, const Calibration& cal, const QuantHints& hints)
      : g_(g), p_(p), cal_(cal), hints_(hints) {}

  ScalePlan run() {
    index();
    for (const std::string& in : g_.inputs)
      if (int8_.count(in)) plan_.scales[in] = base(in);
    for (size_t gi = 0; gi < p_.groups.size(); ++gi) plan_group(gi);
    return std::move(plan_);
  }

 private:
  void index() {
    for (size_t gi = 0; gi < p_.groups.size(); ++gi) {
      const Group& grp = p_.groups[gi];
      ins_.push_back(group_inputs(g_, grp));
      outs_.push_back(group_outputs(g_, p_, grp));
      for (const std::string& v : ins_.back()) {
        readers_[v].push_back(gi);
        if (grp.target() == Target::kNpu) int8_.insert(v);
      }
      for (const std::string& v : outs_.back()) {
        producer_[v] = gi;
        if (grp.target() == Target::kNpu) int8_.insert(v);
      }
    }
  }

  ScaleChoice base(const std::string& v) const {
    if (auto h = hints_.ranges.find(v); h != hints_.ranges.end()) {
      const float m = std::max(std::fabs(h->second.lo), std::fabs(h->second.hi));
      if (m > 0) return {m / 127.0f, fmt::format("model's QuantizeLinear '{}' [{}, {}]", h->second.node, h->second.lo, h->second.hi)};
    }
    auto r = cal_.ranges.find(v);
    if (r == cal_.ranges.end())
      throw Error(fmt::format("{}: value '{}' has no calibration statistics", g_.source, v));
    if (!(r->second.clip > 0)) return {1.0f / 127.0f, "calibration: always 0 (any scale)"};
    return {r->second.clip / 127.0f, fmt::format("calibration: clip {} of [{}, {}]", r->second.clip, r->second.min, r->second.max)};
  }

  const ScaleChoice& scale_of(const std::string& v) const {
    auto it = plan_.scales.find(v);
    if (it == plan_.scales.end()) throw Error(fmt::format("{}: no scale for '{}' yet", g_.source, v));
    return it->second;
  }

  // May v be given scale s by its producer at no cost?
  bool free_to_set(const std::string& v) const {
    if (is_graph_output(g_, v)) return false;
    auto r = readers_.find(v);
    if (r == readers_.end() || r->second.size() != 1) return false;
    auto p = producer_.find(v);
    if (p == producer_.end()) return is_graph_input(g_, v);
    return requantizes(p_.groups[p->second].kind);
  }

  // Group gi reads v at scale s: set v's scale, or plan a rescale.
  void need(const std::string& v, float s, size_t gi, const std::string& why) {
    if (scale_of(v).scale == s) return;
    if (free_to_set(v)) {
      plan_.scales[v] = {s, why};
    } else {
      plan_.rescales[{v, gi}] = s;
    }
  }

  void plan_group(size_t gi) {
    const Group& grp = p_.groups[gi];
    for (const std::string& v : outs_[gi]) {
      if (!int8_.count(v)) continue;
      plan_.scales[v] = output_scale(grp, v);
    }
    const std::string& main = grp.nodes.empty() ? std::string() : g_.nodes[grp.nodes[0]].name;
    if (grp.kind == GroupKind::kAdd) {
      const auto& in = ins_[gi];
      float s = 0;
      for (const std::string& v : in) s = std::max(s, scale_of(v).scale);
      for (const std::string& v : in) need(v, s, gi, fmt::format("shared with the other input of Add '{}'", main));
    } else if (grp.kind == GroupKind::kConcat) {
      const float s = scale_of(grp.output).scale;
      for (const std::string& v : ins_[gi]) need(v, s, gi, fmt::format("the output scale of Concat '{}'", main));
    }
  }

  ScaleChoice output_scale(const Group& grp, const std::string& v) const {
    switch (grp.kind) {
      case GroupKind::kMaxPool:
      case GroupKind::kAvgPool:
      case GroupKind::kClamp:
      case GroupKind::kAlias: {
        const ScaleChoice& in = scale_of(ins_of(grp).at(0));
        return {in.scale, fmt::format("the input's ({} keeps the scale)", group_kind_name(grp.kind))};
      }
      case GroupKind::kConv:
      case GroupKind::kGemm:
        if (grp.clip_hi > 0 && !hints_.ranges.count(v)) {
          // The Clip's input: the value just before the last fused node.
          const std::string& pre = g_.nodes[grp.nodes.back()].input(0);
          auto r = cal_.ranges.find(pre);
          if (r != cal_.ranges.end() && r->second.max >= grp.clip_hi)
            return {grp.clip_hi / 127.0f, fmt::format("Clip(0, {}) fused: saturation at 127 is the clip", grp.clip_hi)};
        }
        return base(v);
      default:
        return base(v);
    }
  }

  const std::vector<std::string>& ins_of(const Group& grp) const {
    return ins_[static_cast<size_t>(&grp - p_.groups.data())];
  }

  const model::Graph& g_;
  const Partition& p_;
  const Calibration& cal_;
  const QuantHints& hints_;
  ScalePlan plan_;
  std::vector<std::vector<std::string>> ins_, outs_;
  std::map<std::string, std::vector<size_t>> readers_;
  std::map<std::string, size_t> producer_;
  std::set<std::string> int8_;
};

}  // namespace

ScalePlan plan_scales(const model::Graph& graph, const Partition& partition, const Calibration& calibration,
                      const QuantHints& hints) {
  return ScalePlanner(graph, partition, calibration, hints).run();
}

}  // namespace npuforge::compiler
