#include "compiler/quantize.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include <fmt/format.h>

#include "compiler/graph_edit.h"
#include "compiler/lut.h"
#include "model/subgraph.h"
#include "util/error.h"

namespace npuforge::compiler {

float weight_scale(float absmax, double bias, float in_scale) {
  // |bias| / (s_in * s_w) < 2^30 leaves headroom for the sums added to it.
  const double bias_min = std::fabs(bias) / (static_cast<double>(in_scale) * 0x1.0p30);
  double s = std::max<double>(absmax / 127.0, bias_min);
  if (!(s > 0) || !std::isfinite(s)) s = 1;
  return static_cast<float>(s);
}

namespace {

using model::Graph;
using model::Node;
using model::Tensor;

int8_t round_weight(double w, float scale) {
  const double q = std::nearbyint(w / scale);
  return static_cast<int8_t>(std::clamp(q, -128.0, 127.0));
}

int32_t round_bias(double b, double unit) {
  const double q = std::nearbyint(b / unit);
  return static_cast<int32_t>(std::clamp(q, -2147483648.0, 2147483647.0));
}

isa::RequantParams channel_requant(double multiplier, bool relu) {
  isa::RequantParams p = isa::make_requant(multiplier, 31, 62);
  p.relu = relu;
  return p;
}

// Per-output-channel weights of a conv/gemm, before layout: w[c] is channel c's values.
struct ChannelWeights {
  std::vector<std::vector<double>> w;
  std::vector<double> bias;
  const WeightHint* hint = nullptr;  // the model's scales, when they apply
  double hint_factor = 1;            // |alpha| applied to the hint's scales
};

struct Quantized {
  std::vector<std::vector<int8_t>> q;
  std::vector<int32_t> bias;
  std::vector<float> scales;
  std::vector<isa::RequantParams> requant;
};

// s_out_channels: the output's per-channel scales (empty: s_out for every channel).
Quantized quantize_channels(const ChannelWeights& cw, float s_in, float s_out, bool relu,
                            const std::vector<float>& s_out_channels = {}) {
  Quantized out;
  const size_t n = cw.w.size();
  for (size_t c = 0; c < n; ++c) {
    if (!s_out_channels.empty()) s_out = s_out_channels.at(c);
    float s = 0;
    if (cw.hint) s = static_cast<float>(cw.hint->scales[cw.hint->scales.size() == 1 ? 0 : c] * cw.hint_factor);
    double absmax = 0;
    for (double v : cw.w[c]) absmax = std::max(absmax, std::fabs(v));
    // A hint is used only when it reproduces the values (ints * scale) and keeps the bias in range.
    if (s > 0 && absmax / s <= 128.5 && std::fabs(cw.bias[c]) / (static_cast<double>(s_in) * s) < 0x1.0p30) {
      // keep s
    } else {
      s = weight_scale(static_cast<float>(absmax), cw.bias[c], s_in);
    }
    std::vector<int8_t> q(cw.w[c].size());
    for (size_t i = 0; i < q.size(); ++i) q[i] = round_weight(cw.w[c][i], s);
    out.q.push_back(std::move(q));
    out.scales.push_back(s);
    const double unit = static_cast<double>(s_in) * s;
    out.bias.push_back(round_bias(cw.bias[c], unit));
    out.requant.push_back(channel_requant(unit / s_out, relu));
  }
  return out;
}

class Builder {
 public:
  Builder(const Graph& g, const Partition& p, const ScalePlan& scales, const QuantHints& hints)
      : g_(g), p_(p), scales_(scales), hints_(hints) {}

  QGraph run() {
    q_.source = g_.source;
    for (const std::string& in : g_.inputs) q_.inputs.push_back({in, tensor(in)});
    for (size_t gi = 0; gi < p_.groups.size(); ++gi) build(gi);
    for (const std::string& out : g_.outputs) {
      const TensorId id = q_.find(out);
      if (!id.valid()) throw Error(fmt::format("{}: model output '{}' is not computed", g_.source, out));
      q_.outputs.push_back({out, id});
    }
    return std::move(q_);
  }

