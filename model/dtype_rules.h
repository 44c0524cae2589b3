#pragma once
// Element-type dispatch and the sets of element types an op accepts (internal to the
// element-wise, shape and quantization op families).
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <type_traits>

#include <fmt/core.h>

#include "model/ir.h"
#include "model/tensor.h"

namespace npuforge::model {

class DTypeSet {
 public:
  constexpr DTypeSet() = default;
  constexpr DTypeSet(std::initializer_list<DType> types) {
    for (DType t : types) bits_ |= bit(t);
  }
  constexpr bool contains(DType t) const { return (bits_ & bit(t)) != 0; }
  constexpr DTypeSet operator|(DTypeSet o) const {
    DTypeSet s;
    s.bits_ = bits_ | o.bits_;
    return s;
  }
  std::string str() const {
    std::string s;
    for (DType t : {DType::kFloat32, DType::kUInt8, DType::kInt8, DType::kInt32, DType::kInt64, DType::kBool})
      if (contains(t)) s += (s.empty() ? "" : ", ") + std::string(dtype_name(t));
    return s;
  }

 private:
  static constexpr uint32_t bit(DType t) { return uint32_t{1} << static_cast<unsigned>(t); }
  uint32_t bits_ = 0;
};

inline constexpr DTypeSet kFloatTypes{DType::kFloat32};
inline constexpr DTypeSet kWideTypes{DType::kFloat32, DType::kInt32, DType::kInt64};
inline constexpr DTypeSet kSignedTypes{DType::kFloat32, DType::kInt8, DType::kInt32, DType::kInt64};
inline constexpr DTypeSet kNumericTypes{DType::kFloat32, DType::kUInt8, DType::kInt8, DType::kInt32, DType::kInt64};
inline constexpr DTypeSet kAllTypes = kNumericTypes | DTypeSet{DType::kBool};
inline constexpr DTypeSet kBoolType{DType::kBool};
inline constexpr DTypeSet kIndexTypes{DType::kInt32, DType::kInt64};

// `before` up to opset version-1, `from` from opset `version` on: most ops widened their
// type list at some version (Add to 8-bit integers at 14, Max/Min at 12, ...).
constexpr DTypeSet types_since(int64_t opset, int64_t version, DTypeSet before, DTypeSet from) {
  return opset >= version ? from : before;
}

// An error naming the node, the operand and the type when `t` is not accepted.
inline void require_dtype(const Node& node, std::string_view operand, DType t, DTypeSet allowed, int64_t opset) {
  if (!allowed.contains(t))
    node.fail(fmt::format("{} has element type {}, not supported at opset {} (supported: {})", operand,
                          dtype_name(t), opset, allowed.str()));
}

inline void require_same_dtype(const Node& node, std::string_view a, DType ta, std::string_view b, DType tb) {
  if (ta != tb)
    node.fail(fmt::format("{} ({}) and {} ({}) must have the same element type", a, dtype_name(ta), b, dtype_name(tb)));
}

// Calls f(std::type_identity<T>{}) with the C++ type of `t`.
template <class F>
decltype(auto) visit_dtype(DType t, F&& f) {
  switch (t) {
    case DType::kFloat32: return f(std::type_identity<float>{});
    case DType::kUInt8: return f(std::type_identity<uint8_t>{});
    case DType::kInt8: return f(std::type_identity<int8_t>{});
    case DType::kInt32: return f(std::type_identity<int32_t>{});
    case DType::kInt64: return f(std::type_identity<int64_t>{});
    case DType::kBool: return f(std::type_identity<bool>{});
  }
  return f(std::type_identity<float>{});
}

// As visit_dtype for the numeric types; bool maps to uint8_t (callers reject bool first,
// this only keeps arithmetic on bool from being instantiated).
template <class F>
decltype(auto) visit_numeric(DType t, F&& f) {
  switch (t) {
    case DType::kFloat32: return f(std::type_identity<float>{});
    case DType::kUInt8:
    case DType::kBool: return f(std::type_identity<uint8_t>{});
    case DType::kInt8: return f(std::type_identity<int8_t>{});
    case DType::kInt32: return f(std::type_identity<int32_t>{});
    case DType::kInt64: return f(std::type_identity<int64_t>{});
  }
  return f(std::type_identity<float>{});
}

}  // namespace npuforge::model
