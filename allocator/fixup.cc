#include "allocator/fixup.h"

#include <fmt/core.h>

#include <vector>

#include "util/error.h"
#include "isa/instruction.h"

namespace npuforge::allocator {
namespace {

std::string where(const isa::AsmProgram& program, const isa::SymbolRef& ref) {
  const isa::Instruction& in = program.instrs[ref.instr];
  std::string line;
  if (ref.instr < program.lines.size()) line = fmt::format(" (line {})", program.lines[ref.instr]);
  return fmt::format("instruction {}{} '{}', field '{}', symbol '%{}'", ref.instr, line,
                     in.spec->mnemonic, in.spec->fields[ref.field].name, ref.symbol);
}

struct Done {
  const isa::SymbolRef* ref;
  Placement placement;
  uint64_t addr;
};

}  // namespace

void fixup(isa::AsmProgram& program, const PlacementLookup& lookup) {
  // Work on a copy so that an error leaves the program as it was.
  std::vector<isa::Instruction> instrs = program.instrs;
  std::vector<Done> done;
  done.reserve(program.symbol_refs.size());
  for (const isa::SymbolRef& ref : program.symbol_refs) {
    if (ref.instr >= instrs.size() || instrs[ref.instr].spec == nullptr ||
        ref.field >= instrs[ref.instr].spec->fields.size()) {
      throw Error(fmt::format("fix-up: symbol '%{}' refers to instruction {} field slot {}, which "
                              "does not exist",
                              ref.symbol, ref.instr, ref.field));
    }
    const std::optional<Placement> p = lookup(ref.symbol);
    if (!p) throw Error(where(program, ref) + ": use before define (the symbol is not placed)");
    const int64_t addr = int64_t(p->addr.value) + ref.offset;
    const isa::FieldSpec& f = instrs[ref.instr].spec->fields[ref.field];
    if (addr < f.min || addr > f.max) {
      throw Error(fmt::format("{}: address 0x{:x} (placed at 0x{:x}{:+}) does not fit the field's "
                              "range [0x{:x}, 0x{:x}]",
                              where(program, ref), addr, p->addr.value, ref.offset, f.min, f.max));
    }
    instrs[ref.instr].set_value(ref.field, addr);
    done.push_back(Done{&ref, *p, uint64_t(addr)});
  }
  // Extents are checked once every field is final (an extent may depend on other fields).
  for (const Done& d : done) {
    for (const isa::Extent& e : isa::extents(instrs[d.ref->instr])) {
      if (e.field != d.ref->field || e.bytes == 0) continue;
      const uint64_t lo = d.placement.addr.value;
      const uint64_t hi = lo + d.placement.padded.value;
      if (d.addr < lo || d.addr + e.bytes > hi) {
        throw Error(fmt::format("{}: the operand's {} bytes [0x{:x}, 0x{:x}) leave the symbol's "
                                "node [0x{:x}, 0x{:x})",
                                where(program, *d.ref), e.bytes, d.addr, d.addr + e.bytes, lo, hi));
      }
    }
  }
  program.instrs = std::move(instrs);
  program.symbol_refs.clear();
}

void fixup(isa::AsmProgram& program, const SymbolTable& table) {
  fixup(program, [&](std::string_view symbol) { return table.find(symbol); });
}

void fixup(isa::AsmProgram& program, const std::map<std::string, Placement>& placements) {
  fixup(program, [&](std::string_view symbol) -> std::optional<Placement> {
    auto it = placements.find(std::string(symbol));
    if (it == placements.end()) return std::nullopt;
    return it->second;
  });
}

}  // namespace npuforge::allocator
