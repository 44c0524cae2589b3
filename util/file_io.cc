#include "util/file_io.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>

#include <fmt/core.h>

#include "util/error.h"

namespace npuforge::util {

std::string read_file(const std::filesystem::path& path, std::string_view what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(fmt::format("{}: cannot open {}", path.string(), what));
  std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  if (in.bad()) throw Error(fmt::format("{}: cannot read {}", path.string(), what));
  return text;
}

std::vector<uint8_t> read_binary_file(const std::filesystem::path& path, std::string_view what) {
  const std::string text = read_file(path, what);
  return {text.begin(), text.end()};
}

void write_file(const std::filesystem::path& path, std::string_view data, std::string_view what) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw Error(fmt::format("{}: cannot create {}: {}", path.string(), what, std::strerror(errno)));
  errno = 0;
  out.write(data.data(), static_cast<std::streamsize>(data.size()));
  out.close();  // a full disk often shows only when the buffer is flushed
  if (!out)
    throw Error(fmt::format("{}: cannot write {} ({} bytes): {}", path.string(), what, data.size(),
                            errno != 0 ? std::strerror(errno) : "write failed"));
}

void write_file(const std::filesystem::path& path, std::span<const uint8_t> data, std::string_view what) {
  write_file(path, std::string_view(reinterpret_cast<const char*>(data.data()), data.size()), what);
}

}  // namespace npuforge::util