 private:
  bool is_int8(const std::string& v) const { return scales_.scales.count(v) != 0; }

  TensorId tensor(const std::string& v) {
    if (TensorId id = q_.find(v); id.valid()) return id;
    QTensor t;
    t.name = v;
    const model::ValueInfo* info = g_.find_value(v);
    if (!info || !info->shape_known()) throw Error(fmt::format("{}: value '{}' has no known shape", g_.source, v));
    t.shape = info->shape;
    if (is_int8(v)) {
      t.dtype = model::DType::kInt8;
      t.scale = scales_.scales.at(v).scale;
      if (auto cs = scales_.channel_scales.find(v); cs != scales_.channel_scales.end()) t.channel_scales = cs->second;
      t.layout = t.shape.size() == 4 ? Layout::kHWC : Layout::kRowMajor;
    } else {
      t.dtype = info->dtype;
      t.layout = Layout::kOnnx;
    }
    return q_.add_tensor(std::move(t));
  }

  // The tensor group gi reads for value v: v itself, or its rescaled copy.
  TensorId input(const std::string& v, size_t gi) {
    const TensorId id = tensor(v);
    auto r = scales_.rescales.find({v, gi});
    if (r == scales_.rescales.end()) return id;
    const float s = r->second;
    const std::string name = fmt::format("{}~rescaled~{}", v, s);
    if (TensorId existing = q_.find(name); existing.valid()) return existing;
    QTensor t = q_.tensor(id);
    t.name = name;
    t.scale = s;
    LutOp lut;
    lut.input = id;
    lut.table = rescale_table(q_.tensor(id).scale, s);
    lut.function = fmt::format("rescale {} -> {}", q_.tensor(id).scale, s);
    lut.output = q_.add_tensor(std::move(t));
    q_.ops.push_back(lut);
    return lut.output;
  }

  std::vector<std::string> node_names(const Group& grp) const {
    std::vector<std::string> out;
    for (size_t i : grp.nodes) out.push_back(g_.nodes[i].name);
    return out;
  }

  const Tensor& constant(const std::string& name) const {
    const Tensor* t = g_.find_constant(name);
    if (!t) throw Error(fmt::format("{}: '{}' is not a constant", g_.source, name));
    return *t;
  }

  const WeightHint* hint(const std::string& weight, int64_t out_axis) const {
    auto it = hints_.weights.find(weight);
    if (it == hints_.weights.end()) return nullptr;
    if (it->second.axis >= 0 && it->second.axis != out_axis) return nullptr;
    return &it->second;
  }

  void build(size_t gi) {
    const Group& grp = p_.groups[gi];
    switch (grp.kind) {
      case GroupKind::kConv: return conv(gi);
      case GroupKind::kGemm: return gemm(gi);
      case GroupKind::kChannelAffine: return channel_affine(gi);
      case GroupKind::kAdd:
      case GroupKind::kMul: return eltwise(gi);
      case GroupKind::kLut: return lut(gi);
      case GroupKind::kClamp: return clamp(gi);
      case GroupKind::kMaxPool:
      case GroupKind::kAvgPool: return pool(gi);
      case GroupKind::kConcat: return concat(gi);
      case GroupKind::kAlias: return alias(gi);
      case GroupKind::kCpu: return cpu(gi);
    }
  }

