#pragma once
// The fix-up pass (docs/architecture.md, "The allocator's invariants"): once a symbol's node is
// placed, every instruction field that names the symbol is rewritten to the real address (+ the
// %name+offset offset), and the operand's byte extent (isa::extents) is checked to lie inside the
// symbol's node.
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "allocator/symbol_table.h"
#include "isa/assembler.h"
#include "isa/extent_checks.h"

namespace npuforge::allocator {

// Where a symbol is, or nullopt when it is not defined.
using PlacementLookup = std::function<std::optional<Placement>(std::string_view symbol)>;

// Rewrites every program.symbol_refs entry and clears symbol_refs. Throws npuforge::Error
// naming the instruction index (and source line when known), mnemonic, field and symbol
// when the symbol is not placed, the address does not fit the field, or the operand's
// bytes [addr, addr + extent) leave the symbol's node [start, start + padded).
// All-or-nothing: on error the program is unchanged.
void fixup(isa::AsmProgram& program, const PlacementLookup& lookup);
// Placements from the table's live symbols.
void fixup(isa::AsmProgram& program, const SymbolTable& table);
void fixup(isa::AsmProgram& program, const std::map<std::string, Placement>& placements);

// An address field naming a symbol by id: the string-free form of isa::SymbolRef for
// programs built in code (the generator; a compiler).
struct SymbolField {
  uint32_t instr = 0;  // index into the program
  SymbolId symbol;
  uint8_t field = 0;   // slot of the address field
  bool write = false;  // the instruction writes the symbol (produces it); not used here
};

// The same pass over `fields`, each taking its symbol's current placement or, for one
// freed since, its last: a program may be fixed up once complete, or (the generator) one
// instruction at a time as it is emitted, while it is in cache; with the fields in
// instruction order a call allocates nothing. Checks and errors as above (symbols named by
// table.name()); all-or-nothing.
void fixup(std::span<isa::Instruction> instrs, std::span<const SymbolField> fields, const SymbolTable& table);
// The same, the generator's call once per instruction it emits: the references of one
// instruction checked through the ISA's precomputed tables (isa/extent_checks.h) instead of
// its specs. `checks` is built from the ISA of `instrs`; an instruction it does not know,
// references to several instructions and every error take the general path above (same
// checks, same messages).
void fixup(std::span<isa::Instruction> instrs, std::span<const SymbolField> fields, const SymbolTable& table,
           const isa::ExtentChecks& checks);

}  // namespace npuforge::allocator
