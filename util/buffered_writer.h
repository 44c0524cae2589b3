#pragma once
// A file written through one fixed buffer: text is appended (or formatted) into it and handed
// to the OS a buffer at a time, so a large output (a million-instruction program's assembly)
// is never built as one string first. Errors name the path and what the file is.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include <fmt/format.h>

namespace npuforge::util {

class BufferedWriter {
 public:
  // Meant to stay in the L2 cache between filling it and the kernel copying it out (not
  // measured against the former 1 MiB), and large enough that a write() per buffer is noise.
  static constexpr size_t kBufferBytes = size_t{256} << 10;

  // Opens (truncates) the file; throws npuforge::Error "PATH: cannot write WHAT".
  BufferedWriter(const std::filesystem::path& path, std::string_view what = "file");
  ~BufferedWriter();  // closes without reporting errors: call close() to see them
  BufferedWriter(const BufferedWriter&) = delete;
  BufferedWriter& operator=(const BufferedWriter&) = delete;

  void put(std::string_view text) {
    if (kBufferBytes - size_ < text.size()) drain();
    if (text.size() >= kBufferBytes) {
      write_through(text.data(), text.size());
    } else {
      std::memcpy(buffer_.get() + size_, text.data(), text.size());
      size_ += text.size();
    }
  }
  void put(char c) {
    if (size_ == kBufferBytes) drain();
    buffer_[size_++] = c;
  }
  void put(std::span<const uint8_t> bytes) {
    put(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
  }
  template <class... Args>
  void format(fmt::format_string<Args...> f, Args&&... args) {
    fmt::memory_buffer text;
    fmt::format_to(std::back_inserter(text), f, std::forward<Args>(args)...);
    put(std::string_view(text.data(), text.size()));
  }

  // Room for `n` bytes (n <= kBufferBytes) at the returned pointer, handed back with commit():
  // the program writers put digits straight into the buffer, with one bounds check per line
  // instead of one per piece.
  char* reserve(size_t n) {
    if (kBufferBytes - size_ < n) drain();
    return buffer_.get() + size_;
  }
  void commit(const char* end) { size_ = static_cast<size_t>(end - buffer_.get()); }

  // Writes what is buffered and closes; throws npuforge::Error when any write failed.
  void close();

 private:
  void drain();
  void write_through(const char* data, size_t size);

  std::string path_, what_;
  std::FILE* file_ = nullptr;
  // Not zero-filled: every byte handed to the OS was written first.
  std::unique_ptr<char[]> buffer_ = std::make_unique_for_overwrite<char[]>(kBufferBytes);
  size_t size_ = 0;
  int errno_ = 0;  // the first write error, reported by close()
};

}  // namespace npuforge::util
