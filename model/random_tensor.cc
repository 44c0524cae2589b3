#include "model/random_tensor.h"

#include <cmath>

#include <fmt/core.h>

#include "util/error.h"

namespace npuforge::model {
namespace {

RandomRange dtype_limits(DType dtype) {
  switch (dtype) {
    case DType::kFloat32: return {-3.4e38, 3.4e38};
    case DType::kUInt8: return {0, 255};
    case DType::kInt8: return {-128, 127};
    case DType::kInt32: return {-2147483648.0, 2147483647.0};
    case DType::kInt64: return {-9.2e18, 9.2e18};
    case DType::kBool: return {0, 1};
  }
  return {};
}

template <typename T>
void fill_ints(Tensor& t, Rng& rng, int64_t lo, int64_t hi) {
  for (T& v : t.values<T>()) v = static_cast<T>(rng.range(lo, hi));
}

}  // namespace

RandomRange default_random_range(DType dtype) {
  if (dtype == DType::kFloat32) return {-1.0, 1.0};
  if (dtype == DType::kInt32 || dtype == DType::kInt64) return {-1000, 1000};
  return dtype_limits(dtype);
}

void fill_random(Tensor& t, Rng& rng, RandomRange range) {
  if (!(range.low <= range.high)) throw Error(fmt::format("low {} must not exceed high {}", range.low, range.high));
  if (t.dtype() == DType::kFloat32) {
    // 24 random bits: every value is exact in float and the stream is the same everywhere.
    for (float& v : t.values<float>())
      v = static_cast<float>(range.low + (range.high - range.low) * static_cast<double>(rng.next() >> 40) * 0x1p-24);
    return;
  }
  const RandomRange limits = dtype_limits(t.dtype());
  for (double bound : {range.low, range.high}) {
    if (bound != std::floor(bound) || bound < limits.low || bound > limits.high)
      throw Error(fmt::format("{} is not a valid {} value", bound, dtype_name(t.dtype())));
  }
  const auto lo = static_cast<int64_t>(range.low), hi = static_cast<int64_t>(range.high);
  switch (t.dtype()) {
    case DType::kUInt8: fill_ints<uint8_t>(t, rng, lo, hi); break;
    case DType::kInt8: fill_ints<int8_t>(t, rng, lo, hi); break;
    case DType::kInt32: fill_ints<int32_t>(t, rng, lo, hi); break;
    case DType::kInt64: fill_ints<int64_t>(t, rng, lo, hi); break;
    case DType::kBool: fill_ints<bool>(t, rng, lo, hi); break;
    case DType::kFloat32: break;
  }
}

}  // namespace npuforge::model
