#pragma once
// Internal to gen/: splitting a byte count into DMA rows x row_bytes (both 16-bit fields).
#include <cstdint>

namespace npuforge::gen {

// rows * row_bytes == bytes with both fields in 16 bits; false (outputs untouched) when
// impossible. rows is the smallest such count in [r0, r0 + 4095], r0 = ceil(bytes / 65535)
// the fewest rows that can hold the bytes.
bool factor_exact(uint64_t bytes, uint32_t& rows, uint32_t& row_bytes);
// The largest rows * row_bytes <= bytes (rows minimal); bytes >= 1.
void factor_floor(uint64_t bytes, uint32_t& rows, uint32_t& row_bytes);

}  // namespace npuforge::gen
