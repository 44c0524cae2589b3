#include "gen/output_writers.h"

#include <algorithm>
#include <span>

#include "bundle/listing.h"
#include "bundle/memmap_text.h"
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
  bundle::put_listing_head(out, header, instructions, kListingNote);
  started_ = true;
  announced_ = instructions;
}

void AssemblyEmitter::emit(std::span<const isa::Instruction> instrs, std::span<const SymRef> refs,
                           const SymbolInfo* symbols, util::BufferedWriter& out) {
  size_t r = ref_;  // walks the SymRefs, which are in instruction order
  for (size_t i = next_; i < instrs.size(); ++i) {
    bundle::ListingLine line(out, instrs[i]);
    for (; r < refs.size() && refs[r].instr == i; ++r) {
      const SymbolInfo& s = symbols[refs[r].symbol.value];
      line.operand(refs[r].field, kMaxSymbolBytes,
                   [&s](char* o) { return write_symbol(o, s.kind, s.origin, s.version); });
    }
    line.end();
  }
  next_ = std::max(next_, instrs.size());
  ref_ = r;
}

// Written as it is computed: the producer and the consumers of every symbol are gathered into
// flat arrays (a few bytes per reference) instead of a MemMap with a string and a vector per
// buffer, which was most of gen's peak memory.
void emit_memmap(const GeneratedProgram& p, util::BufferedWriter& out) {
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
  const bundle::Program& b = p.bundle;
  bundle::put_memmap_head(out, p.header, b.config.sram_bytes.value, b.config.alignment.value,
                          static_cast<int64_t>(b.instrs.size()), any);
  const std::span<const uint32_t> all(consumers);
  for (uint32_t i = 0; i < n; ++i) {
    if (producer[i] == kNoInstr) continue;  // placed but never produced (length reached)
    const uint32_t start = i == 0 ? 0 : begin[i - 1];
    const std::span<const uint32_t> read_by = all.subspan(start, begin[i] - start);
    const SymbolInfo& s = p.symbols[i];
    const uint32_t last = read_by.empty() ? producer[i] : std::max(producer[i], read_by.back());
    // Generated names (lower-case letters, digits, "@digits") are plain YAML: never quoted.
    bundle::put_buffer_line(
        out, kMaxSymbolBytes, [&s](char* o) { return write_symbol(o, s.kind, s.origin, s.version); }, s.addr,
        s.padded, producer[i], last, &producer[i], read_by);
  }
}

}  // namespace npuforge::gen
