#include "bundle/words.h"

#include <algorithm>
#include <cstring>

#include "isa/isa.h"

namespace npuforge::bundle {

WordsEmitter::WordsEmitter(const isa::Isa& isa) : isa_(&isa) {
  for (unsigned v = 0; v < 256; ++v) digits_[v] = {"0123456789abcdef"[v >> 4], "0123456789abcdef"[v & 15]};
}

void WordsEmitter::header(std::string_view header, uint64_t instructions, util::BufferedWriter& hex) {
  if (!header.empty()) hex.format("// {}\n", header);
  hex.format("// {} instructions, {} bits each, most significant digit first\n", instructions, isa_->width_bits());
  started_ = true;
}

void WordsEmitter::emit(std::span<const isa::Instruction> instrs, util::BufferedWriter& bin, util::BufferedWriter& hex) {
  const size_t w = isa_->width_bytes();
  for (size_t i = next_; i < instrs.size(); ++i) {
    auto* word = reinterpret_cast<uint8_t*>(bin.reserve(w));
    isa::encode(instrs[i], std::span<uint8_t>(word, w));
    bin.commit(reinterpret_cast<char*>(word + w));
    char* o = hex.reserve(2 * w + 1);  // most significant digit first
    for (size_t b = w; b-- > 0; o += 2) std::memcpy(o, digits_[word[b]].data(), 2);
    *o++ = '\n';
    hex.commit(o);
  }
  next_ = std::max(next_, instrs.size());
}

}  // namespace npuforge::bundle
