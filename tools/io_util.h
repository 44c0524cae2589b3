#pragma once
// File helpers for the subcommands: whole-file reads and writes with errors naming the path.
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/core.h>

#include "isa/error.h"

namespace npuforge::tools {

inline std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(fmt::format("{}: cannot open file", path.string()));
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline std::vector<uint8_t> read_binary(const std::filesystem::path& path) {
  const std::string s = read_text(path);
  return {s.begin(), s.end()};
}

inline void write_file(const std::filesystem::path& path, std::string_view data) {
  std::ofstream out(path, std::ios::binary);
  if (!out) throw Error(fmt::format("{}: cannot write file", path.string()));
  out.write(data.data(), static_cast<std::streamsize>(data.size()));
  if (!out) throw Error(fmt::format("{}: write failed", path.string()));
}

inline void write_file(const std::filesystem::path& path, const std::vector<uint8_t>& data) {
  write_file(path, std::string_view(reinterpret_cast<const char*>(data.data()), data.size()));
}

}  // namespace npuforge::tools
