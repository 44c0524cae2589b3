#include "compiler/calibrate.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "model/npy.h"
#include "util/error.h"
#include "util/rng.h"

namespace npuforge::compiler {

namespace {

constexpr size_t kBins = 2048;

struct Accumulator {
  float min = std::numeric_limits<float>::infinity();
  float max = -std::numeric_limits<float>::infinity();
  std::vector<uint64_t> histogram;  // |x| in kBins bins over [0, absmax], pass 2
  uint64_t zeros = 0;
  std::vector<float> channel_absmax;  // rank-4 values, pass 1
  float absmax() const { return std::max(std::fabs(min), std::fabs(max)); }
};

model::Tensor random_input(const model::ValueInfo& info, const std::string& name, Rng& rng, float lo, float hi) {
  if (info.dtype != model::DType::kFloat32)
    throw Error(fmt::format("input '{}' is {}: seeded random calibration inputs are float32 only; give .npy files",
                            name, model::dtype_name(info.dtype)));
  model::Tensor t(model::DType::kFloat32, info.shape);
  for (float& v : t.values<float>())
    v = lo + (hi - lo) * static_cast<float>(static_cast<double>(rng.next() >> 11) * 0x1.0p-53);
  return t;
}

template <class F>
void for_float_outputs(const model::Node& node, std::span<const model::Tensor> outputs, F f) {
  for (size_t i = 0; i < outputs.size() && i < node.outputs.size(); ++i)
    if (!node.outputs[i].empty() && outputs[i].dtype() == model::DType::kFloat32) f(node.outputs[i], outputs[i]);
}

}  // namespace

std::string_view clip_method_name(ClipMethod m) {
  switch (m) {
    case ClipMethod::kAbsMax: return "absmax";
    case ClipMethod::kPercentile: return "percentile";
    case ClipMethod::kMse: return "mse";
  }
  return "?";
}

std::string clip_candidate_name(const ClipCandidate& c) {
  if (c.method == ClipMethod::kPercentile) return fmt::format("percentile {}", c.percentile);
  return std::string(clip_method_name(c.method));
}

std::vector<model::TensorMap> calibration_inputs(const model::Graph& graph, const CalibrationOptions& options,
                                                 std::string* source) {
  std::vector<model::TensorMap> samples;
  const size_t n_in = graph.inputs.size();
  if (!options.files.empty()) {
    if (n_in == 0 || options.files.size() % n_in != 0)
      throw Error(fmt::format("{} calibration files for a model with {} inputs: give one file per input per sample",
                              options.files.size(), n_in));
    for (size_t s = 0; s < options.files.size() / n_in; ++s) {
      model::TensorMap m;
      for (size_t i = 0; i < n_in; ++i) {
        const auto& path = options.files[s * n_in + i];
        model::Tensor t = model::read_npy(path);
        const model::ValueInfo* info = graph.find_value(graph.inputs[i]);
        if (info && (t.dtype() != info->dtype || (info->shape_known() && t.shape() != info->shape)))
          throw Error(fmt::format("{}: {} {} does not fit input '{}' ({} {})", path.string(),
                                  model::dtype_name(t.dtype()), model::shape_str(t.shape()), graph.inputs[i],
                                  model::dtype_name(info->dtype), model::shape_str(info->shape)));
        m[graph.inputs[i]] = std::move(t);
      }
      samples.push_back(std::move(m));
    }
    if (source) {
      std::string names;
      for (const auto& f : options.files) {
        if (!names.empty()) names += ' ';
        names += f.filename().string();
      }
      *source = fmt::format("{} sample(s) from files: {}", samples.size(), names);
    }
    return samples;
  }
  if (options.random_samples < 1) throw Error("calibration needs at least one sample (random_samples >= 1)");
  Rng rng(options.seed);
  for (int s = 0; s < options.random_samples; ++s) {
    model::TensorMap m;
    for (const std::string& in : graph.inputs) {
      const model::ValueInfo* info = graph.find_value(in);
      if (!info || !info->shape_known()) throw Error(fmt::format("input '{}' has no known shape", in));
      m[in] = random_input(*info, in, rng, options.random_lo, options.random_hi);
    }
    samples.push_back(std::move(m));
  }
  if (source)
    *source = fmt::format("{} seeded random sample(s) (seed {}, uniform in [{}, {})): no calibration files given",
                          options.random_samples, options.seed, options.random_lo, options.random_hi);
  return samples;
}

float choose_clip(const std::vector<uint64_t>& histogram, float absmax, uint64_t zeros, ClipMethod method,
                  double percentile) {
  if (!(absmax > 0)) return 0;
  if (method == ClipMethod::kAbsMax || histogram.empty()) return absmax;
  const size_t bins = histogram.size();
  const double width = absmax / static_cast<double>(bins);
  uint64_t total = zeros;
  for (uint64_t c : histogram) total += c;
  if (method == ClipMethod::kPercentile) {
    const double want = percentile / 100.0 * static_cast<double>(total);
    double seen = static_cast<double>(zeros);
    for (size_t b = 0; b < bins; ++b) {
      seen += static_cast<double>(histogram[b]);
      if (seen >= want) return static_cast<float>((static_cast<double>(b) + 1) * width);
    }
    return absmax;
  }
  // MSE: clip at the end of bin c; values below round with error step^2/12 (step = clip/127),
  // values above saturate with error (x - clip)^2 (x at its bin centre). Exact zeros are exact.
  double best = std::numeric_limits<double>::infinity();
  size_t best_c = bins - 1;
  std::vector<double> suffix_n(bins + 1, 0), suffix_x(bins + 1, 0), suffix_x2(bins + 1, 0);
  for (size_t b = bins; b-- > 0;) {
    const double n = static_cast<double>(histogram[b]), x = (static_cast<double>(b) + 0.5) * width;
    suffix_n[b] = suffix_n[b + 1] + n;
    suffix_x[b] = suffix_x[b + 1] + n * x;
    suffix_x2[b] = suffix_x2[b + 1] + n * x * x;
  }
  for (size_t c = bins / 64; c < bins; ++c) {
    const double clip = (static_cast<double>(c) + 1) * width;
    const double step = clip / 127.0;
    const double below = (static_cast<double>(total - zeros) - suffix_n[c + 1]) * step * step / 12.0;
    const double above = suffix_x2[c + 1] - 2 * clip * suffix_x[c + 1] + clip * clip * suffix_n[c + 1];
    if (below + above < best) {
      best = below + above;
      best_c = c;
    }
  }
  return static_cast<float>((static_cast<double>(best_c) + 1) * width);
}

Calibration calibrate(const model::Graph& graph, const CalibrationOptions& options) {
  Calibration cal;
  const std::vector<model::TensorMap> samples = calibration_inputs(graph, options, &cal.source);
  cal.samples = static_cast<int>(samples.size());
  const model::Interpreter interp(graph);
  std::map<std::string, Accumulator, std::less<>> acc;

  const auto observe_range = [&](const std::string& name, const model::Tensor& t) {
    Accumulator& a = acc[name];
    for (float v : t.values<float>()) {
      if (std::isnan(v)) continue;
      a.min = std::min(a.min, v);
      a.max = std::max(a.max, v);
    }
    if (t.rank() != 4 || t.shape()[1] < 1) return;
    const int64_t channels = t.shape()[1], inner = t.numel() / (t.shape()[0] * channels);
    a.channel_absmax.resize(static_cast<size_t>(channels), 0.f);
    const auto v = t.values<float>();
    for (size_t i = 0; i < v.size(); ++i) {
      float& m = a.channel_absmax[static_cast<size_t>(static_cast<int64_t>(i) / inner % channels)];
      if (!std::isnan(v[i])) m = std::max(m, std::fabs(v[i]));
    }
  };
  const auto observe_histogram = [&](const std::string& name, const model::Tensor& t) {
    Accumulator& a = acc[name];
    const float m = a.absmax();
    if (!(m > 0) || !std::isfinite(m)) return;
    if (a.histogram.empty()) a.histogram.assign(kBins, 0);
    const double per = static_cast<double>(kBins) / m;
    for (float v : t.values<float>()) {
      if (v == 0 || std::isnan(v)) {
        a.zeros += v == 0;
        continue;
      }
      const size_t b = std::min(kBins - 1, static_cast<size_t>(std::fabs(v) * per));
      ++a.histogram[b];
    }
  };

  const bool need_histogram = options.method != ClipMethod::kAbsMax;
  for (int pass = 0; pass < (need_histogram ? 2 : 1); ++pass) {
    const auto observe = pass == 0 ? std::function(observe_range) : std::function(observe_histogram);
    for (const model::TensorMap& inputs : samples) {
      for (const auto& [name, t] : inputs)
        if (t.dtype() == model::DType::kFloat32) observe(name, t);
      model::RunOptions ro;
      ro.on_node = [&](const model::Node& node, std::span<const model::Tensor> outs) {
        for_float_outputs(node, outs, observe);
      };
      interp.run(inputs, ro);
    }
  }
  for (const auto& [name, a] : acc) {
    ValueRange r;
    if (a.min <= a.max) {
      r.min = a.min;
      r.max = a.max;
    }
    r.clip = std::min(choose_clip(a.histogram, a.absmax(), a.zeros, options.method, options.percentile), a.absmax());
    if (!std::isfinite(r.clip)) r.clip = std::numeric_limits<float>::max();
    r.channel_absmax = a.channel_absmax;
    cal.ranges[name] = r;
  }
  return cal;
}

}  // namespace npuforge::compiler
