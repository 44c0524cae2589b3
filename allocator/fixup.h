#pragma once
// The fix-up pass (SEEDS.md A.3): once a symbol's node is placed, every instruction field
// that names the symbol is rewritten to the real address (+ the %name+offset offset), and
// the operand's byte extent (isa::extents) is checked to lie inside the symbol's node.
#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "allocator/symbol_table.h"
#include "isa/assembler.h"

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

// What the fix-up reads of an ISA, compact: per instruction, each field's range and mask
// and the extents of the operands it addresses. Built once per ISA (the generator keeps
// one), so that the per-instruction pass reads a few adjacent words instead of the ISA's
// large FieldSpecs and OperandSpecs. The Isa must outlive it.
class FixupPlan {
 public:
  explicit FixupPlan(std::span<const isa::InstrSpec> specs);

  struct Field {
    int64_t min = 0, max = -1;  // allowed range (an empty one for a slot past the last field)
    uint32_t mask = 0;          // the field's width
    uint8_t operands = 0;       // bit i: extents[i] is the extent of an operand it addresses
  };
  struct Spec {
    uint32_t fields = 0;
    std::array<const isa::Expr*, 8> extents{};
    std::array<Field, isa::kMaxFields> field{};
  };
  // The plan of `spec`, or null when it is not one of the plan's ISA.
  const Spec* find(const isa::InstrSpec* spec) const {
    const size_t k = (reinterpret_cast<uintptr_t>(spec) - reinterpret_cast<uintptr_t>(base_)) / sizeof(isa::InstrSpec);
    return k < specs_.size() && base_ + k == spec ? &specs_[k] : nullptr;
  }

 private:
  const isa::InstrSpec* base_ = nullptr;
  std::vector<Spec> specs_;
};

// The same pass and checks as above, reading the instruction's spec through `plan` (any
// spec not in it, and every error, go the way above).
void fixup(std::span<isa::Instruction> instrs, std::span<const SymbolField> fields, const SymbolTable& table,
           const FixupPlan& plan);

}  // namespace npuforge::allocator
