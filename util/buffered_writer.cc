#include "util/buffered_writer.h"

#include <cerrno>
#include <cstring>

#include <fmt/core.h>

#include "util/error.h"

namespace npuforge::util {

BufferedWriter::BufferedWriter(const std::filesystem::path& path, std::string_view what)
    : path_(path.string()), what_(what), file_(std::fopen(path_.c_str(), "wb")) {
  if (!file_) throw Error(fmt::format("{}: cannot create {}: {}", path_, what_, std::strerror(errno)));
  std::setvbuf(file_, nullptr, _IONBF, 0);  // this class is the buffer
}

BufferedWriter::~BufferedWriter() {
  if (file_) std::fclose(file_);
}

void BufferedWriter::write_through(const char* data, size_t size) {
  if (size > 0 && std::fwrite(data, 1, size, file_) != size && errno_ == 0) errno_ = errno != 0 ? errno : EIO;
}

void BufferedWriter::drain() {
  write_through(buffer_.get(), size_);
  size_ = 0;
}

void BufferedWriter::close() {
  if (!file_) return;
  drain();
  if (std::fclose(file_) != 0 && errno_ == 0) errno_ = errno != 0 ? errno : EIO;
  file_ = nullptr;
  if (errno_ != 0) throw Error(fmt::format("{}: cannot write {}: {}", path_, what_, std::strerror(errno_)));
}

}  // namespace npuforge::util
