#include "gen/output_writers.h"

#include <algorithm>
#include <cstring>
#include <span>
#include <sstream>

#include <fmt/format.h>

#include "util/text.h"

namespace npuforge::gen {

namespace {

inline constexpr uint32_t kNoInstr = UINT32_MAX;

}  // namespace

char* write_symbol(char* out, OpKind origin_kind, uint32_t origin, uint32_t version) {
  static constexpr std::string_view kPrefix[kNumOpKinds] = {"ld", "st", "g", "ic", "e", "p", "mv", "lut", "nop", "sync"};
  out = util::write_dec(util::write_text(out, kPrefix[static_cast<unsigned>(origin_kind)]), origin);
  if (version == 0) return out;
  *out++ = '@';
  return util::write_dec(out, version);
}

void AssemblyEmitter::header(std::string_view header, uint64_t instructions, util::BufferedWriter& out) {
  out.format("; {}\n; {} instructions; operand symbols are given in the comments\n", header, instructions);
  started_ = true;
  announced_ = instructions;
}

void AssemblyEmitter::emit(std::span<const isa::Instruction> instrs, std::span<const SymRef> refs,
                           const SymbolInfo* symbols, util::BufferedWriter& out) {
  size_t r = ref_;  // walks the SymRefs, which are in instruction order
  for (size_t i = next_; i < instrs.size(); ++i) {
    const isa::Instruction& in = instrs[i];
    char* o = isa::write_disassembly(out.reserve(in.spec->max_line_bytes + 1), in);
    const char* separator = "  ; ";
    for (; r < refs.size() && refs[r].instr == i; ++r) {
      out.commit(o);  // a line may carry any number of references: room for each
      const std::string& name = in.spec->fields[refs[r].field].name;
      o = util::write_text(out.reserve(4 + name.size() + 2 + kMaxSymbolBytes + 1), separator);  // "  ; name=%symbol\n"
      separator = " ";
      o = util::write_text(o, name);
      *o++ = '=';
      *o++ = '%';
      const SymbolInfo& s = symbols[refs[r].symbol.value];
      o = write_symbol(o, s.kind, s.origin, s.version);
    }
    *o++ = '\n';
    out.commit(o);
  }
  next_ = std::max(next_, instrs.size());
  ref_ = r;
}

void emit_assembly(const GeneratedProgram& p, util::BufferedWriter& out) {
  AssemblyEmitter e;
  e.header(p.header, p.instrs.size(), out);
  e.emit(p.instrs, p.refs, p.symbols.data(), out);
}

WordsEmitter::WordsEmitter(const isa::Isa& isa) : isa_(&isa) {
  for (unsigned v = 0; v < 256; ++v) digits_[v] = {"0123456789abcdef"[v >> 4], "0123456789abcdef"[v & 15]};
}

void WordsEmitter::header(std::string_view header, uint64_t instructions, util::BufferedWriter& hex) {
  // The header isa::to_readmemh writes.
  if (!header.empty()) hex.format("// {}\n", header);
  hex.format("// {} instructions, {} bits each, most significant digit first\n", instructions, isa_->width_bits());
  started_ = true;
}

void WordsEmitter::emit(std::span<const isa::Instruction> instrs, util::BufferedWriter& bin, util::BufferedWriter& hex) {
  const size_t w = isa_->width_bytes();
  for (size_t i = next_; i < instrs.size(); ++i) {
    auto* word = reinterpret_cast<uint8_t*>(bin.reserve(w));
    isa::encode(instrs[i], std::span<uint8_t>(word, w));
    bin.commit(reinterpret_cast<char*>(word + w));
    char* o = hex.reserve(2 * w + 1);  // most significant digit first
    for (size_t b = w; b-- > 0; o += 2) std::memcpy(o, digits_[word[b]].data(), 2);
    *o++ = '\n';
    hex.commit(o);
  }
  next_ = std::max(next_, instrs.size());
}

void emit_words(const isa::Isa& isa, const GeneratedProgram& p, util::BufferedWriter& bin, util::BufferedWriter& hex) {
  WordsEmitter e(isa);
  e.header(p.header, p.instrs.size(), hex);
  e.emit(p.instrs, bin, hex);
}

namespace {

// One buffer of the memory map: "  - {symbol: ld0, offset: 0x0, size: 448, first: 0, last: 1,
// producer: 0, consumers: [1]}".
void emit_buffer(const SymbolInfo& s, uint32_t producer, std::span<const uint32_t> consumers, util::BufferedWriter& out) {
  constexpr size_t kFixedBytes = 256;  // the line without its consumers (about 80 + 25 + 5 numbers)
  constexpr size_t kConsumerBytes = 2 + util::kMaxDecDigits + 3;  // ", N" and the closing "]}\n"
  char* o = out.reserve(kFixedBytes);
  // Generated names (lower-case letters, digits, "@digits") are plain YAML: never quoted.
  o = write_symbol(util::write_text(o, "  - {symbol: "), s.kind, s.origin, s.version);
  o = util::write_hex(util::write_text(o, ", offset: 0x"), s.addr);
  o = util::write_dec(util::write_text(o, ", size: "), s.padded);
  o = util::write_dec(util::write_text(o, ", first: "), producer);
  const uint32_t last = consumers.empty() ? producer : std::max(producer, consumers.back());
  o = util::write_dec(util::write_text(o, ", last: "), last);
  o = util::write_dec(util::write_text(o, ", producer: "), producer);
  if (!consumers.empty()) {
    o = util::write_text(o, ", consumers: [");
    for (size_t c = 0; c < consumers.size(); ++c) {
      out.commit(o);
      o = out.reserve(kConsumerBytes);
      if (c != 0) o = util::write_text(o, ", ");
      o = util::write_dec(o, consumers[c]);
    }
    *o++ = ']';
  }
  o = util::write_text(o, "}\n");
  out.commit(o);
}

}  // namespace

// Written as it is computed: the producer and the consumers of every symbol are gathered into
// flat arrays (a few bytes per reference) instead of a MemMap with a string and a vector per
// buffer, which was most of gen's peak memory.
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
  // The consumers' start offsets double as their fill cursors (a fourth per-symbol array
  // was 2.5 MB more to fault in at 1M instructions).
  std::vector<uint32_t> producer(n, kNoInstr), last_read(n, kNoInstr), begin(n + 1, 0);
  for (const SymRef& r : p.refs) {  // consumers as memmap() lists them: each reading instruction once
    const uint32_t sym = r.symbol.value;
    if (r.write) producer[sym] = r.instr;
    else if (last_read[sym] != r.instr) last_read[sym] = r.instr, ++begin[sym + 1];
  }
  for (size_t i = 0; i < n; ++i) begin[i + 1] += begin[i];
  std::vector<uint32_t> consumers(begin[n]);
  std::fill(last_read.begin(), last_read.end(), kNoInstr);
  for (const SymRef& r : p.refs) {
    const uint32_t sym = r.symbol.value;
    if (!r.write && last_read[sym] != r.instr) last_read[sym] = r.instr, consumers[begin[sym]++] = r.instr;
  }
  // Now begin[i] is where symbol i's consumers end, and i - 1's where they start.
  const bool any = std::any_of(producer.begin(), producer.end(), [](uint32_t i) { return i != kNoInstr; });
  out.put(any ? "buffers:\n" : "buffers: []\n");
  const std::span<const uint32_t> all(consumers);
  for (uint32_t i = 0; i < n; ++i) {
    const uint32_t start = i == 0 ? 0 : begin[i - 1];
    if (producer[i] != kNoInstr)  // else placed but never produced (length reached)
      emit_buffer(p.symbols[i], producer[i], all.subspan(start, begin[i] - start), out);
  }
}

}  // namespace npuforge::gen
