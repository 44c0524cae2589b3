#pragma once
// NumPy .npy files (format versions 1, 2 and 3), the exchange format of model inputs and
// outputs: little-endian float32/uint8/int8/int32/int64/bool, C (row-major) order.
#include <cstdint>
#include <filesystem>
#include <span>
#include <string_view>
#include <vector>

#include "model/tensor.h"

namespace npuforge::model {

// Decodes an .npy image; `source` names it in errors ("x.npy: ..."). A bad magic, header,
// dtype, fortran_order True, a truncated body or trailing bytes are npuforge::Errors.
Tensor parse_npy(std::span<const uint8_t> bytes, std::string_view source);
Tensor read_npy(const std::filesystem::path& path);

// Encodes as format version 1.0 (header padded to a multiple of 64 bytes, as NumPy does).
std::vector<uint8_t> encode_npy(const Tensor& tensor);
void write_npy(const std::filesystem::path& path, const Tensor& tensor);

}  // namespace npuforge::model
