#include "compiler/drift.h"

#include <cmath>
#include <optional>

#include "compiler/convert.h"
#include "compiler/qref.h"

namespace npuforge::compiler {

namespace {

double cosine_of(const model::Tensor& a, const model::Tensor& b, double* max_abs = nullptr) {
  double ab = 0, aa = 0, bb = 0, mx = 0;
  for (int64_t k = 0; k < a.numel(); ++k) {
    const double x = a.real_at(k), y = b.real_at(k);
    ab += x * y;
    aa += x * x;
    bb += y * y;
    mx = std::max(mx, std::fabs(x - y));
  }
  if (max_abs) *max_abs = mx;
  return aa == 0 && bb == 0 ? 1 : aa == 0 || bb == 0 ? 0 : ab / std::sqrt(aa * bb);
}

// The float value quantized at one absmax scale per channel (axis 1 of an NCHW/NC value) and back.
model::Tensor absmax_round_trip(const model::Tensor& v, bool per_channel) {
  model::Tensor out(model::DType::kFloat32, v.shape());
  const model::Shape& s = v.shape();
  const int64_t c = s.size() >= 2 && per_channel ? s[1] : 1;
  const int64_t inner = s.size() >= 2 ? v.numel() / (s[0] * c) : v.numel();
  std::vector<float> absmax(static_cast<size_t>(c), 0.f);
  for (int64_t i = 0; i < v.numel(); ++i) {
    float& m = absmax[static_cast<size_t>((i / inner) % c)];
    m = std::max(m, static_cast<float>(std::fabs(v.real_at(i))));
  }
  auto y = out.values<float>();
  for (int64_t i = 0; i < v.numel(); ++i) {
    const float sc = absmax[static_cast<size_t>((i / inner) % c)] / 127;
    y[static_cast<size_t>(i)] = sc > 0 ? sc * quantize_value(static_cast<float>(v.real_at(i)), sc) : 0;
  }
  return out;
}

// The share of the squared error |a - b|^2 that is a per-channel constant (axis 1) shift: what a
// bias correction could remove.
double channel_mean_share(const model::Tensor& a, const model::Tensor& b) {
  const model::Shape& s = b.shape();
  if (s.size() < 3) return 0;
  const int64_t c = s[1], inner = b.numel() / (s[0] * c);
  std::vector<double> sum(static_cast<size_t>(c), 0.0);
  double total = 0;
  for (int64_t i = 0; i < b.numel(); ++i) {
    const double e = a.real_at(i) - b.real_at(i);
    sum[static_cast<size_t>((i / inner) % c)] += e;
    total += e * e;
  }
  double explained = 0;
  for (double v : sum) explained += v * v / static_cast<double>(inner * s[0]);
  return total > 0 ? explained / total : 0;
}

// The op on its inputs quantized from the float values, or nullopt when it has no float twin.
std::optional<model::Tensor> isolated_output(const QGraph& g, const QOp& op, const model::TensorMap& want) {
  auto in = [&](TensorId id) -> std::optional<model::Tensor> {
    const QTensor& t = g.tensor(id);
    auto w = want.find(t.name);
    if (!t.is_int8() || w == want.end()) return std::nullopt;
    return quantize(w->second, t);
  };
  return std::visit(
      [&](const auto& o) -> std::optional<model::Tensor> {
        using T = std::decay_t<decltype(o)>;
        if constexpr (std::is_same_v<T, EltwiseOp>) {
          auto a = in(o.a), b = in(o.b);
          if (!a || !b) return std::nullopt;
          return ref_eltwise(o, *a, *b);
        } else if constexpr (std::is_same_v<T, ConvOp> || std::is_same_v<T, GemmOp> || std::is_same_v<T, PoolOp> ||
                             std::is_same_v<T, LutOp> || std::is_same_v<T, ClampOp>) {
          auto x = in(o.input);
          if (!x) return std::nullopt;
          if constexpr (std::is_same_v<T, ConvOp>) return ref_conv(o, *x, g.tensor(o.output));
          if constexpr (std::is_same_v<T, GemmOp>) return ref_gemm(o, *x, g.tensor(o.output));
          if constexpr (std::is_same_v<T, PoolOp>) return ref_pool(o, *x, g.tensor(o.output));
          if constexpr (std::is_same_v<T, LutOp>) return ref_lut(o, *x);
          if constexpr (std::is_same_v<T, ClampOp>) return ref_clamp(o, *x);
        }
        return std::nullopt;
      },
      op);
}

}  // namespace

std::vector<LayerDrift> layer_drift(const QGraph& graph, const model::Graph& float_graph,
                                    const model::TensorMap& inputs) {
  model::RunOptions ro;
  ro.keep_intermediates = true;
  const model::TensorMap want = model::run_graph(float_graph, inputs, ro);
  const QrefResult got = run_qref(graph, inputs);
  std::vector<LayerDrift> out;
  for (size_t i = 0; i < graph.ops.size(); ++i)
    for (TensorId id : op_outputs(graph.ops[i])) {
      const QTensor& t = graph.tensor(id);
      auto w = want.find(t.name);
      if (!t.is_int8() || w == want.end()) continue;
      LayerDrift d;
      d.tensor = t.name;
      d.op = i;
      const model::Tensor q = dequantize(got.values.at(id.value), t);
      d.cosine = cosine_of(q, w->second, &d.max_abs);
      d.mean_share = channel_mean_share(q, w->second);
      d.scale = t.scale;
      d.rounding = cosine_of(dequantize(quantize(w->second, t), t), w->second);
      d.per_channel = cosine_of(absmax_round_trip(w->second, true), w->second);
      d.per_tensor = cosine_of(absmax_round_trip(w->second, false), w->second);
      if (op_outputs(graph.ops[i]).size() == 1)
        if (auto iso = isolated_output(graph, graph.ops[i], want)) d.isolated = cosine_of(dequantize(*iso, t), w->second);
      out.push_back(d);
    }
  return out;
}

}  // namespace npuforge::compiler
