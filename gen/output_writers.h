#pragma once
// The writers behind gen::write_outputs: each file's text goes straight into its
// util::BufferedWriter's buffer (one bounds check per line), words and lines from isa::encode
// and isa::write_disassembly. A million-instruction program writes ~270 MB.
#include <array>
#include <cstdint>

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
// <prefix>.bin and <prefix>.hex in one pass: each word is encoded once.
void emit_words(const isa::Isa& isa, const GeneratedProgram& p, util::BufferedWriter& bin, util::BufferedWriter& hex);
// <prefix>.memmap.yaml: GeneratedProgram::memmap().to_yaml().
void emit_memmap(const GeneratedProgram& p, util::BufferedWriter& out);

}  // namespace npuforge::gen
