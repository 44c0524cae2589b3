#include "model/tensor.h"

#include <cmath>

#include <fmt/core.h>

#include "util/error.h"

namespace npuforge::model {

size_t dtype_size(DType t) {
  switch (t) {
    case DType::kFloat32: return 4;
    case DType::kUInt8: return 1;
    case DType::kInt8: return 1;
    case DType::kInt32: return 4;
    case DType::kInt64: return 8;
    case DType::kBool: return 1;
  }
  return 1;
}

std::string_view dtype_name(DType t) {
  switch (t) {
    case DType::kFloat32: return "float32";
    case DType::kUInt8: return "uint8";
    case DType::kInt8: return "int8";
    case DType::kInt32: return "int32";
    case DType::kInt64: return "int64";
    case DType::kBool: return "bool";
  }
  return "?";
}

std::optional<DType> dtype_from_name(std::string_view name) {
  for (DType t : {DType::kFloat32, DType::kUInt8, DType::kInt8, DType::kInt32, DType::kInt64, DType::kBool})
    if (dtype_name(t) == name) return t;
  if (name == "float") return DType::kFloat32;
  return std::nullopt;
}

int64_t element_count(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) throw Error(fmt::format("shape {} has an unknown or negative dimension", shape_str(shape)));
    if (d != 0 && n > INT64_MAX / d) throw Error(fmt::format("shape {} has too many elements", shape_str(shape)));
    n *= d;
  }
  return n;
}

std::string shape_str(const Shape& shape) {
  if (shape.empty()) return "scalar";
  std::string s;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += 'x';
    s += shape[i] < 0 ? std::string("?") : std::to_string(shape[i]);
  }
  return s;
}

Tensor::Tensor(DType dtype, Shape shape) : dtype_(dtype), shape_(std::move(shape)) {
  numel_ = element_count(shape_);
  // 1 GiB, far above any tensor of the models npuforge targets: a larger one is a corrupt or
  // hostile shape (a YAML constant, a folded ConstantOfShape) and must be an error, not an
  // out-of-memory kill.
  const int64_t limit = int64_t{1} << 30;
  if (numel_ > limit / int64_t(dtype_size(dtype_)))
    throw Error(fmt::format("tensor of shape {} ({}) is too large (more than 1 GiB)", shape_str(shape_),
                            dtype_name(dtype_)));
  data_.assign(static_cast<size_t>(numel_) * dtype_size(dtype_), std::byte{0});
}

void Tensor::check_type(DType wanted) const {
  if (wanted != dtype_)
    throw Error(fmt::format("tensor of type {} read as {}", dtype_name(dtype_), dtype_name(wanted)));
}

void Tensor::throw_size_mismatch(const Shape& shape, size_t count) {
  throw Error(fmt::format("{} values given for a tensor of shape {}", count, shape_str(shape)));
}

int64_t Tensor::int_at(int64_t i) const {
  const std::byte* p = data_.data() + static_cast<size_t>(i) * dtype_size(dtype_);
  switch (dtype_) {
    case DType::kFloat32: return static_cast<int64_t>(*reinterpret_cast<const float*>(p));
    case DType::kUInt8: return *reinterpret_cast<const uint8_t*>(p);
    case DType::kInt8: return *reinterpret_cast<const int8_t*>(p);
    case DType::kInt32: return *reinterpret_cast<const int32_t*>(p);
    case DType::kInt64: return *reinterpret_cast<const int64_t*>(p);
    case DType::kBool: return *reinterpret_cast<const uint8_t*>(p) != 0;
  }
  return 0;
}

double Tensor::real_at(int64_t i) const {
  if (dtype_ == DType::kFloat32) return *reinterpret_cast<const float*>(data_.data() + static_cast<size_t>(i) * 4);
  return static_cast<double>(int_at(i));
}

std::vector<int64_t> Tensor::to_int64s() const {
  std::vector<int64_t> v(static_cast<size_t>(numel_));
  for (int64_t i = 0; i < numel_; ++i) v[static_cast<size_t>(i)] = int_at(i);
  return v;
}

Tensor Tensor::reshaped(Shape shape) const {
  if (element_count(shape) != numel_)
    throw Error(fmt::format("cannot reshape {} to {}", shape_str(shape_), shape_str(shape)));
  Tensor t = *this;
  t.shape_ = std::move(shape);
  return t;
}

}  // namespace npuforge::model
