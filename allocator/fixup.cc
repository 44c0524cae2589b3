#include "allocator/fixup.h"

#include <fmt/core.h>

#include <algorithm>
#include <array>
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

// A reference's address and its symbol's node [lo, hi). Trivial, so that an array of
// them costs nothing to declare.
struct Resolved {
  int64_t addr;
  uint64_t lo, hi;
};

template <class Refs>
[[noreturn, gnu::noinline]] void not_placed(std::span<const isa::Instruction> instrs, const Refs& refs, size_t r) {
  throw Error(where(instrs, refs, r) + ": use before define (the symbol is not placed)");
}

template <class Refs>
[[noreturn, gnu::noinline]] void does_not_fit(std::span<const isa::Instruction> instrs, const Refs& refs, size_t r,
                                              int64_t addr) {
  const isa::FieldSpec& f = instrs[refs.instr(r)].spec->fields[refs.field(r)];
  throw Error(fmt::format("{}: address 0x{:x} (placed at 0x{:x}{:+}) does not fit the field's range [0x{:x}, 0x{:x}]",
                          where(instrs, refs, r), addr, addr - refs.offset(r), refs.offset(r), f.min, f.max));
}

// Checks that the reference's symbol is placed and that its address fits the field.
// Inline, the error paths out of line: it runs for every operand the generator emits.
template <class Refs>
[[gnu::always_inline]] inline Resolved resolve(std::span<const isa::Instruction> instrs, const Refs& refs, size_t r) {
  const auto p = refs.placement(r);  // an optional or a pointer: nothing when not placed
  if (!p) [[unlikely]]
    not_placed(instrs, refs, r);
  const Resolved out{int64_t(p->addr.value) + refs.offset(r), p->addr.value, uint64_t(p->addr.value) + p->padded.value};
  const isa::FieldSpec& f = instrs[refs.instr(r)].spec->fields[refs.field(r)];
  if (out.addr < f.min || out.addr > f.max) [[unlikely]]
    does_not_fit(instrs, refs, r, out.addr);
  return out;
}

// The extent check (isa::extents, narrowed to the operands that name a symbol, since it
// runs for every instruction the generator emits): each operand's bytes
// [addr, addr + extent) lie inside its symbol's node. The expressions see the instruction
// as fixed up: its fields, with the addresses the references get (written into a copy of
// the raw fields only when an expression reads an address being fixed up).
template <class Refs, class At>
void check_extents(std::span<const isa::Instruction> instrs, const Refs& refs, size_t first, size_t end, const At& at,
                   const Resolved* res, uint32_t named) {
  const isa::Instruction& in = instrs[refs.instr(at(first))];
  const isa::InstrSpec& spec = *in.spec;
  const uint32_t* raw = in.raw.data();
  std::array<uint32_t, isa::kMaxFields> patched;
  for (size_t k = first; k < end; ++k) {
    for (uint32_t ops = spec.operands_of_field[refs.field(at(k))]; ops != 0; ops &= ops - 1) {
      const isa::Expr& extent = spec.operands[static_cast<unsigned>(__builtin_ctz(ops))].bytes;
      if ((extent.fields_used() & named) != 0 && raw != patched.data()) [[unlikely]] {
        patched = in.raw;
        // An address within its field's range reads back as itself.
        for (size_t j = first; j < end; ++j) {
          const unsigned f = refs.field(at(j)), width = spec.fields[f].width;
          patched[f] = static_cast<uint32_t>(res[j - first].addr) & (width >= 32 ? ~0u : (1u << width) - 1);
        }
        raw = patched.data();
      }
      const int64_t bytes = extent.eval(raw);
      if (bytes <= 0) continue;  // operand unused
      const Resolved& r = res[k - first];
      const auto addr = static_cast<uint64_t>(r.addr);
      if (addr < r.lo || addr + uint64_t(bytes) > r.hi) [[unlikely]]
        throw Error(fmt::format("{}: the operand's {} bytes [0x{:x}, 0x{:x}) leave the symbol's node "
                                "[0x{:x}, 0x{:x})",
                                where(instrs, refs, at(k)), bytes, addr, addr + bytes, r.lo, r.hi));
    }
  }
}

template <class Refs>
[[noreturn, gnu::noinline]] void no_such_field(const Refs& refs, size_t r, size_t i) {
  throw Error(fmt::format("fix-up: symbol '%{}' refers to instruction {} field slot {}, which does not exist",
                          refs.symbol(r), i, refs.field(r)));
}

