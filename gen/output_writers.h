#pragma once
// The writers behind gen::write_outputs: each file's text goes straight into its
// util::BufferedWriter's buffer (one bounds check per line, numbers without fmt's general
// path), from per-ISA tables built once. A million-instruction program writes ~270 MB.
#include <array>
#include <cstdint>
#include <vector>

#include "gen/generator.h"
#include "isa/assembler.h"
#include "util/buffered_writer.h"

namespace npuforge::gen {

// "sync" + a uint32 origin + "@" + a uint32 version.
inline constexpr size_t kMaxSymbolBytes = 4 + 10 + 1 + 10;
// gen::symbol_name's text at `out` (room for kMaxSymbolBytes); returns its end.
char* write_symbol(char* out, OpKind origin_kind, uint32_t origin, uint32_t version);

// isa::encode with each instruction's field positions looked up once per ISA, for words of
// up to kMaxBytes (the ISA loader's cap).
class WordEncoder {
 public:
  static constexpr size_t kMaxBytes = 128;

  explicit WordEncoder(const isa::Isa& isa);  // holds pointers into `isa`
  size_t bytes() const { return bytes_; }
  // isa::encode(in, {word, bytes()}).
  void encode(const isa::Instruction& in, uint8_t* word) const;

 private:
  struct Field {
    unsigned slot, limb, shift;
    uint32_t mask;
  };
  struct Plan {
    uint32_t begin, end;  // range of fields_
  };
  const isa::InstrSpec* first_;
  size_t bytes_;
  std::vector<Plan> plans_;
  std::vector<Field> fields_;
};

// <prefix>.s: the header and a line per instruction with its operand symbols as a comment.
void emit_assembly(const isa::Isa& isa, const GeneratedProgram& p, util::BufferedWriter& out);
// <prefix>.bin and <prefix>.hex in one pass: each word is encoded once.
void emit_words(const isa::Isa& isa, const GeneratedProgram& p, util::BufferedWriter& bin, util::BufferedWriter& hex);
// <prefix>.memmap.yaml: GeneratedProgram::memmap().to_yaml().
void emit_memmap(const GeneratedProgram& p, util::BufferedWriter& out);

}  // namespace npuforge::gen
