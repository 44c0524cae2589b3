#pragma once
// PREFIX.bin and PREFIX.hex of a program bundle (bundle/files.h) in one pass, each word encoded
// once (isa::encode): .bin is the instruction words, little-endian, no header; .hex is what
// isa::to_readmemh writes ($readmemh: "// " and the header, "// N instructions, W bits each,
// most significant digit first", then one word per line, most significant digit first).
// Streaming: header() once, then emit() each time more instructions are final.
#include <array>
#include <cstdint>
#include <span>
#include <string_view>

#include "isa/instruction.h"
#include "util/buffered_writer.h"

namespace npuforge::bundle {

class WordsEmitter {
 public:
  explicit WordsEmitter(const isa::Isa& isa);
  bool started() const { return started_; }
  // The .hex header, with the instruction count (a program cut short has fewer).
  void header(std::string_view header, uint64_t instructions, util::BufferedWriter& hex);
  // The words of instructions [written so far, instrs.size()).
  void emit(std::span<const isa::Instruction> instrs, util::BufferedWriter& bin, util::BufferedWriter& hex);

 private:
  const isa::Isa* isa_;
  // Both digits of a byte in one table entry: half the loads and stores of a digit at a time.
  std::array<std::array<char, 2>, 256> digits_;
  bool started_ = false;
  size_t next_ = 0;  // the next instruction to write
};

}  // namespace npuforge::bundle
