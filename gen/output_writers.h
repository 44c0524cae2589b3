#pragma once
// The generator's side of its program bundle's text files (bundle/files.h): each line goes
// straight into its util::BufferedWriter's buffer through the bundle's line writers
// (bundle/listing.h, bundle/memmap_text.h), with the generator's symbols named from their
// numbers. A million-instruction program writes ~270 MB.
#include <cstdint>
#include <span>
#include <string_view>

#include "gen/generator.h"
#include "util/buffered_writer.h"

namespace npuforge::gen {

// "sync" + a uint32 origin + "@" + a uint32 version.
inline constexpr size_t kMaxSymbolBytes = 4 + 10 + 1 + 10;
// gen::symbol_name's text at `out` (room for kMaxSymbolBytes); returns its end.
char* write_symbol(char* out, OpKind origin_kind, uint32_t origin, uint32_t version);

// The note the generator's PREFIX.s header gives on its comments.
inline constexpr std::string_view kListingNote = "operand symbols are given in the comments";

// <prefix>.s a piece at a time, as instructions become final (gen/stream.h): the header, then
// emit() as often as more are.
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

// <prefix>.memmap.yaml: the bytes of GeneratedProgram::memmap().to_yaml(), without building
// the MemMap.
void emit_memmap(const GeneratedProgram& p, util::BufferedWriter& out);

}  // namespace npuforge::gen
