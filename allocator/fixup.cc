#include "allocator/fixup.h"

#include <fmt/core.h>

#include <algorithm>
#include <numeric>
#include <vector>

#include "isa/instruction.h"
#include "util/error.h"

namespace npuforge::allocator {
namespace {

// The references of an assembled program: symbols by name, source lines known.
struct NamedRefs {
  const isa::AsmProgram& program;
  const PlacementLookup& lookup;
  size_t count() const { return program.symbol_refs.size(); }
  size_t instr(size_t k) const { return program.symbol_refs[k].instr; }
  unsigned field(size_t k) const { return program.symbol_refs[k].field; }
  int64_t offset(size_t k) const { return program.symbol_refs[k].offset; }
  std::optional<Placement> placement(size_t k) const { return lookup(program.symbol_refs[k].symbol); }
  std::string symbol(size_t k) const { return program.symbol_refs[k].symbol; }
  std::string line(size_t k) const {
    return instr(k) < program.lines.size() ? fmt::format(" (line {})", program.lines[instr(k)]) : "";
  }
};

// References by id: placements (current or last) from the table.
struct IdRefs {
  std::span<const SymbolField> fields;
  const SymbolTable& table;
  size_t count() const { return fields.size(); }
  size_t instr(size_t k) const { return fields[k].instr; }
  unsigned field(size_t k) const { return fields[k].field; }
  int64_t offset(size_t) const { return 0; }
  std::optional<Placement> placement(size_t k) const { return table.last_placement(fields[k].symbol); }
  std::string symbol(size_t k) const { return table.name(fields[k].symbol); }
  std::string line(size_t) const { return ""; }
};

template <class Refs>
std::string where(std::span<const isa::Instruction> instrs, const Refs& refs, size_t k) {
  const isa::Instruction& in = instrs[refs.instr(k)];
  return fmt::format("instruction {}{} '{}', field '{}', symbol '%{}'", refs.instr(k), refs.line(k),
                     in.spec->mnemonic, in.spec->fields[refs.field(k)].name, refs.symbol(k));
}

// Checks every reference, then writes them all: on error nothing has changed. The
// references of one instruction are checked together on a copy of it, since an extent may
// depend on other fields (all of them final by then).
template <class Refs>
void fix(std::span<isa::Instruction> instrs, const Refs& refs) {
  const size_t n = refs.count();
  bool sorted = true;  // a program's references come in instruction order
  for (size_t k = 1; k < n && sorted; ++k) sorted = refs.instr(k - 1) <= refs.instr(k);
  std::vector<size_t> order;
  if (!sorted) {
    order.resize(n);
    std::iota(order.begin(), order.end(), size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return refs.instr(a) < refs.instr(b); });
  }
  struct Checked {
    size_t ref;
    Placement placement;
    uint64_t addr;
  };
  std::vector<Checked> group;
  for (size_t k = 0; k < n;) {
    const size_t i = refs.instr(sorted ? k : order[k]);
    group.clear();
    isa::Instruction in = i < instrs.size() ? instrs[i] : isa::Instruction{};
    for (; k < n && refs.instr(sorted ? k : order[k]) == i; ++k) {
      const size_t r = sorted ? k : order[k];
      if (in.spec == nullptr || refs.field(r) >= in.spec->fields.size())
        throw Error(fmt::format("fix-up: symbol '%{}' refers to instruction {} field slot {}, which does not exist",
                                refs.symbol(r), i, refs.field(r)));
      const std::optional<Placement> p = refs.placement(r);
      if (!p) throw Error(where(instrs, refs, r) + ": use before define (the symbol is not placed)");
      const int64_t addr = int64_t(p->addr.value) + refs.offset(r);
      const isa::FieldSpec& f = in.spec->fields[refs.field(r)];
      if (addr < f.min || addr > f.max)
        throw Error(fmt::format("{}: address 0x{:x} (placed at 0x{:x}{:+}) does not fit the field's range "
                                "[0x{:x}, 0x{:x}]",
                                where(instrs, refs, r), addr, p->addr.value, refs.offset(r), f.min, f.max));
      in.set_value(refs.field(r), addr);
      group.push_back(Checked{r, *p, uint64_t(addr)});
    }
    for (const isa::Extent& e : isa::extents(in)) {
      if (e.bytes == 0) continue;
      for (const Checked& c : group) {
        if (refs.field(c.ref) != e.field) continue;
        const uint64_t lo = c.placement.addr.value, hi = lo + c.placement.padded.value;
        if (c.addr < lo || c.addr + e.bytes > hi)
          throw Error(fmt::format("{}: the operand's {} bytes [0x{:x}, 0x{:x}) leave the symbol's node "
                                  "[0x{:x}, 0x{:x})",
                                  where(instrs, refs, c.ref), e.bytes, c.addr, c.addr + e.bytes, lo, hi));
      }
    }
  }
  for (size_t r = 0; r < n; ++r)
    instrs[refs.instr(r)].set_value(refs.field(r), int64_t(refs.placement(r)->addr.value) + refs.offset(r));
}

}  // namespace

void fixup(isa::AsmProgram& program, const PlacementLookup& lookup) {
  fix(std::span<isa::Instruction>(program.instrs), NamedRefs{program, lookup});
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

void fixup(std::span<isa::Instruction> instrs, std::span<const SymbolField> fields, const SymbolTable& table) {
  fix(instrs, IdRefs{fields, table});
}

}  // namespace npuforge::allocator
