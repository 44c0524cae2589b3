#pragma once
// The subcommands read and write whole files through util/file_io.h.
#include "util/error.h"
#include "util/file_io.h"

namespace npuforge::tools {

using util::read_file;
using util::write_file;
inline std::string read_text(const std::filesystem::path& path) { return util::read_file(path); }
inline std::vector<uint8_t> read_binary(const std::filesystem::path& path) { return util::read_binary_file(path); }

}  // namespace npuforge::tools