  void conv(size_t gi) {
    const Group& grp = p_.groups[gi];
    const Node& n = g_.nodes[grp.nodes[0]];
    ConvOp op;
    op.nodes = node_names(grp);
    op.input = input(n.input(0), gi);
    op.output = tensor(grp.output);
    std::string why;
    op.window = *npu_window(g_, n, NpuLimits::unbounded(), &why);
    const Tensor& w = constant(n.input(1));
    const int64_t cout = w.shape()[0], cin_pg = w.shape()[1], kh = w.shape()[2], kw = w.shape()[3];
    op.groups = n.attr_int("group", 1);
    op.cin_per_group = cin_pg;
    op.cout = cout;
    op.relu = grp.relu;
    ChannelWeights cw;
    cw.hint = hint(n.input(1), 0);
    const int64_t per = cin_pg * kh * kw;
    // An input with per-channel scales: x[ci] = s[ci] * q = scale * (s[ci] / scale) * q, so the
    // float weights of input channel ci take the factor s[ci] / scale (the model's scales no
    // longer describe them).
    const QTensor& in_t = q_.tensor(op.input);
    if (!in_t.channel_scales.empty()) cw.hint = nullptr;
    for (int64_t c = 0; c < cout; ++c) {
      std::vector<double> v(static_cast<size_t>(per));
      for (int64_t i = 0; i < per; ++i) {
        v[static_cast<size_t>(i)] = w.real_at(c * per + i);
        if (in_t.channel_scales.empty()) continue;
        const int64_t ci = c / (cout / op.groups) * cin_pg + i / (kh * kw);
        v[static_cast<size_t>(i)] *= static_cast<double>(in_t.channel_scales[static_cast<size_t>(ci)]) / in_t.scale;
      }
      cw.w.push_back(std::move(v));
      cw.bias.push_back(n.input(2).empty() ? 0.0 : constant(n.input(2)).real_at(c));
    }
    const QTensor& out_t = q_.tensor(op.output);
    const Quantized qz = quantize_channels(cw, in_t.scale, out_t.scale, op.relu, out_t.channel_scales);
    // [co][ci][ky][kx] -> rows (ky, kx, ci), columns co.
    op.weights.assign(static_cast<size_t>(per * cout), 0);
    for (int64_t co = 0; co < cout; ++co)
      for (int64_t ci = 0; ci < cin_pg; ++ci)
        for (int64_t ky = 0; ky < kh; ++ky)
          for (int64_t kx = 0; kx < kw; ++kx) {
            const int64_t row = (ky * kw + kx) * cin_pg + ci;
            op.weights[static_cast<size_t>(row * cout + co)] = qz.q[static_cast<size_t>(co)][static_cast<size_t>((ci * kh + ky) * kw + kx)];
          }
    op.bias = qz.bias;
    op.weight_scales = qz.scales;
    op.requant = qz.requant;
    q_.ops.push_back(std::move(op));
  }

  void gemm(size_t gi) {
    const Group& grp = p_.groups[gi];
    const Node& n = g_.nodes[grp.nodes[0]];
    GemmOp op;
    op.nodes = node_names(grp);
    op.input = input(n.input(0), gi);
    op.output = tensor(grp.output);
    op.relu = grp.relu;
    const Tensor& b = constant(n.input(1));
    const bool is_gemm = n.op_type == "Gemm";
    const bool trans_b = is_gemm && n.attr_int("transB", 0) != 0;
    const double alpha = is_gemm ? n.attr_float("alpha", 1.0f) : 1.0;
    const double beta = is_gemm ? n.attr_float("beta", 1.0f) : 1.0;
    op.k = trans_b ? b.shape()[1] : b.shape()[0];
    op.n = trans_b ? b.shape()[0] : b.shape()[1];
    ChannelWeights cw;
    cw.hint = hint(n.input(1), trans_b ? 0 : 1);
    cw.hint_factor = std::fabs(alpha);
    cw.bias.assign(static_cast<size_t>(op.n), 0.0);
    if (is_gemm && !n.input(2).empty()) {
      const Tensor& c = constant(n.input(2));
      for (int64_t j = 0; j < op.n; ++j) cw.bias[static_cast<size_t>(j)] += beta * c.real_at(c.numel() == 1 ? 0 : j);
    }
    for (size_t f = 1; f < grp.nodes.size(); ++f) {
      const Node& add = g_.nodes[grp.nodes[f]];
      if (add.op_type != "Add") continue;
      const Tensor& c = g_.is_constant(add.input(0)) ? constant(add.input(0)) : constant(add.input(1));
      for (int64_t j = 0; j < op.n; ++j) cw.bias[static_cast<size_t>(j)] += c.real_at(c.numel() == 1 ? 0 : j);
    }
    for (int64_t j = 0; j < op.n; ++j) {
      std::vector<double> v(static_cast<size_t>(op.k));
      for (int64_t k = 0; k < op.k; ++k) v[static_cast<size_t>(k)] = alpha * b.real_at(trans_b ? j * op.k + k : k * op.n + j);
      cw.w.push_back(std::move(v));
    }
    const Quantized qz = quantize_channels(cw, q_.tensor(op.input).scale, q_.tensor(op.output).scale, op.relu);
    op.weights.assign(static_cast<size_t>(op.k * op.n), 0);
    for (int64_t j = 0; j < op.n; ++j)
      for (int64_t k = 0; k < op.k; ++k)
        op.weights[static_cast<size_t>(k * op.n + j)] = qz.q[static_cast<size_t>(j)][static_cast<size_t>(k)];
    op.bias = qz.bias;
    op.weight_scales = qz.scales;
    op.requant = qz.requant;
    q_.ops.push_back(std::move(op));
  }

