#pragma once
// Internal to gen/: splitting a byte count into DMA rows x row_bytes, each within what its
// field holds (DmaLimits, from the ISA: gen/roles.h).
#include <cstdint>

namespace npuforge::gen {

// The largest `rows` and `row_bytes` every LOAD and STORE of the ISA takes.
struct DmaLimits {
  uint64_t rows = 0;
  uint64_t row_bytes = 0;
};

// rows * row_bytes == bytes with both within `limits`; false (outputs untouched) when
// impossible. rows is the smallest such count in [r0, r0 + 4095], r0 = ceil(bytes /
// limits.row_bytes) the fewest rows that can hold the bytes.
bool factor_exact(uint64_t bytes, const DmaLimits& limits, uint32_t& rows, uint32_t& row_bytes);
// The largest rows * row_bytes <= bytes (rows minimal); bytes >= 1.
void factor_floor(uint64_t bytes, const DmaLimits& limits, uint32_t& rows, uint32_t& row_bytes);

}  // namespace npuforge::gen
