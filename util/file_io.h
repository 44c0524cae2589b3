#pragma once
// Whole-file reads and writes with errors that name the path and what the file is, shared
// by every loader and writer of the project.
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace npuforge::util {

// Throws npuforge::Error "PATH: cannot open WHAT" when the file cannot be read.
std::string read_file(const std::filesystem::path& path, std::string_view what = "file");
std::vector<uint8_t> read_binary_file(const std::filesystem::path& path, std::string_view what = "file");

// Throws npuforge::Error "PATH: cannot write WHAT" when the file cannot be written whole.
void write_file(const std::filesystem::path& path, std::string_view data, std::string_view what = "file");
void write_file(const std::filesystem::path& path, std::span<const uint8_t> data, std::string_view what = "file");

}  // namespace npuforge::util
