#pragma once
// Where the bundle's text writers (bundle/listing.h, bundle/memmap_text.h) put their bytes: a
// Sink hands out room with `char* reserve(size_t n)` and takes back what was written with
// `commit(const char* end)`. util::BufferedWriter is the one for files (a million-instruction
// program is never one string); StringSink is the same over a std::string, for the callers
// that want the text itself (MemMap::to_yaml, gen::to_assembly).
#include <cstddef>
#include <string>

namespace npuforge::bundle {

class StringSink {
 public:
  explicit StringSink(std::string& text) : text_(text) {}
  char* reserve(size_t n) {
    used_ = text_.size();
    text_.resize(used_ + n);  // grows the capacity geometrically: appends stay amortised O(1)
    return text_.data() + used_;
  }
  void commit(const char* end) { text_.resize(static_cast<size_t>(end - text_.data())); }

 private:
  std::string& text_;
  size_t used_ = 0;
};

}  // namespace npuforge::bundle
