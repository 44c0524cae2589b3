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

// append_disassembly's text written into a raw buffer, with each instruction's field order,
// separators and "name=" texts laid out once per ISA: `npuforge gen` writes a line per
// instruction, millions of them, and the per-field decisions of the generic path were most
// of that. Holds pointers into `isa`, which must outlive it.
class LineDisassembler {
 public:
  explicit LineDisassembler(const Isa& isa);

  // The most bytes write() puts for any instruction of the ISA.
  size_t max_line_bytes() const { return max_line_bytes_; }
  // Writes the line (no newline) at `out`, which has room for max_line_bytes(); returns its
  // end. Throws npuforge::Error for an instruction of another ISA.
  char* write(const Instruction& in, char* out) const;

 private:
  enum class Text : uint8_t { Tokens, Enum, Hex, DdrHex, Decimal };
  struct Step {
    const FieldSpec* field = nullptr;
    unsigned slot = 0;
    Text text = Text::Decimal;
    bool keyword = false;  // "name=value" (positional fields: the value alone)
    bool flag = false;     // a bare name when set to 1
    bool has_default = false;
    bool is_signed = false;
    unsigned width = 0;
    int64_t default_value = 0;
  };
  // Instruction::value, inline: it is read for every field of every line.
  static int64_t value_of(const Step& s, uint32_t raw) {
    if (!s.is_signed) return raw;
    if (s.width >= 32) return static_cast<int32_t>(raw);
    const uint32_t sign = 1u << (s.width - 1);
    return static_cast<int64_t>(raw ^ sign) - static_cast<int64_t>(sign);
  }
  struct Plan {
    uint32_t begin = 0, end = 0;  // range of steps_
  };
  char* write_value(const Step& s, const Instruction& in, char* out) const;

  const InstrSpec* first_ = nullptr;  // isa.instructions().data(): an InstrSpec's plan is plans_[spec - first_]
  std::vector<Plan> plans_;
  std::vector<Step> steps_;
  std::array<std::string, size_t{1} << kNumQueues> tokens_;  // text of each token mask
  size_t max_line_bytes_ = 0;
};

}  // namespace npuforge::isa