  // x * m[c] + a[c] as a 1x1 depthwise conv.
  void channel_affine(size_t gi) {
    const Group& grp = p_.groups[gi];
    const Node& n = g_.nodes[grp.nodes[0]];
    const bool const_first = g_.is_constant(n.input(0));
    const Tensor& c = constant(const_first ? n.input(0) : n.input(1));
    ConvOp op;
    op.nodes = node_names(grp);
    op.input = input(grp.input, gi);
    op.output = tensor(grp.output);
    const int64_t channels = q_.tensor(op.input).shape[1];
    op.groups = channels;
    op.cin_per_group = 1;
    op.cout = channels;
    ChannelWeights cw;
    for (int64_t ch = 0; ch < channels; ++ch) {
      const double v = c.real_at(ch);
      double m = 1, a = 0;
      if (n.op_type == "Mul") m = v;
      if (n.op_type == "Div") m = 1.0 / v;
      if (n.op_type == "Add") a = v;
      if (n.op_type == "Sub") a = -v;
      cw.w.push_back({m});
      cw.bias.push_back(a);
    }
    const Quantized qz = quantize_channels(cw, q_.tensor(op.input).scale, q_.tensor(op.output).scale, false);
    for (const auto& q : qz.q) op.weights.push_back(q[0]);
    op.bias = qz.bias;
    op.weight_scales = qz.scales;
    op.requant = qz.requant;
    q_.ops.push_back(std::move(op));
  }

  void eltwise(size_t gi) {
    const Group& grp = p_.groups[gi];
    const Node& n = g_.nodes[grp.nodes[0]];
    EltwiseOp op;
    op.nodes = node_names(grp);
    op.kind = grp.kind == GroupKind::kAdd ? EltwiseOp::Kind::kAdd : EltwiseOp::Kind::kMul;
    op.a = input(n.input(0), gi);
    op.b = input(n.input(1), gi);
    op.output = tensor(grp.output);
    if (q_.tensor(op.a).shape != q_.tensor(op.b).shape) {
      // A per-channel vector (partition: channel_broadcast) is b.
      if (q_.tensor(op.a).shape != q_.tensor(op.output).shape) std::swap(op.a, op.b);
      op.broadcast_b = true;
    }
    const double sa = q_.tensor(op.a).scale, sb = q_.tensor(op.b).scale, so = q_.tensor(op.output).scale;
    const double m = op.kind == EltwiseOp::Kind::kAdd ? sa / so : sa * sb / so;
    op.requant = isa::make_requant(m, 16, 40);
    q_.ops.push_back(std::move(op));
  }

