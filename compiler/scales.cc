#include "compiler/scales.h"

#include <algorithm>
#include <cmath>
#include <limits>
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

  ScalePlan run(int lut_channel_groups) {
    index();
    for (const std::string& in : g_.inputs)
      if (int8_.count(in)) plan_.scales[in] = base(in);
    for (size_t gi = 0; gi < p_.groups.size(); ++gi) plan_group(gi);
    if (lut_channel_groups >= 2)
      for (size_t gi = 0; gi < p_.groups.size(); ++gi)
        if (p_.groups[gi].kind == GroupKind::kLut) plan_lut_channels(gi, static_cast<size_t>(lut_channel_groups));
    return std::move(plan_);
  }

 private:
  // The per-channel absmax of an int8 value that may take per-channel scales, else nullptr:
  // an HWC image from calibration (not the model's own scales), not a model input or output,
  // read by no rescale, and read only by convs (output side) / only by this LUT (input side).
  const std::vector<float>* channel_absmax(const std::string& v, size_t lut, bool lut_reads) const {
    if (!int8_.count(v) || is_graph_output(g_, v) || is_graph_input(g_, v) || hints_.ranges.count(v)) return nullptr;
    const model::ValueInfo* info = g_.find_value(v);
    if (!info || !info->shape_known() || info->shape.size() != 4 || info->shape[1] < 2) return nullptr;
    auto r = cal_.ranges.find(v);
    if (r == cal_.ranges.end() || r->second.channel_absmax.size() != static_cast<size_t>(info->shape[1])) return nullptr;
    auto readers = readers_.find(v);
    if (readers == readers_.end()) return nullptr;
    for (size_t reader : readers->second) {
      if (plan_.rescales.count({v, reader})) return nullptr;
      if (lut_reads ? reader != lut : p_.groups[reader].kind != GroupKind::kConv) return nullptr;
    }
    if (lut_reads) {
      auto p = producer_.find(v);
      if (p == producer_.end() || p_.groups[p->second].kind != GroupKind::kConv || p_.groups[p->second].clip_hi > 0)
        return nullptr;
    }
    return &r->second.channel_absmax;
  }

  static constexpr float kHeadroom = 2, kFinest = 8;

  void plan_lut_channels(size_t gi, size_t max_groups) {
    const Group& grp = p_.groups[gi];
    const std::vector<float>* in = channel_absmax(grp.input, gi, true);
    const std::vector<float>* out = channel_absmax(grp.output, gi, false);
    if (in && out && in->size() != out->size()) return;
    std::vector<std::vector<float>> sides;
    for (const auto* side : {in, out})
      if (side) sides.push_back(*side);
    if (sides.empty()) return;
    const std::vector<size_t> ends = channel_ranges(sides, max_groups);
    if (ends.size() < 2) return;
    for (const auto& [v, absmax] : {std::pair{&grp.input, in}, std::pair{&grp.output, out}}) {
      if (!absmax) continue;
      ScaleChoice& choice = plan_.scales.at(*v);
      const float clip = choice.scale * 127.0f;
      std::vector<float> scales(absmax->size());
      float top = 0;
      size_t begin = 0;
      for (size_t end : ends) {
        const float m = *std::max_element(absmax->begin() + static_cast<std::ptrdiff_t>(begin),
                                          absmax->begin() + static_cast<std::ptrdiff_t>(end));
        // Headroom: a channel's calibrated range is less sure than the tensor's (fewer values),
        // and other inputs move the channels apart; a group is at most kFinest times finer.
        const float s = std::clamp(kHeadroom * m, clip / kFinest, clip) / 127.0f;
        std::fill(scales.begin() + static_cast<std::ptrdiff_t>(begin), scales.begin() + static_cast<std::ptrdiff_t>(end), s);
        top = std::max(top, s);
        begin = end;
      }
      choice.scale = top;
      choice.source += fmt::format("; {} channel groups around LUT '{}'", ends.size(), g_.nodes[grp.nodes[0]].name);
      plan_.channel_scales[*v] = std::move(scales);
    }
  }

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
                      const QuantHints& hints, int lut_channel_groups) {
  return ScalePlanner(graph, partition, calibration, hints).run(lut_channel_groups);
}

std::vector<size_t> channel_ranges(const std::vector<std::vector<float>>& absmax, size_t max_groups) {
  if (absmax.empty() || absmax[0].empty()) return {};
  const size_t n = absmax[0].size();
  // prefix[i]: sum over sides of log2 of the floored absmax of channels [0, i).
  std::vector<double> prefix(n + 1, 0.0);
  std::vector<std::vector<double>> logs;
  for (const std::vector<float>& side : absmax) {
    const float top = *std::max_element(side.begin(), side.end());
    const double floor = top > 0 ? top / 256.0 : 1.0;
    std::vector<double> l(n);
    for (size_t c = 0; c < n; ++c) l[c] = std::log2(std::max<double>(side[c], floor));
    logs.push_back(std::move(l));
  }
  for (size_t c = 0; c < n; ++c) {
    prefix[c + 1] = prefix[c];
    for (const auto& l : logs) prefix[c + 1] += l[c];
  }
  // cost[i][j]: bits lost by the range [i, j).
  std::vector<std::vector<double>> cost(n, std::vector<double>(n + 1, 0.0));
  for (size_t i = 0; i < n; ++i) {
    std::vector<double> top(logs.size(), -1e300);
    for (size_t j = i + 1; j <= n; ++j) {
      double sum = 0;
      for (size_t s = 0; s < logs.size(); ++s) {
        top[s] = std::max(top[s], logs[s][j - 1]);
        sum += top[s];
      }
      cost[i][j] = static_cast<double>(j - i) * sum - (prefix[j] - prefix[i]);
    }
  }
  const size_t groups = std::max<size_t>(1, std::min(max_groups, n));
  const double inf = std::numeric_limits<double>::infinity();
  // best[k][j]: the least cost of channels [0, j) in k + 1 ranges; from[k][j]: where the last starts.
  std::vector<std::vector<double>> best(groups, std::vector<double>(n + 1, inf));
  std::vector<std::vector<size_t>> from(groups, std::vector<size_t>(n + 1, 0));
  for (size_t j = 1; j <= n; ++j) best[0][j] = cost[0][j];
  for (size_t k = 1; k < groups; ++k)
    for (size_t j = k + 1; j <= n; ++j)
      for (size_t i = k; i < j; ++i)
        if (best[k - 1][i] + cost[i][j] < best[k][j]) {
          best[k][j] = best[k - 1][i] + cost[i][j];
          from[k][j] = i;
        }
  // The fewest ranges within a hair of the best (a range that saves nothing is not worth a table).
  size_t k = 0;
  for (size_t c = 1; c < groups; ++c)
    if (best[c][n] < best[k][n] - 1e-6) k = c;
  std::vector<size_t> ends;
  for (size_t j = n;; --k) {
    ends.push_back(j);
    if (k == 0) break;
    j = from[k][j];
  }
  std::reverse(ends.begin(), ends.end());
  return ends;
}

}  // namespace npuforge::compiler
