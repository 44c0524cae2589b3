// Resize (opset 10, 11, 13) and Upsample (opset 7, 9): nearest (every nearest_mode),
// linear and cubic interpolation over any number of axes, every coordinate transformation
// mode, output from scales or sizes.
//
// Each output coordinate maps to the input per axis (coordinate transformation, computed
// in fp32 as onnxruntime does), giving per axis a list of (input index, weight) taps: one
// for nearest, two for linear, four for cubic. An output element is the sum over the
// tensor product of its axes' taps, in double, rounded once. Opset 10 Resize and Upsample
// use the "asymmetric" transformation and onnxruntime's legacy nearest rounding (down when
// upsampling, up when downsampling).
#include <algorithm>
#include <array>
#include <cmath>

#include <fmt/core.h>
#include <fmt/ranges.h>

#include "model/conv_setup.h"
#include "model/op_families.h"

namespace npuforge::model {
namespace {

enum class Mode { kNearest, kLinear, kCubic };
enum class Coord { kHalfPixel, kPytorchHalfPixel, kAlignCorners, kAsymmetric, kTfHalfPixelForNn, kTfCropAndResize };
enum class Nearest { kRoundPreferFloor, kRoundPreferCeil, kFloor, kCeil, kLegacy };

struct ResizeAttrs {
  Mode mode = Mode::kNearest;
  Coord coord = Coord::kAsymmetric;
  Nearest nearest = Nearest::kLegacy;
  float cubic_a = -0.75f;
  bool exclude_outside = false;
  float extrapolation = 0.0f;
};

template <class E>
E pick(const Node& node, std::string_view attr, const std::string& value,
       std::initializer_list<std::pair<std::string_view, E>> choices) {
  std::string names;
  for (const auto& [name, e] : choices) {
    if (name == value) return e;
    names += names.empty() ? "" : ", ";
    names += name;
  }
  node.fail(fmt::format("{} '{}' is not supported (supported: {})", attr, value, names));
}

bool is_upsample(const Node& node) { return node.op_type == "Upsample"; }

ResizeAttrs read_attrs(const Node& node, int64_t opset) {
  ResizeAttrs a;
  a.mode = pick<Mode>(node, "mode", node.attr_string("mode", "nearest"),
                      {{"nearest", Mode::kNearest}, {"linear", Mode::kLinear}, {"bilinear", Mode::kLinear},
                       {"cubic", Mode::kCubic}});
  if (is_upsample(node) || opset < 11) {
    if (a.mode == Mode::kCubic) node.fail("mode 'cubic' needs Resize from opset 11");
    return a;  // asymmetric, legacy nearest rounding
  }
  a.coord = pick<Coord>(node, "coordinate_transformation_mode", node.attr_string("coordinate_transformation_mode", "half_pixel"),
                        {{"half_pixel", Coord::kHalfPixel}, {"pytorch_half_pixel", Coord::kPytorchHalfPixel},
                         {"align_corners", Coord::kAlignCorners}, {"asymmetric", Coord::kAsymmetric},
                         {"tf_half_pixel_for_nn", Coord::kTfHalfPixelForNn}, {"tf_crop_and_resize", Coord::kTfCropAndResize}});
  a.nearest = pick<Nearest>(node, "nearest_mode", node.attr_string("nearest_mode", "round_prefer_floor"),
                            {{"round_prefer_floor", Nearest::kRoundPreferFloor}, {"round_prefer_ceil", Nearest::kRoundPreferCeil},
                             {"floor", Nearest::kFloor}, {"ceil", Nearest::kCeil}});
  a.cubic_a = node.attr_float("cubic_coeff_a", -0.75f);
  a.exclude_outside = node.attr_int("exclude_outside", 0) != 0;
  a.extrapolation = node.attr_float("extrapolation_value", 0.0f);
  return a;
}

// Input positions of the scales / sizes / roi inputs (kNone when the op has none).
constexpr size_t kNone = SIZE_MAX;
struct InputSlots {
  size_t roi = kNone, scales = kNone, sizes = kNone;
};
InputSlots slots(const Node& node, int64_t opset) {
  if (is_upsample(node)) return {kNone, opset >= 9 ? size_t{1} : kNone, kNone};
  if (opset < 11) return {kNone, 1, kNone};
  return {1, 2, 3};
}

const Tensor* present(const std::vector<const Tensor*>& values, size_t slot) {
  if (slot == kNone || slot >= values.size() || !values[slot] || values[slot]->numel() == 0) return nullptr;
  return values[slot];
}

// Scales and output extents. `in` may hold unknown dims; std::nullopt when scales or
// sizes are only known at run time.
struct Sizing {
  std::vector<float> scales;
  Shape out;
};

std::optional<Sizing> sizing(const Node& node, int64_t opset, const Shape& in, const std::vector<const Tensor*>& values,
                             bool inputs_present_but_unknown) {
  const size_t rank = in.size();
  const InputSlots s = slots(node, opset);
  const Tensor* scales = present(values, s.scales);
  const Tensor* sizes = present(values, s.sizes);
  Sizing r;
  if (is_upsample(node) && opset < 9) {
    const std::vector<float> attr = node.attr_floats("scales");
    r.scales = attr;
  } else if (scales && sizes) {
    node.fail("scales and sizes are both given; exactly one is allowed");
  } else if (scales) {
    if (scales->dtype() != DType::kFloat32) node.fail("scales must be float32");
    for (float v : scales->values<float>()) r.scales.push_back(v);
  } else if (sizes) {
    if (sizes->dtype() != DType::kInt64) node.fail("sizes must be int64");
    r.out = sizes->to_int64s();
    if (r.out.size() != rank) node.fail(fmt::format("sizes has {} values for a rank-{} input", r.out.size(), rank));
    for (size_t i = 0; i < rank; ++i) {
      if (r.out[i] < 1) node.fail(fmt::format("sizes [{}] must be >= 1", fmt::join(r.out, ",")));
      r.scales.push_back(in[i] == kUnknownDim ? 0.0f : static_cast<float>(r.out[i]) / static_cast<float>(in[i]));
    }
    return r;
  } else if (inputs_present_but_unknown) {
    return std::nullopt;
  } else {
    node.fail("neither scales nor sizes is given");
  }
  if (r.scales.size() != rank)
    node.fail(fmt::format("scales has {} values for a rank-{} input", r.scales.size(), rank));
  for (size_t i = 0; i < rank; ++i) {
    if (!(r.scales[i] > 0.0f) || !std::isfinite(r.scales[i]))
      node.fail(fmt::format("scales [{}] must be positive", fmt::join(r.scales, ",")));
    // floor(in * scale) in fp32, as onnxruntime computes it.
    r.out.push_back(in[i] == kUnknownDim ? kUnknownDim : static_cast<int64_t>(r.scales[i] * static_cast<float>(in[i])));
  }
  return r;
}

InferResult infer_resize(const InferContext& ctx) {
  const Node& node = ctx.node;
  const ValueInfo& x = ctx.input(0);
  const ResizeAttrs a = read_attrs(node, ctx.opset);
  if (a.mode != Mode::kNearest) require_dtype(node, 0, x.dtype, {DType::kFloat32});
  ValueInfo y;
  y.dtype = x.dtype;
  if (!x.has_shape) return {{y}, {}};
  const InputSlots s = slots(node, ctx.opset);
  std::vector<const Tensor*> values;
  bool unknown = false;
  for (size_t i = 0; i < ctx.input_count(); ++i) {
    values.push_back(ctx.constant(i));
    // A run-time scales/sizes input: its ValueInfo may still say it is empty (size 0).
    if (ctx.has_input(i) && !ctx.constant(i) && (i == s.scales || i == s.sizes)) {
      const ValueInfo& v = ctx.input(i);
      if (!(v.has_shape && v.shape_known() && element_count(v.shape) == 0)) unknown = true;
    }
  }
  const std::optional<Sizing> sz = sizing(node, ctx.opset, x.shape, values, unknown);
  return {{known(x.dtype, sz ? sz->out : Shape(x.shape.size(), kUnknownDim))}, {}};
}

// ---- the interpolation ----

struct Tap {
  int64_t index;
  double weight;
};

struct AxisTaps {
  std::vector<std::vector<Tap>> taps;  // per output coordinate
  std::vector<bool> outside;           // tf_crop_and_resize: coordinate outside the input
};

float original_coordinate(Coord c, int64_t x_out, float scale, int64_t in, int64_t out, float roi_start, float roi_end) {
  const float x = static_cast<float>(x_out);
  switch (c) {
    case Coord::kHalfPixel: return (x + 0.5f) / scale - 0.5f;
    case Coord::kPytorchHalfPixel: return out > 1 ? (x + 0.5f) / scale - 0.5f : 0.0f;
    case Coord::kAlignCorners:
      return out == 1 ? 0.0f : x * static_cast<float>(in - 1) / static_cast<float>(out - 1);
    case Coord::kAsymmetric: return x / scale;
    case Coord::kTfHalfPixelForNn: return (x + 0.5f) / scale;
    case Coord::kTfCropAndResize:
      return out > 1 ? roi_start * static_cast<float>(in - 1) +
                           x * (roi_end - roi_start) * static_cast<float>(in - 1) / static_cast<float>(out - 1)
                     : 0.5f * (roi_start + roi_end) * static_cast<float>(in - 1);
  }
  return x;
}

int64_t nearest_index(Nearest m, float x, bool downsampling) {
  switch (m) {
    case Nearest::kRoundPreferFloor: return static_cast<int64_t>(x == std::floor(x) + 0.5f ? std::floor(x) : std::round(x));
    case Nearest::kRoundPreferCeil: return static_cast<int64_t>(x == std::floor(x) + 0.5f ? std::ceil(x) : std::round(x));
    case Nearest::kFloor: return static_cast<int64_t>(std::floor(x));
    case Nearest::kCeil: return static_cast<int64_t>(std::ceil(x));
    case Nearest::kLegacy: return downsampling ? static_cast<int64_t>(std::ceil(x)) : static_cast<int64_t>(x);
  }
  return 0;
}

std::array<double, 4> cubic_coefficients(double s, double a) {
  auto near = [a](double t) { return ((a + 2) * t - (a + 3)) * t * t + 1; };           // |t| <= 1
  auto far = [a](double t) { return ((a * t - 5 * a) * t + 8 * a) * t - 4 * a; };    // 1 < |t| < 2
  return {far(s + 1), near(s), near(1 - s), far(2 - s)};
}

AxisTaps axis_taps(const ResizeAttrs& a, int64_t in, int64_t out, float scale, float roi_start, float roi_end) {
  AxisTaps t;
  auto clamp = [in](int64_t i) { return std::clamp<int64_t>(i, 0, in - 1); };
  for (int64_t o = 0; o < out; ++o) {
    const float x = original_coordinate(a.coord, o, scale, in, out, roi_start, roi_end);
    t.outside.push_back(a.coord == Coord::kTfCropAndResize && (x < 0 || x > static_cast<float>(in - 1)));
    std::vector<Tap> taps;
    if (a.mode == Mode::kNearest) {
      taps.push_back({clamp(nearest_index(a.nearest, x, scale < 1.0f)), 1.0});
    } else if (a.mode == Mode::kLinear) {
      const float xc = std::clamp(x, 0.0f, static_cast<float>(in - 1));
      const int64_t x1 = std::min<int64_t>(static_cast<int64_t>(xc), in - 1), x2 = std::min<int64_t>(x1 + 1, in - 1);
      const double frac = x1 == x2 ? 0.5 : static_cast<double>(xc) - static_cast<double>(x1);
      taps = {{x1, 1.0 - frac}, {x2, frac}};
    } else {
      const double xf = std::floor(static_cast<double>(x));
      const std::array<double, 4> c = cubic_coefficients(static_cast<double>(x) - xf, a.cubic_a);
      double sum = 0;
      for (int k = 0; k < 4; ++k) {
        const int64_t i = static_cast<int64_t>(xf) - 1 + k;
        const bool outside = i < 0 || i >= in;
        const double w = a.exclude_outside && outside ? 0.0 : c[static_cast<size_t>(k)];
        taps.push_back({clamp(i), w});
        sum += w;
      }
      if (a.exclude_outside && sum != 0.0)
        for (Tap& tap : taps) tap.weight /= sum;
    }
    t.taps.push_back(std::move(taps));
  }
  return t;
}

// Sum over every combination of one tap per axis for output coordinate `o`.
template <class T>
double weighted_sum(const std::vector<AxisTaps>& axes, const std::vector<int64_t>& o,
                    const std::vector<int64_t>& in_stride, std::span<const T> xv) {
  const size_t rank = axes.size();
  std::vector<size_t> pick(rank, 0);
  double sum = 0;
  while (true) {
    double w = 1;
    int64_t off = 0;
    for (size_t d = 0; d < rank; ++d) {
      const Tap& t = axes[d].taps[static_cast<size_t>(o[d])][pick[d]];
      w *= t.weight;
      off += t.index * in_stride[d];
    }
    sum += w * static_cast<double>(xv[static_cast<size_t>(off)]);
    size_t d = rank;  // next combination, odometer style
    for (; d > 0; --d) {
      if (++pick[d - 1] < axes[d - 1].taps[static_cast<size_t>(o[d - 1])].size()) break;
      pick[d - 1] = 0;
    }
    if (d == 0) return sum;
  }
}

template <class T>
void interpolate(const Tensor& x, const std::vector<AxisTaps>& axes, const ResizeAttrs& a, Tensor& y) {
  const Shape& in = x.shape();
  const Shape& out = y.shape();
  const size_t rank = in.size();
  std::vector<int64_t> in_stride(rank, 1);
  for (size_t i = rank; i-- > 1;) in_stride[i - 1] = in_stride[i] * in[i];
  std::span<const T> xv = x.values<T>();
  std::span<T> yv = y.values<T>();
  std::vector<int64_t> o(rank, 0);
  for (int64_t flat = 0; flat < y.numel(); ++flat) {
    bool outside = false;
    for (size_t d = 0; d < rank; ++d) outside = outside || axes[d].outside[static_cast<size_t>(o[d])];
    T& dst = yv[static_cast<size_t>(flat)];
    if (outside) {
      dst = static_cast<T>(a.extrapolation);
    } else if (a.mode == Mode::kNearest) {  // one tap of weight 1 per axis: a copy
      int64_t off = 0;
      for (size_t d = 0; d < rank; ++d) off += axes[d].taps[static_cast<size_t>(o[d])][0].index * in_stride[d];
      dst = xv[static_cast<size_t>(off)];
    } else {
      dst = static_cast<T>(weighted_sum(axes, o, in_stride, xv));
    }
    for (size_t d = rank; d-- > 0;) {
      if (++o[d] < out[d]) break;
      o[d] = 0;
    }
  }
}

std::vector<Tensor> run_resize(const RunContext& ctx) {
  const Node& node = ctx.node;
  const Tensor& x = ctx.input(0);
  const ResizeAttrs a = read_attrs(node, ctx.opset);
  if (a.mode != Mode::kNearest) require_dtype(node, 0, x.dtype(), {DType::kFloat32});
  if (x.rank() == 0) node.fail("input is a scalar; there is nothing to resize");
  const Sizing sz = *sizing(node, ctx.opset, x.shape(), ctx.inputs, false);
  const size_t rank = x.rank();
  std::vector<float> roi(2 * rank, 0.0f);
  for (size_t i = rank; i < 2 * rank; ++i) roi[i] = 1.0f;
  if (a.coord == Coord::kTfCropAndResize) {
    const Tensor* r = present(ctx.inputs, slots(node, ctx.opset).roi);
    if (!r || r->numel() != static_cast<int64_t>(2 * rank))
      node.fail(fmt::format("tf_crop_and_resize needs roi with {} values (starts, then ends)", 2 * rank));
    for (size_t i = 0; i < 2 * rank; ++i) roi[i] = static_cast<float>(r->real_at(static_cast<int64_t>(i)));
  }
  std::vector<AxisTaps> axes;
  for (size_t i = 0; i < rank; ++i) {
    if (sz.out[i] < 1 && x.shape()[i] > 0) node.fail(fmt::format("output extent {} on axis {} is below 1", sz.out[i], i));
    axes.push_back(axis_taps(a, x.shape()[i], sz.out[i], sz.scales[i], roi[i], roi[i + rank]));
  }
  Tensor y(x.dtype(), sz.out);
  switch (x.dtype()) {
    case DType::kFloat32: interpolate<float>(x, axes, a, y); break;
    case DType::kUInt8: interpolate<uint8_t>(x, axes, a, y); break;
    case DType::kInt8: interpolate<int8_t>(x, axes, a, y); break;
    case DType::kInt32: interpolate<int32_t>(x, axes, a, y); break;
    case DType::kInt64: interpolate<int64_t>(x, axes, a, y); break;
    case DType::kBool: interpolate<bool>(x, axes, a, y); break;
  }
  std::vector<Tensor> out;
  out.push_back(std::move(y));
  return out;
}

}  // namespace

void register_resize_ops(OpRegistry& r) {
  r.add({"", "Resize", 10, 17, infer_resize, run_resize});
  r.add({"", "Upsample", 7, 17, infer_resize, run_resize});
}

}  // namespace npuforge::model
