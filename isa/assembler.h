#pragma once
// Readable assembly for the ISA:
//   label:                                   ; comment (also # and //)
//   load %act0, ddr:0x1000, rows=4, row_bytes=256, stride=256, signal=compute
//   gemm %out, %act0, %w0, m=4, n=16, k=64, scale=3, shift=8, relu, wait=load
//   .equ %w0, 0x4000                          ; gives a symbol a fixed address
// Address fields without a default are positional, in the order the ISA lists them; every
// other field is key=value (flags may be written bare; enums by name; tokens as queue
// names joined by '+' or 'none'). An SRAM address may be a symbol `%name` or `%name+off`.
#include <array>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "isa/instruction.h"

namespace npuforge::isa {

// A field that names a symbol instead of an address, to be fixed up once it is placed.
struct SymbolRef {
  size_t instr = 0;   // index into AsmProgram::instrs
  unsigned field = 0; // slot of the address field
  std::string symbol; // without the '%'
  int64_t offset = 0; // %name+offset
};

struct AsmProgram {
  std::vector<Instruction> instrs;
  std::vector<SymbolRef> symbol_refs;           // unresolved fields, field value left 0
  std::map<std::string, size_t> labels;         // label -> index of the next instruction
  std::map<std::string, uint32_t> equates;      // from .equ
  std::vector<int> lines;                       // source line of each instruction
};

// Parses `text`; throws npuforge::Error "source:line:col: message" on the first error.
// Symbols defined by .equ are resolved; others are left in symbol_refs.
AsmProgram assemble(const Isa& isa, std::string_view text, std::string_view source_name);

// Replaces every symbol_ref by its address; throws naming the symbol when one is missing.
void resolve_symbols(AsmProgram& program, const std::map<std::string, uint32_t>& addresses);

// One line of assembly, the inverse of assemble (fields equal to their default omitted).
std::string disassemble(const Instruction& instr);
// The same line appended to `out`: a caller disassembling millions of instructions reuses one
// string instead of allocating one per line.
void append_disassembly(std::string& out, const Instruction& instr);
std::string disassemble_program(std::span<const Instruction> program);
// The same line (no newline) written at `out`, which has room for instr.spec->max_line_bytes;
// returns its end. The one disassembler: the calls above and `npuforge gen`'s writer use it.
// It follows spec->line (plan_disassembly), the field order, separators and value texts laid
// out once per ISA: gen writes a line per instruction, millions of them.
char* write_disassembly(char* out, const Instruction& instr);

}  // namespace npuforge::isa
