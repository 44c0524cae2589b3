#include "compiler/convert.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include <fmt/format.h>

#include "util/error.h"

namespace npuforge::compiler {

namespace {

void check_shape(const model::Tensor& x, const model::Shape& want, const QTensor& t, const char* what) {
  if (x.shape() != want)
    throw Error(fmt::format("tensor '{}': {} value has shape {}, expected {}", t.name, what, model::shape_str(x.shape()),
                            model::shape_str(want)));
}

// Copies element by element between ONNX [.., C, P] (P = H*W) and HWC [P][C] orders.
model::Tensor permute_hwc(const model::Tensor& x, model::Shape out_shape, int64_t c, int64_t p, bool to_hwc) {
  model::Tensor out(x.dtype(), std::move(out_shape));
  const size_t es = model::dtype_size(x.dtype());
  const std::byte* src = x.bytes().data();
  std::byte* dst = out.bytes().data();
  for (int64_t ci = 0; ci < c; ++ci)
    for (int64_t pi = 0; pi < p; ++pi) {
      const int64_t onnx = ci * p + pi, hwc = pi * c + ci;
      const int64_t from = to_hwc ? onnx : hwc, to = to_hwc ? hwc : onnx;
      std::memcpy(dst + to * es, src + from * es, es);
    }
  return out;
}

std::pair<int64_t, int64_t> channels_pixels(const QTensor& t) {
  const int64_t c = t.shape.at(1);
  return {c, c == 0 ? 0 : t.numel() / c};
}

// The scale of ONNX-order element i (channel = i / inner for an [1][C][inner] value).
float channel_scale(const QTensor& t, size_t i, int64_t inner) {
  if (t.channel_scales.empty()) return t.scale;
  return t.channel_scales[static_cast<size_t>(static_cast<int64_t>(i) / inner) % t.channel_scales.size()];
}

}  // namespace

int8_t quantize_value(float x, float scale) {
  const float q = std::nearbyint(x / scale);  // the default rounding mode: ties to even
  if (std::isnan(q)) return 0;
  return static_cast<int8_t>(std::clamp(q, -128.0f, 127.0f));
}

model::Tensor to_storage(const model::Tensor& onnx, const QTensor& t) {
  check_shape(onnx, t.shape, t, "ONNX-order");
  if (t.layout != Layout::kHWC) return onnx;
  const auto [c, p] = channels_pixels(t);
  return permute_hwc(onnx, t.storage_shape(), c, p, true);
}

model::Tensor from_storage(const model::Tensor& stored, const QTensor& t) {
  check_shape(stored, t.storage_shape(), t, "stored");
  if (t.layout != Layout::kHWC) return stored;
  const auto [c, p] = channels_pixels(t);
  return permute_hwc(stored, t.shape, c, p, false);
}

model::Tensor quantize(const model::Tensor& onnx_float, const QTensor& t) {
  check_shape(onnx_float, t.shape, t, "float");
  model::Tensor q(model::DType::kInt8, t.shape);
  auto in = onnx_float.values<float>();
  auto out = q.values<int8_t>();
  const int64_t inner = t.channel_scales.empty() ? 1 : t.numel() / t.shape.at(1);
  for (size_t i = 0; i < in.size(); ++i) out[i] = quantize_value(in[i], channel_scale(t, i, inner));
  return to_storage(q, t);
}

model::Tensor dequantize(const model::Tensor& stored, const QTensor& t) {
  const model::Tensor q = from_storage(stored, t);
  model::Tensor out(model::DType::kFloat32, t.shape);
  auto in = q.values<int8_t>();
  auto f = out.values<float>();
  const int64_t inner = t.channel_scales.empty() ? 1 : t.numel() / t.shape.at(1);
  for (size_t i = 0; i < in.size(); ++i) f[i] = static_cast<float>(in[i]) * channel_scale(t, i, inner);
  return out;
}

}  // namespace npuforge::compiler
