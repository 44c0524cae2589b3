#pragma once
// The writers behind gen::write_outputs: each file's text goes straight into its
// util::BufferedWriter's buffer (one bounds check per line), words and lines from isa::encode
// and isa::write_disassembly. A million-instruction program writes ~270 MB.
#include <array>
#include <cstdint>
#include <span>
#include <string_view>

#include "gen/generator.h"
#include "isa/assembler.h"
#include "util/buffered_writer.h"

namespace npuforge::gen {

// "sync" + a uint32 origin + "@" + a uint32 version.
inline constexpr size_t kMaxSymbolBytes = 4 + 10 + 1 + 10;
// gen::symbol_name's text at `out` (room for kMaxSymbolBytes); returns its end.
char* write_symbol(char* out, OpKind origin_kind, uint32_t origin, uint32_t version);

// <prefix>.s: the header and a line per instruction with its operand symbols as a comment.
void emit_assembly(const GeneratedProgram& p, util::BufferedWriter& out);

// The same file a piece at a time, as instructions become final (gen/stream.h): emit_assembly
// is header() and one emit() of the whole program.
class AssemblyEmitter {
 public:
  bool started() const { return started_; }
  // The instruction count the header gave: a program cut short has fewer.
  uint64_t announced() const { return announced_; }
  void header(std::string_view header, uint64_t instructions, util::BufferedWriter& out);
  // The lines of instructions [written so far, instrs.size()); `refs` holds all their
  // operand references; `symbols` is read for the names of those.
  void emit(std::span<const isa::Instruction> instrs, std::span<const SymRef> refs, const SymbolInfo* symbols,
            util::BufferedWriter& out);

 private:
  bool started_ = false;
  uint64_t announced_ = 0;
  size_t next_ = 0;  // the next instruction to write
  size_t ref_ = 0;   // its first operand reference
};
// <prefix>.bin and <prefix>.hex in one pass: each word is encoded once.
void emit_words(const isa::Isa& isa, const GeneratedProgram& p, util::BufferedWriter& bin, util::BufferedWriter& hex);

// The same two files a piece at a time (gen/stream.h): emit_words is header() and one emit()
// of the whole program.
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
// <prefix>.memmap.yaml: GeneratedProgram::memmap().to_yaml().
void emit_memmap(const GeneratedProgram& p, util::BufferedWriter& out);

}  // namespace npuforge::gen