// Checks the references of one instruction, at(first) .. at(end - 1): the field exists,
// the symbol is placed, its address fits the field, and every operand naming a symbol lies
// inside its node (checked together: an extent may depend on other fields, all final by
// then). `res` receives the resolved references, in that order.
template <class Refs, class At>
void check_instruction(std::span<const isa::Instruction> instrs, const Refs& refs, size_t first, size_t end,
                       const At& at, Resolved* res) {
  const size_t i = refs.instr(at(first));
  if (i >= instrs.size() || instrs[i].spec == nullptr) [[unlikely]]
    no_such_field(refs, at(first), i);
  const size_t fields = instrs[i].spec->fields.size();
  if (end - first > fields) [[unlikely]]
    throw Error(fmt::format("fix-up: instruction {} has {} symbol references, more than its {} fields (a field named "
                            "twice)",
                            i, end - first, fields));
  uint32_t named = 0;  // fields naming a symbol
  for (size_t k = first; k < end; ++k) {
    const unsigned f = refs.field(at(k));
    if (f >= fields) [[unlikely]]
      no_such_field(refs, at(k), i);
    res[k - first] = resolve(instrs, refs, at(k));
    named |= 1u << f;
  }
  check_extents(instrs, refs, first, end, at, res, named);
}

// Checks every reference, then writes them all: on error nothing has changed. No
// allocation when the references come in instruction order.
template <class Refs>
void fix(std::span<isa::Instruction> instrs, const Refs& refs) {
  const size_t n = refs.count();
  if (n == 0) return;
  std::array<Resolved, isa::kMaxFields> res;  // one instruction's references
  const auto in_order = [](size_t k) { return k; };
  // The generator's case: the references of the one instruction it just emitted.
  bool one = n <= isa::kMaxFields;
  for (size_t k = 1; k < n && one; ++k) one = refs.instr(k) == refs.instr(0);
  if (one) {
    check_instruction(instrs, refs, 0, n, in_order, res.data());
    for (size_t k = 0; k < n; ++k) instrs[refs.instr(k)].set_value(refs.field(k), res[k].addr);
    return;
  }
  bool sorted = true;  // a program's references come in instruction order
  for (size_t k = 1; k < n && sorted; ++k) sorted = refs.instr(k - 1) <= refs.instr(k);
  std::vector<size_t> order;
  if (!sorted) {
    order.resize(n);
    std::iota(order.begin(), order.end(), size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return refs.instr(a) < refs.instr(b); });
  }
  const auto at = [&](size_t k) { return sorted ? k : order[k]; };
  for (size_t first = 0, end = 0; first < n; first = end) {
    const size_t i = refs.instr(at(first));
    for (end = first; end < n && refs.instr(at(end)) == i;) ++end;
    check_instruction(instrs, refs, first, end, at, res.data());
  }
  for (size_t r = 0; r < n; ++r) instrs[refs.instr(r)].set_value(refs.field(r), resolve(instrs, refs, r).addr);
}

// The generator's case, once per instruction it emits: the references of one instruction,
// by id, checked lean and only then written. Each reference's symbol is placed and its
// address fits the field; then one flat pass over the spec's operands checks each operand
// of a named field against its node. The extents are evaluated on the fields as they are
// (offsets are 0 here, so an operand starts at its node's start and only its end needs
// checking): those are their final values unless an extent reads an address being fixed
// up. That case, a field named twice, a reference to another instruction and every failure
// return false before anything is written, for the general path (same checks, same
// messages) to redo it and name the error. (Checking in a loop per reference instead kept
// so many values live that the compiler spilled them to the stack.)
//
// A View is the spec's side of the checks: ExtentChecks' flat per-spec table (the
// generator's) or the spec itself, with the same members:
//   bool bind(const isa::Instruction&)     false: not an instruction it knows
//   unsigned fields()                      the spec's field count
//   field(f)                               min, max and mask of field f
//   bool fits(named, raw, room)            every operand of a field in `named` fits within
//                                          room[its field] bytes
//   bool reads_any(named)                  an extent reads a field in `named`
template <class View>
[[gnu::always_inline]] inline bool fix_one(std::span<isa::Instruction> instrs, std::span<const SymbolField> fields,
                                           const SymbolTable& table, View& view) {
  const uint32_t i = fields[0].instr;
  if (i >= instrs.size() || !view.bind(instrs[i])) [[unlikely]]
    return false;
  const size_t n = fields.size();
  if (n > view.fields()) [[unlikely]]
    return false;
  // By field (each named once): its new bits and its node's bytes. Indexed by field, not
  // by reference, so that no pointer into them needs a register of its own.
  std::array<uint32_t, isa::kMaxFields> value;
  std::array<uint64_t, isa::kMaxFields> room;
  uint32_t named = 0;  // the fields being fixed up
  for (size_t k = 0; k < n; ++k) {
    const SymbolField& r = fields[k];
    const unsigned f = r.field;
    if (r.instr != i || f >= view.fields() || (named >> f & 1) != 0) [[unlikely]]
      return false;
    const std::optional<Placement> p = table.last_placement(r.symbol);
    if (!p) [[unlikely]]
      return false;
    const auto& fs = view.field(f);
    const int64_t addr = p->addr.value;
    if (addr < fs.min || addr > fs.max) [[unlikely]]
      return false;
    value[f] = static_cast<uint32_t>(addr) & fs.mask;  // set_value
    room[f] = p->padded.value;
    named |= 1u << f;
  }
  uint32_t* const raw = instrs[i].raw.data();
  if (!view.fits(named, raw, room.data()) || view.reads_any(named)) [[unlikely]]
    return false;
  for (uint32_t left = named; left != 0; left &= left - 1) {
    const auto f = static_cast<unsigned>(__builtin_ctz(left));
    raw[f] = value[f];
  }
  return true;
}

