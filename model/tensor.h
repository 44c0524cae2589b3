#pragma once
// Dense tensors of the model layer: an element type, a shape and row-major data that the
// tensor owns. Weights, activations and the values of shape sub-graphs are all Tensors.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "util/error.h"

namespace npuforge::model {

// The element types npuforge reads and computes. kBool exists for the comparisons that
// shape sub-graphs of exported models use; it is stored as one byte 0/1.
enum class DType : uint8_t { kFloat32, kUInt8, kInt8, kInt32, kInt64, kBool };

size_t dtype_size(DType t);
// "float32", "uint8", "int8", "int32", "int64", "bool".
std::string_view dtype_name(DType t);
std::optional<DType> dtype_from_name(std::string_view name);

template <class T> constexpr DType dtype_of();
template <> constexpr DType dtype_of<float>() { return DType::kFloat32; }
template <> constexpr DType dtype_of<uint8_t>() { return DType::kUInt8; }
template <> constexpr DType dtype_of<int8_t>() { return DType::kInt8; }
template <> constexpr DType dtype_of<int32_t>() { return DType::kInt32; }
template <> constexpr DType dtype_of<int64_t>() { return DType::kInt64; }
template <> constexpr DType dtype_of<bool>() { return DType::kBool; }

// Dimensions, outermost first. In a ValueInfo a dimension may be kUnknownDim; a Tensor's
// dimensions are always known and >= 0. A scalar has rank 0 and one element.
using Shape = std::vector<int64_t>;
inline constexpr int64_t kUnknownDim = -1;

// Product of the dimensions; throws npuforge::Error when a dimension is negative or the
// product overflows int64 (a malformed model must not allocate garbage).
int64_t element_count(const Shape& shape);
// "1x3x224x224"; "scalar" for rank 0; unknown dimensions print as "?".
std::string shape_str(const Shape& shape);

class Tensor {
 public:
  Tensor() = default;  // an empty float32 tensor of shape [0]
  Tensor(DType dtype, Shape shape);  // zero-filled

  template <class T>
  static Tensor from(Shape shape, std::span<const T> values);
  template <class T>
  static Tensor scalar(T value) {
    return from<T>({}, std::span<const T>(&value, 1));
  }

  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  size_t rank() const { return shape_.size(); }
  int64_t numel() const { return numel_; }
  // Size in bytes of the data.
  size_t byte_size() const { return data_.size(); }

  // Typed views; throw npuforge::Error when T does not match dtype() (bool reads as bool).
  template <class T>
  std::span<T> values();
  template <class T>
  std::span<const T> values() const;
  std::span<const std::byte> bytes() const { return data_; }
  std::span<std::byte> bytes() { return data_; }

  // Element i converted to int64 / double, whatever the dtype (for shape values, axes,
  // attributes and tests; not for inner loops).
  int64_t int_at(int64_t i) const;
  double real_at(int64_t i) const;
  // All elements as int64 (shape tensors, axes, pads).
  std::vector<int64_t> to_int64s() const;

  // The same data under another shape of the same element count.
  Tensor reshaped(Shape shape) const;

  friend bool operator==(const Tensor& a, const Tensor& b) {
    return a.dtype_ == b.dtype_ && a.shape_ == b.shape_ && a.data_ == b.data_;
  }

 private:
  void check_type(DType wanted) const;
  [[noreturn]] static void throw_size_mismatch(const Shape& shape, size_t count);

  DType dtype_ = DType::kFloat32;
  Shape shape_{0};
  int64_t numel_ = 0;
  // operator new aligns to __STDCPP_DEFAULT_NEW_ALIGNMENT__ (16), enough for every dtype.
  std::vector<std::byte> data_;
};

template <class T>
Tensor Tensor::from(Shape shape, std::span<const T> values) {
  Tensor t(dtype_of<T>(), std::move(shape));
  std::span<T> out = t.values<T>();
  if (out.size() != values.size()) throw_size_mismatch(t.shape_, values.size());
  for (size_t i = 0; i < values.size(); ++i) out[i] = values[i];
  return t;
}

template <class T>
std::span<T> Tensor::values() {
  check_type(dtype_of<T>());
  return {reinterpret_cast<T*>(data_.data()), static_cast<size_t>(numel_)};
}

template <class T>
std::span<const T> Tensor::values() const {
  check_type(dtype_of<T>());
  return {reinterpret_cast<const T*>(data_.data()), static_cast<size_t>(numel_)};
}

}  // namespace npuforge::model
