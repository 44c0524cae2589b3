#pragma once
// Small named types for the quantities every part of npuforge passes around, so that an
// SRAM address cannot silently become a size or a DDR address.
#include <compare>
#include <cstdint>
#include <functional>

namespace npuforge {

// A byte count (operand size, capacity, padding).
struct Bytes {
  uint64_t value = 0;
  constexpr auto operator<=>(const Bytes&) const = default;
  constexpr Bytes operator+(Bytes o) const { return {value + o.value}; }
  constexpr Bytes operator-(Bytes o) const { return {value - o.value}; }
};

// A byte address in the on-chip scratchpad.
struct SramAddr {
  uint32_t value = 0;
  constexpr auto operator<=>(const SramAddr&) const = default;
  constexpr SramAddr operator+(Bytes b) const { return {static_cast<uint32_t>(value + b.value)}; }
  constexpr Bytes operator-(SramAddr o) const { return {uint64_t(value) - o.value}; }
};

// A byte address in off-chip DDR.
struct DdrAddr {
  uint64_t value = 0;
  constexpr auto operator<=>(const DdrAddr&) const = default;
};

// The name of a buffer before it has an address (an index into a symbol table).
struct SymbolId {
  uint32_t value = 0;
  constexpr auto operator<=>(const SymbolId&) const = default;
};

// Rounds `size` up to a multiple of `unit` (unit > 0).
constexpr Bytes align_up(Bytes size, Bytes unit) {
  return {(size.value + unit.value - 1) / unit.value * unit.value};
}

}  // namespace npuforge

template <>
struct std::hash<npuforge::SymbolId> {
  size_t operator()(npuforge::SymbolId s) const noexcept { return std::hash<uint32_t>{}(s.value); }
};
