#include "model/qlinear_util.h"

#include <algorithm>
#include <cmath>

#include <fmt/core.h>

namespace npuforge::model {
namespace {

void check_count(const Node& node, const Tensor& t, std::string_view name, int64_t count) {
  const bool single = t.numel() == 1 && t.rank() <= 1;
  const bool per_index = count > 0 && t.rank() == 1 && t.numel() == count;
  if (single || per_index) return;
  node.fail(count > 0 ? fmt::format("{} has shape {}, expected a scalar or {} values", name, shape_str(t.shape()), count)
                      : fmt::format("{} has shape {}, expected a scalar", name, shape_str(t.shape())));
}

}  // namespace

bool is_8bit(DType t) { return t == DType::kUInt8 || t == DType::kInt8; }

PerIndex<int32_t> read_zero_point(const Node& node, const Tensor* zp, std::string_view name, DType expected,
                                  int64_t count) {
  if (!zp) return {{0}};
  if (zp->dtype() != expected)
    node.fail(fmt::format("{} has type {}, expected {} (the type of its tensor)", name, dtype_name(zp->dtype()),
                          dtype_name(expected)));
  check_count(node, *zp, name, count);
  PerIndex<int32_t> r;
  for (int64_t i = 0; i < zp->numel(); ++i) r.values.push_back(static_cast<int32_t>(zp->int_at(i)));
  return r;
}

PerIndex<float> read_scale(const Node& node, const Tensor& scale, std::string_view name, int64_t count) {
  if (scale.dtype() != DType::kFloat32)
    node.fail(fmt::format("{} has type {}, expected float32", name, dtype_name(scale.dtype())));
  check_count(node, scale, name, count);
  PerIndex<float> r;
  for (float v : scale.values<float>()) {
    if (!(v > 0.0f) || !std::isfinite(v)) node.fail(fmt::format("{} {} is not a positive finite number", name, v));
    r.values.push_back(v);
  }
  return r;
}

std::vector<uint32_t> centred(const Tensor& t, const PerIndex<int32_t>& zp, int64_t inner) {
  std::vector<uint32_t> out(static_cast<size_t>(t.numel()));
  const int64_t slices = static_cast<int64_t>(zp.values.size());
  auto fill = [&](auto values) {
    for (int64_t i = 0; i < t.numel(); ++i) {
      const int32_t z = zp.per_tensor() ? zp.values[0] : zp.values[static_cast<size_t>(i / inner % slices)];
      out[static_cast<size_t>(i)] = static_cast<uint32_t>(static_cast<int32_t>(values[static_cast<size_t>(i)]) - z);
    }
  };
  if (t.dtype() == DType::kUInt8) fill(t.values<uint8_t>());
  else fill(t.values<int8_t>());
  return out;
}

int32_t requantize(int32_t acc, float multiplier, int32_t zero_point, DType out) {
  const float lo = out == DType::kUInt8 ? 0.0f : -128.0f;
  const float hi = out == DType::kUInt8 ? 255.0f : 127.0f;
  const float scaled = static_cast<float>(acc) * multiplier;
  // nearbyint in the default rounding mode rounds ties to even; clamping in float first
  // keeps huge values (and infinities) away from the int conversion.
  const float shifted = std::nearbyint(scaled) + static_cast<float>(zero_point);
  return static_cast<int32_t>(std::clamp(shifted, lo, hi));
}

void store_8bit(Tensor& t, int64_t i, int32_t v) {
  if (t.dtype() == DType::kUInt8) t.values<uint8_t>()[static_cast<size_t>(i)] = static_cast<uint8_t>(v);
  else t.values<int8_t>()[static_cast<size_t>(i)] = static_cast<int8_t>(v);
}

}  // namespace npuforge::model
