#include "util/file_io.h"
#include "gen/output.h"

#include <fstream>

#include <fmt/core.h>

#include "isa/assembler.h"
#include "util/error.h"

namespace npuforge::gen {

std::string symbol_name(OpKind origin_kind, uint32_t origin, uint32_t version) {
  static constexpr const char* kPrefix[kNumOpKinds] = {"ld", "st", "g", "ic", "e", "p", "mv", "lut", "nop", "sync"};
  std::string name = fmt::format("{}{}", kPrefix[static_cast<unsigned>(origin_kind)], origin);
  if (version > 0) name += fmt::format("@{}", version);
  return name;
}

std::string GeneratedProgram::symbol_name(uint32_t symbol) const {
  const SymbolInfo& s = symbols[symbol];
  return gen::symbol_name(s.kind, s.origin, s.version);
}

allocator::MemMap GeneratedProgram::memmap() const {
  allocator::MemMap map;
  map.header = header;
  map.sram_bytes = npu.sram_bytes;
  map.alignment = npu.alignment;
  map.instructions = static_cast<int64_t>(instrs.size());
  std::vector<int64_t> producer(symbols.size(), allocator::kNoProducer);
  std::vector<std::vector<int64_t>> consumers(symbols.size());
  for (const SymRef& r : refs) {
    const uint32_t sym = r.symbol.value;
    if (r.write) producer[sym] = r.instr;
    else if (consumers[sym].empty() || consumers[sym].back() != r.instr) consumers[sym].push_back(r.instr);
  }
  for (uint32_t i = 0; i < symbols.size(); ++i) {
    if (producer[i] == allocator::kNoProducer) continue;  // placed but never produced (length reached)
    allocator::MemBuffer b;
    b.symbol = symbol_name(i);
    b.offset = SramAddr{symbols[i].addr};
    b.size = Bytes{symbols[i].padded};
    b.first = producer[i];
    b.last = consumers[i].empty() ? producer[i] : std::max(producer[i], consumers[i].back());
    b.producer = producer[i];
    b.consumers = std::move(consumers[i]);
    map.buffers.push_back(std::move(b));
  }
  return map;
}

std::string to_assembly(const GeneratedProgram& p) {
  std::string out = fmt::format("; {}\n; {} instructions; operand symbols are given in the comments\n", p.header,
                                p.instrs.size());
  size_t r = 0;
  for (size_t i = 0; i < p.instrs.size(); ++i) {
    const isa::Instruction& in = p.instrs[i];
    out += isa::disassemble(in);
    bool first = true;
    for (; r < p.refs.size() && p.refs[r].instr == i; ++r) {
      out += first ? "  ; " : " ";
      first = false;
      out += fmt::format("{}=%{}", in.spec->fields[p.refs[r].field].name, p.symbol_name(p.refs[r].symbol.value));
    }
    out += '\n';
  }
  return out;
}

std::string summary_line(const GeneratedProgram& p) {
  const GenSummary& s = p.summary;
  std::string events;
  for (unsigned k = 0; k < s.alloc_events.size(); ++k)
    events += fmt::format(" {}={}", allocator::to_string(static_cast<allocator::AllocEventKind>(k)), s.alloc_events[k]);
  return fmt::format(
      "gen: seed={} instructions={} buffers={} peak_sram={} tokens={} events:{} oom={} retired={} compact_moves={} "
      "spills={} reloads={} skipped={} directed={}",
      p.seed, s.instructions, s.buffers, s.peak_sram, s.tokens, events, s.oom, s.retired, s.compact_moves, s.spills,
      s.reloads, s.skipped, s.directed);
}

void write_outputs(const isa::Isa& isa, const GeneratedProgram& p, const std::filesystem::path& prefix) {
  const std::string base = prefix.string();
  const std::string s = to_assembly(p);
  util::write_file(base + ".s", s);
  const std::vector<uint8_t> bin = isa::encode_program(isa, p.instrs);
  util::write_file(base + ".bin", bin);
  const std::string hex = isa::to_readmemh(isa, p.instrs, p.header);
  util::write_file(base + ".hex", hex);
  p.memmap().save_file(base + ".memmap.yaml");
  util::write_file(base + ".ddr.bin", p.ddr_image);
}

}  // namespace npuforge::gen
