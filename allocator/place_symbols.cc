#include "allocator/place_symbols.h"

#include <algorithm>

#include <fmt/core.h>

#include "allocator/fixup.h"
#include "allocator/symbol_table.h"
#include "util/error.h"

namespace npuforge::allocator {
namespace {

struct SymbolUses {
  std::string name;
  uint64_t bytes = 0;               // largest offset + extent over all uses
  std::vector<size_t> instrs;       // instructions naming it, ascending, no repeats
  int64_t producer = bundle::kNoProducer;   // first instruction writing it
};

// The extent of the operand whose address field is `field`, or 0 when unused.
uint64_t extent_bytes(const isa::Instruction& in, unsigned field, isa::Access& access) {
  for (const isa::Extent& e : isa::extents(in))
    if (e.field == field) {
      access = e.access;
      return e.bytes;
    }
  return 0;
}

std::vector<SymbolUses> collect_uses(const isa::AsmProgram& program, std::map<std::string, size_t>& index) {
  std::vector<SymbolUses> syms;
  for (const isa::SymbolRef& ref : program.symbol_refs) {
    auto [it, fresh] = index.try_emplace(ref.symbol, syms.size());
    if (fresh) syms.push_back({ref.symbol, 0, {}, bundle::kNoProducer});
    SymbolUses& s = syms[it->second];
    isa::Access access = isa::Access::Read;
    const uint64_t bytes = extent_bytes(program.instrs[ref.instr], ref.field, access);
    s.bytes = std::max(s.bytes, static_cast<uint64_t>(ref.offset) + bytes);
    if (s.instrs.empty() || s.instrs.back() != ref.instr) s.instrs.push_back(ref.instr);
    if (access == isa::Access::Write && s.producer == bundle::kNoProducer) s.producer = static_cast<int64_t>(ref.instr);
  }
  for (auto& s : syms) {
    std::sort(s.instrs.begin(), s.instrs.end());
    s.instrs.erase(std::unique(s.instrs.begin(), s.instrs.end()), s.instrs.end());
  }
  return syms;
}

std::string where(const isa::AsmProgram& program, size_t instr) {
  return instr < program.lines.size() ? fmt::format("instruction {} (line {})", instr, program.lines[instr])
                                      : fmt::format("instruction {}", instr);
}

}  // namespace

bundle::MemMap place_symbols(isa::AsmProgram& program, const isa::NpuConfig& npu, const PlaceOptions& options) {
  std::map<std::string, size_t> index;
  std::vector<SymbolUses> syms = collect_uses(program, index);
  // Per instruction: symbols first used there (defined before it runs) and symbols it
  // uses (consumed after it runs). Defining first keeps an output off its inputs' bytes.
  std::vector<std::vector<size_t>> starts(program.instrs.size()), uses(program.instrs.size());
  for (size_t s = 0; s < syms.size(); ++s) {
    const size_t first = syms[s].instrs.front();
    if (syms[s].producer != static_cast<int64_t>(first))
      throw Error(fmt::format("{}: symbol '%{}' is read before any instruction writes it (use before define)",
                              where(program, first), syms[s].name));
    starts[first].push_back(s);
    for (size_t i : syms[s].instrs) uses[i].push_back(s);
  }
  Allocator alloc(SramAddr{0}, npu.sram_bytes, npu.alignment, options.policy);
  SymbolTable table(alloc);
  bundle::MemMap map;
  map.header = options.header;
  map.sram_bytes = npu.sram_bytes;
  map.alignment = npu.alignment;
  map.instructions = static_cast<int64_t>(program.instrs.size());
  for (size_t i = 0; i < program.instrs.size(); ++i) {
    for (size_t s : starts[i]) {
      const SymbolUses& u = syms[s];
      const AllocResult r = table.define(u.name, Bytes{std::max<uint64_t>(u.bytes, 1)},
                                         static_cast<uint32_t>(u.instrs.size()));
      if (!r) throw Error(fmt::format("{}: no room for symbol '%{}': {}\n{}", where(program, i), u.name,
                                      r.oom.message(), alloc.dump()));
      bundle::MemBuffer b{u.name, r.addr, r.padded, static_cast<int64_t>(i), static_cast<int64_t>(u.instrs.back()),
                  u.producer, {}};
      for (size_t k = 1; k < u.instrs.size(); ++k) b.consumers.push_back(static_cast<int64_t>(u.instrs[k]));
      map.buffers.push_back(std::move(b));
    }
    for (size_t s : uses[i]) table.consume(syms[s].name);
  }
  // Every symbol is freed by now: the fix-up takes where each one was.
  fixup(program, [&](std::string_view name) -> std::optional<Placement> {
    const std::optional<SymbolId> id = table.find_id(name);
    return id ? table.last_placement(*id) : std::nullopt;
  });
  return map;
}

}  // namespace npuforge::allocator