// The view through the ISA's tables (isa/extent_checks.h): each field's range and mask and
// every operand's extent from one flat record per spec, the products of fields inline.
struct PlannedView {
  const isa::ExtentChecks& checks;
  const isa::ExtentChecks::Spec* s = nullptr;
  bool bind(const isa::Instruction& in) { return (s = checks.find(in)) != nullptr; }
  unsigned fields() const { return s->fields; }
  const isa::ExtentChecks::Field& field(unsigned f) const { return s->field[f]; }
  bool fits(uint32_t named, const uint32_t* raw, const uint64_t* room) const {
    const isa::ExtentChecks::Check* const check = s->check.data();
    for (unsigned c = 0, end = s->checks; c < end; ++c) {
      const unsigned f = check[c].field;
      if ((named >> f & 1) == 0) continue;
      const int64_t bytes = check[c].eval(raw);
      if (bytes > 0 && uint64_t(bytes) > room[f]) return false;
    }
    return true;
  }
  bool reads_any(uint32_t named) const { return (s->reads & named) != 0; }
};

// The view through the spec itself, for callers without tables. Its vectors are read
// through their data pointers: their sizes and indexing cost a division and a multiply each.
struct SpecView {
  struct Field {
    int64_t min, max;
    uint32_t mask;
  };
  const isa::InstrSpec* spec = nullptr;
  Field last{};  // field()'s answer
  bool bind(const isa::Instruction& in) { return (spec = in.spec) != nullptr; }
  unsigned fields() const { return static_cast<unsigned>(spec->fields.size()); }
  const Field& field(unsigned f) {
    const isa::FieldSpec& fs = spec->fields.data()[f];
    last = {fs.min, fs.max, fs.width >= 32 ? ~0u : (1u << fs.width) - 1};
    return last;
  }
  bool fits(uint32_t named, const uint32_t* raw, const uint64_t* room) const {
    const isa::OperandSpec* const ops = spec->operands.data();
    for (size_t o = 0, end = spec->operands.size(); o < end; ++o) {
      const unsigned f = ops[o].field;
      if (f >= 32 || (named >> f & 1) == 0) continue;
      const int64_t bytes = ops[o].bytes.eval(raw);
      if (bytes > 0 && uint64_t(bytes) > room[f]) return false;
    }
    return true;
  }
  bool reads_any(uint32_t named) const {
    uint32_t reads = 0;
    const isa::OperandSpec* const ops = spec->operands.data();
    for (size_t o = 0, end = spec->operands.size(); o < end; ++o)
      if (ops[o].field < 32 && (named >> ops[o].field & 1) != 0) reads |= ops[o].bytes.fields_used();
    return (reads & named) != 0;
  }
};

// Out of line: inlined, its frame (arrays, saved registers) was paid by every fast call.
[[gnu::noinline]] void fix_by_id(std::span<isa::Instruction> instrs, std::span<const SymbolField> fields,
                                 const SymbolTable& table) {
  fix(instrs, IdRefs{fields, table});
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
  // Several instructions, or more references than fields, go the general way.
  SpecView view;
  if (!fields.empty() && fields.size() <= isa::kMaxFields && fix_one(instrs, fields, table, view)) return;
  fix_by_id(instrs, fields, table);  // several instructions, or an error to name
}


void fixup(std::span<isa::Instruction> instrs, std::span<const SymbolField> fields, const SymbolTable& table,
           const isa::ExtentChecks& checks) {
  // Several instructions, or more references than fields, go the general way.
  PlannedView view{checks};
  if (!fields.empty() && fields.size() <= isa::kMaxFields && fix_one(instrs, fields, table, view)) return;
  fix_by_id(instrs, fields, table);  // several instructions, or an error to name
}

}  // namespace npuforge::allocator