  void lut(size_t gi) {
    const Group& grp = p_.groups[gi];
    LutOp op;
    op.nodes = node_names(grp);
    for (size_t i : grp.nodes) op.function += (op.function.empty() ? "" : "+") + g_.nodes[i].op_type;
    op.input = input(grp.input, gi);
    op.output = tensor(grp.output);
    const QTensor& in = q_.tensor(op.input);
    const QTensor& out = q_.tensor(op.output);
    op.table = region_table(g_, grp.nodes, grp.input, grp.output, in.scale, out.scale);
    if (!in.channel_scales.empty() || !out.channel_scales.empty()) {
      // One table per run of channels where neither scale changes.
      auto at = [](const QTensor& t, int64_t c) { return t.channel_scales.empty() ? t.scale : t.channel_scales[static_cast<size_t>(c)]; };
      const int64_t channels = in.shape.at(1);
      for (int64_t c0 = 0, c1 = 1; c0 < channels; c0 = c1++) {
        while (c1 < channels && at(in, c1) == at(in, c0) && at(out, c1) == at(out, c0)) ++c1;
        op.channel_tables.push_back({c0, c1, region_table(g_, grp.nodes, grp.input, grp.output, at(in, c0), at(out, c0))});
      }
    }
    q_.ops.push_back(std::move(op));
  }

  void clamp(size_t gi) {
    const Group& grp = p_.groups[gi];
    ClampOp op;
    op.nodes = node_names(grp);
    op.input = input(grp.input, gi);
    op.output = tensor(grp.output);
    op.lo = 0;
    op.hi = 127;
    q_.ops.push_back(std::move(op));
  }

  void pool(size_t gi) {
    const Group& grp = p_.groups[gi];
    const Node& n = g_.nodes[grp.nodes[0]];
    PoolOp op;
    op.nodes = node_names(grp);
    op.kind = grp.kind == GroupKind::kMaxPool ? PoolOp::Kind::kMax : PoolOp::Kind::kAvg;
    op.input = input(n.input(0), gi);
    op.output = tensor(grp.output);
    if (n.op_type.rfind("Global", 0) == 0) {
      const model::Shape& s = q_.tensor(op.input).shape;
      op.window.kernel_h = s[2];
      op.window.kernel_w = s[3];
    } else {
      std::string why;
      op.window = *npu_window(g_, n, NpuLimits::unbounded(), &why);
      op.count_pad = n.op_type == "AveragePool" && n.attr_int("count_include_pad", 0) != 0;
    }
    q_.ops.push_back(std::move(op));
  }

  void concat(size_t gi) {
    const Group& grp = p_.groups[gi];
    const Node& n = g_.nodes[grp.nodes[0]];
    ConcatOp op;
    op.nodes = node_names(grp);
    for (const std::string& in : n.inputs) op.inputs.push_back(input(in, gi));
    op.output = tensor(grp.output);
    const int64_t rank = static_cast<int64_t>(q_.tensor(op.output).shape.size());
    op.axis = n.attr_int("axis");
    if (op.axis < 0) op.axis += rank;
    q_.ops.push_back(std::move(op));
  }

  void alias(size_t gi) {
    const Group& grp = p_.groups[gi];
    AliasOp op;
    op.nodes = node_names(grp);
    op.input = input(grp.input, gi);
    op.output = tensor(grp.output);
    q_.ops.push_back(std::move(op));
  }

  void cpu(size_t gi) {
    const Group& grp = p_.groups[gi];
    CpuStepOp op;
    op.nodes = node_names(grp);
    op.graph = model::extract_subgraph(g_, grp.nodes);
    // Keep only the outputs the rest of the compiled graph reads (extract_subgraph looks at
    // nodes; a node's other outputs may feed nothing compiled).
    const std::vector<std::string> outs = group_outputs(g_, p_, grp);
    op.graph.outputs = outs;
    for (const std::string& in : op.graph.inputs) op.inputs.push_back(input(in, gi));
    for (const std::string& out : outs) op.outputs.push_back(tensor(out));
    q_.ops.push_back(std::move(op));
  }

  const Graph& g_;
  const Partition& p_;
  const ScalePlan& scales_;
  const QuantHints& hints_;
  QGraph q_;
};

}  // namespace

QGraph quantize(const Graph& graph, const Partition& partition, const ScalePlan& scales, const QuantHints& hints) {
  return Builder(graph, partition, scales, hints).run();
}

}  // namespace npuforge::compiler
