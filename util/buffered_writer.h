#pragma once
// A file written through one fixed buffer: text is appended (or formatted) into it and handed
// to the OS a buffer at a time, so a large output (a million-instruction program's assembly)
// is never built as one string first. Errors name the path and what the file is.
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>

#include <fmt/format.h>

namespace npuforge::util {

class BufferedWriter {
 public:
  static constexpr size_t kBufferBytes = size_t{1} << 20;

  // Opens (truncates) the file; throws npuforge::Error "PATH: cannot write WHAT".
  BufferedWriter(const std::filesystem::path& path, std::string_view what = "file");
  ~BufferedWriter();  // closes without reporting errors: call close() to see them
  BufferedWriter(const BufferedWriter&) = delete;
  BufferedWriter& operator=(const BufferedWriter&) = delete;

  void put(std::string_view text) {
    if (buffer_.size() + text.size() > kBufferBytes) drain();
    if (text.size() >= kBufferBytes) write_through(text.data(), text.size());
    else buffer_.append(text);
  }
  void put(char c) {
    if (buffer_.size() == kBufferBytes) drain();
    buffer_.push_back(c);
  }
  void put(std::span<const uint8_t> bytes) {
    put(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
  }
  template <class... Args>
  void format(fmt::format_string<Args...> f, Args&&... args) {
    if (buffer_.size() + 256 > kBufferBytes) drain();
    fmt::format_to(std::back_inserter(buffer_), f, std::forward<Args>(args)...);
  }
  // Writes what is buffered and closes; throws npuforge::Error when any write failed.
  void close();

 private:
  void drain();
  void write_through(const char* data, size_t size);

  std::string path_, what_;
  std::FILE* file_ = nullptr;
  std::string buffer_;
  int errno_ = 0;  // the first write error, reported by close()
};

}  // namespace npuforge::util
