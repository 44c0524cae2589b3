#include "util/file_io.h"
#include "gen/output.h"

#include <iterator>
#include <span>

#include <fmt/format.h>

#include "isa/assembler.h"
#include "util/buffered_writer.h"
#include "util/error.h"

namespace npuforge::gen {

namespace {

// A std::string with util::BufferedWriter's interface, so one function emits into either.
struct StringSink {
  std::string text;
  void put(std::string_view s) { text += s; }
  void put(char c) { text += c; }
  template <class... Args>
  void format(fmt::format_string<Args...> f, Args&&... args) {
    fmt::format_to(std::back_inserter(text), f, std::forward<Args>(args)...);
  }
};

// "ld12", "g3@1": the op that first produced the value, and how often it was moved since.
template <class Sink>
void emit_symbol(Sink& out, OpKind origin_kind, uint32_t origin, uint32_t version) {
  static constexpr const char* kPrefix[kNumOpKinds] = {"ld", "st", "g", "ic", "e", "p", "mv", "lut", "nop", "sync"};
  out.put(kPrefix[static_cast<unsigned>(origin_kind)]);
  // format_int: no format-string parsing per name (a million-instruction program has millions).
  const fmt::format_int o(origin);
  out.put(std::string_view(o.data(), o.size()));
  if (version > 0) {
    const fmt::format_int v(version);
    out.put('@');
    out.put(std::string_view(v.data(), v.size()));
  }
}

}  // namespace

std::string symbol_name(OpKind origin_kind, uint32_t origin, uint32_t version) {
  StringSink name;
  emit_symbol(name, origin_kind, origin, version);
  return std::move(name.text);
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

namespace {

template <class Sink>
void emit_assembly(const GeneratedProgram& p, Sink& out) {
  out.format("; {}\n; {} instructions; operand symbols are given in the comments\n", p.header, p.instrs.size());
  size_t r = 0;
  for (size_t i = 0; i < p.instrs.size(); ++i) {
    const isa::Instruction& in = p.instrs[i];
    out.put(isa::disassemble(in));
    bool first = true;
    for (; r < p.refs.size() && p.refs[r].instr == i; ++r) {
      out.put(first ? "  ; " : " ");
      first = false;
      const SymbolInfo& s = p.symbols[p.refs[r].symbol.value];
      out.put(in.spec->fields[p.refs[r].field].name);
      out.put("=%");
      emit_symbol(out, s.kind, s.origin, s.version);
    }
    out.put('\n');
  }
}

// The same text as isa::to_readmemh, from the already encoded words.
void emit_readmemh(const isa::Isa& isa, const GeneratedProgram& p, std::span<const uint8_t> bin,
                   util::BufferedWriter& out) {
  static constexpr char kHex[] = "0123456789abcdef";
  char line[2 * 64 + 1];
  const size_t width = isa.width_bytes();
  if (2 * width >= sizeof line) return out.put(isa::to_readmemh(isa, p.instrs, p.header));  // no such ISA today
  if (!p.header.empty()) out.format("// {}\n", p.header);
  out.format("// {} instructions, {} bits each, most significant digit first\n", p.instrs.size(), isa.width_bits());
  for (size_t at = 0; at + width <= bin.size(); at += width) {
    size_t n = 0;
    for (size_t b = width; b-- > 0;) {
      line[n++] = kHex[bin[at + b] >> 4];
      line[n++] = kHex[bin[at + b] & 15];
    }
    line[n++] = '\n';
    out.put(std::string_view(line, n));
  }
}

}  // namespace

std::string to_assembly(const GeneratedProgram& p) {
  StringSink sink;
  emit_assembly(p, sink);
  return std::move(sink.text);
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
  {
    util::BufferedWriter s(base + ".s", "assembly");
    emit_assembly(p, s);
    s.close();
  }
  const std::vector<uint8_t> bin = isa::encode_program(isa, p.instrs);
  {
    util::BufferedWriter b(base + ".bin", "program binary");
    b.put(bin);
    b.close();
  }
  {
    util::BufferedWriter h(base + ".hex", "$readmemh image");
    emit_readmemh(isa, p, bin, h);
    h.close();
  }
  {
    util::BufferedWriter m(base + ".memmap.yaml", "memory map");
    m.put(p.memmap().to_yaml());
    m.close();
  }
  util::BufferedWriter d(base + ".ddr.bin", "DDR image");
  d.put(p.ddr_image);
  d.close();
}

}  // namespace npuforge::gen
