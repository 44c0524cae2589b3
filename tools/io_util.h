#pragma once
// The subcommands read and write whole files through isa/file_io.h.
#include "isa/error.h"
#include "isa/file_io.h"

namespace npuforge::tools {

using isa::read_file;
using isa::write_file;
inline std::string read_text(const std::filesystem::path& path) { return isa::read_file(path); }
inline std::vector<uint8_t> read_binary(const std::filesystem::path& path) { return isa::read_binary_file(path); }

}  // namespace npuforge::tools
