#include "util/file_io.h"
#include "gen/output.h"

#include <algorithm>
#include <array>
#include <iterator>
#include <span>
#include <sstream>

#include <fmt/format.h>

#include "isa/assembler.h"
#include "util/buffered_writer.h"
#include "util/error.h"
#include "util/text.h"

namespace npuforge::gen {

namespace {

inline constexpr uint32_t kNoInstr = UINT32_MAX;
inline constexpr size_t kMaxHexBytes = 128;  // the ISA loader's cap on the word width

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
void put_hex(Sink& out, uint64_t v) {
  std::array<char, 16> buf;
  out.put(util::hex_digits(v, buf));
}

template <class Sink>
void put_dec(Sink& out, uint64_t v) {
  const fmt::format_int f(v);
  out.put(std::string_view(f.data(), f.size()));
}

// Instruction i's line of assembly with its operand symbols as a comment, appended to `line`;
// `r` walks the SymRefs (in instruction order) past instruction i's.
void append_assembly_line(const GeneratedProgram& p, size_t i, size_t& r, StringSink& line) {
  const isa::Instruction& in = p.instrs[i];
  isa::append_disassembly(line.text, in);
  bool first = true;
  for (; r < p.refs.size() && p.refs[r].instr == i; ++r) {
    line.put(first ? "  ; " : " ");
    first = false;
    const SymbolInfo& s = p.symbols[p.refs[r].symbol.value];
    line.put(in.spec->fields[p.refs[r].field].name);
    line.put("=%");
    emit_symbol(line, s.kind, s.origin, s.version);
  }
  line.put('\n');
}

template <class Sink>
void emit_assembly_header(const GeneratedProgram& p, Sink& out) {
  out.format("; {}\n; {} instructions; operand symbols are given in the comments\n", p.header, p.instrs.size());
}

// The header isa::to_readmemh writes.
void emit_readmemh_header(const isa::Isa& isa, const GeneratedProgram& p, util::BufferedWriter& out) {
  if (!p.header.empty()) out.format("// {}\n", p.header);
  out.format("// {} instructions, {} bits each, most significant digit first\n", p.instrs.size(), isa.width_bits());
}

// One $readmemh line of an encoded word, most significant digit first.
void emit_readmemh_word(std::span<const uint8_t> word, util::BufferedWriter& out) {
  static constexpr char kHex[] = "0123456789abcdef";
  char line[2 * kMaxHexBytes + 1];
  size_t n = 0;
  for (size_t b = word.size(); b-- > 0;) {
    line[n++] = kHex[word[b] >> 4];
    line[n++] = kHex[word[b] & 15];
  }
  line[n++] = '\n';
  out.put(std::string_view(line, n));
}

// GeneratedProgram::memmap().to_yaml(), written as it is computed: the producer and the
// consumers of every symbol are gathered into flat arrays (a few bytes per reference) instead
// of a MemMap with a string and a vector per buffer, which was most of gen's peak memory.
void emit_memmap(const GeneratedProgram& p, util::BufferedWriter& out) {
  std::istringstream lines(p.header);
  for (std::string line; std::getline(lines, line);) {
    out.put("# ");
    out.put(line);
    out.put('\n');
  }
  out.format("sram_bytes: {}\nalignment: {}\ninstructions: {}\n", p.npu.sram_bytes.value, p.npu.alignment.value,
             p.instrs.size());
  const size_t n = p.symbols.size();
  std::vector<uint32_t> producer(n, kNoInstr), last_read(n, kNoInstr), begin(n + 1, 0);
  for (const SymRef& r : p.refs) {  // consumers as memmap() lists them: each reading instruction once
    const uint32_t sym = r.symbol.value;
    if (r.write) producer[sym] = r.instr;
    else if (last_read[sym] != r.instr) last_read[sym] = r.instr, ++begin[sym + 1];
  }
  for (size_t i = 0; i < n; ++i) begin[i + 1] += begin[i];
  std::vector<uint32_t> consumers(begin[n]);
  std::vector<uint32_t> fill(begin.begin(), begin.end() - 1);
  std::fill(last_read.begin(), last_read.end(), kNoInstr);
  for (const SymRef& r : p.refs) {
    const uint32_t sym = r.symbol.value;
    if (!r.write && last_read[sym] != r.instr) last_read[sym] = r.instr, consumers[fill[sym]++] = r.instr;
  }
  const bool any = std::any_of(producer.begin(), producer.end(), [](uint32_t i) { return i != kNoInstr; });
  out.put(any ? "buffers:\n" : "buffers: []\n");
  for (uint32_t i = 0; i < n; ++i) {
    if (producer[i] == kNoInstr) continue;  // placed but never produced (length reached)
    const SymbolInfo& s = p.symbols[i];
    // Generated names (lower-case letters, digits, "@digits") are plain YAML: never quoted.
    out.put("  - {symbol: ");
    emit_symbol(out, s.kind, s.origin, s.version);
    out.put(", offset: 0x");
    put_hex(out, s.addr);
    out.put(", size: ");
    put_dec(out, s.padded);
    out.put(", first: ");
    put_dec(out, producer[i]);
    out.put(", last: ");
    put_dec(out, begin[i] == begin[i + 1] ? producer[i] : std::max(producer[i], consumers[begin[i + 1] - 1]));
    out.put(", producer: ");
    put_dec(out, producer[i]);
    if (begin[i] != begin[i + 1]) {
      out.put(", consumers: [");
      for (uint32_t c = begin[i]; c < begin[i + 1]; ++c) {
        if (c != begin[i]) out.put(", ");
        put_dec(out, consumers[c]);
      }
      out.put(']');
    }
    out.put("}\n");
  }
}

}  // namespace

std::string to_assembly(const GeneratedProgram& p) {
  StringSink sink;
  emit_assembly_header(p, sink);
  for (size_t i = 0, r = 0; i < p.instrs.size(); ++i) append_assembly_line(p, i, r, sink);
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

// The .s, .bin and .hex files in one pass over the instructions: each is disassembled into one
// reused line and encoded into one word, so no output is ever held whole in memory.
void write_outputs(const isa::Isa& isa, const GeneratedProgram& p, const std::filesystem::path& prefix) {
  const std::string base = prefix.string();
  util::BufferedWriter s(base + ".s", "assembly");
  util::BufferedWriter b(base + ".bin", "program binary");
  util::BufferedWriter h(base + ".hex", "$readmemh image");
  emit_assembly_header(p, s);
  const size_t width = isa.width_bytes();
  if (width > kMaxHexBytes) {  // no such ISA (the loader refuses it): the whole-program paths
    b.put(isa::encode_program(isa, p.instrs));
    h.put(isa::to_readmemh(isa, p.instrs, p.header));
  } else {
    emit_readmemh_header(isa, p, h);
  }
  std::array<uint8_t, kMaxHexBytes> word_bytes{};
  const std::span<uint8_t> word(word_bytes.data(), std::min(width, kMaxHexBytes));
  StringSink line;
  for (size_t i = 0, r = 0; i < p.instrs.size(); ++i) {
    line.text.clear();
    append_assembly_line(p, i, r, line);
    s.put(line.text);
    if (width > kMaxHexBytes) continue;
    isa::encode(p.instrs[i], word);
    b.put(word);
    emit_readmemh_word(word, h);
  }
  s.close();
  b.close();
  h.close();
  util::BufferedWriter m(base + ".memmap.yaml", "memory map");
  emit_memmap(p, m);
  m.close();
  util::BufferedWriter d(base + ".ddr.bin", "DDR image");
  d.put(p.ddr_image);
  d.close();
}

}  // namespace npuforge::gen
