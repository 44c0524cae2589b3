#include "compiler/plant.h"

#include <fmt/core.h>

#include "isa/token_order.h"
#include "util/error.h"

namespace npuforge::compiler {
namespace {

// The memory-map buffer a field of an instruction names (via the program's symbol refs).
bundle::MemBuffer* buffer_of(SegmentProgram& p, size_t instr, unsigned field) {
  for (const isa::SymbolRef& r : p.refs) {
    if (r.instr != instr || r.field != field) continue;
    for (bundle::MemBuffer& b : p.memmap.buffers)
      if (b.symbol == r.symbol) return &b;
  }
  return nullptr;
}

std::string early_free(SegmentProgram& p, size_t seg) {
  for (bundle::MemBuffer& b : p.memmap.buffers) {
    if (b.consumers.empty() || b.consumers.back() - 1 < b.first) continue;
    const int64_t last_read = b.consumers.back();
    b.last = last_read - 1;
    return fmt::format("seg{}: tile buffer %{} freed after #{}, one instruction before its last read #{} ({})", seg,
                       b.symbol, b.last, last_read, p.instrs.at(static_cast<size_t>(last_read)).spec->mnemonic);
  }
  return {};
}

std::string im2col_short(SegmentProgram& p, size_t seg) {
  for (size_t i = 0; i < p.instrs.size(); ++i) {
    const isa::Instruction& in = p.instrs[i];
    if (in.spec->mnemonic != "im2col") continue;
    bundle::MemBuffer* b = buffer_of(p, i, in.spec->require_field("dst"));
    if (!b) continue;
    // A row of the scratch is one GEMM row: k bytes of the GEMM that reads it.
    for (int64_t c : b->consumers) {
      const isa::Instruction& g = p.instrs.at(static_cast<size_t>(c));
      if (g.spec->mnemonic != "gemm") continue;
      uint64_t written = 0;
      for (const isa::Extent& e : isa::extents(in))
        if (e.access == isa::Access::Write) written = e.bytes;
      const uint64_t k = static_cast<uint64_t>(g.value(g.spec->require_field("k")));
      if (written <= k) continue;
      const uint64_t old = b->size.value;
      b->size = Bytes{written - k};
      return fmt::format("seg{}: im2col scratch %{} (written by #{}: {} bytes, GEMM #{} k = {}) sized {} instead of {}",
                         seg, b->symbol, i, written, c, k, b->size.value, old);
    }
  }
  return {};
}

std::string drop_token(SegmentProgram& p, size_t seg) {
  const unsigned load = static_cast<unsigned>(isa::Queue::Load), compute = static_cast<unsigned>(isa::Queue::Compute);
  const isa::TokenOrder before(p.instrs);
  for (const auto& [s, w] : before.token_pairs()) {
    if (p.instrs[s].spec->queue != isa::Queue::Load || p.instrs[w].spec->mnemonic != "gemm") continue;
    std::vector<isa::Instruction> edited = p.instrs;
    edited[s].raw[isa::kSignalSlot] &= ~(1u << compute);
    edited[w].raw[isa::kWaitSlot] &= ~(1u << load);
    if (isa::TokenOrder(edited).happens_before(s, w)) continue;  // still ordered another way: no bug
    p.instrs = std::move(edited);
    p.tokens -= 1;
    std::string tile;
    for (const isa::SymbolRef& r : p.refs)
      if (r.instr == s) tile = r.symbol;
    return fmt::format("seg{}: dropped the token from #{} load (%{}) to #{} gemm", seg, s, tile, w);
  }
  return {};
}

}  // namespace

const std::vector<std::string>& planted_bug_names() {
  static const std::vector<std::string> names = {"early-free", "im2col-short", "drop-token"};
  return names;
}

std::string plant_bug(CompiledModel& m, const std::string& kind) {
  std::string (*plant)(SegmentProgram&, size_t) = nullptr;
  if (kind == "early-free") plant = early_free;
  if (kind == "im2col-short") plant = im2col_short;
  if (kind == "drop-token") plant = drop_token;
  if (!plant)
    throw Error(fmt::format("--plant-bug '{}': expected early-free, im2col-short or drop-token (overlapping arena "
                            "offsets come from an outside plan, --arena-plan)",
                            kind));
  for (size_t si = 0; si < m.segments.size(); ++si) {
    CompiledSegment& cs = m.segments[si];
    if (cs.segment.target != Target::kNpu) continue;
    if (std::string what = plant(cs.program, si); !what.empty()) {
      if (kind == "drop-token") m.tokens -= 1;
      return what;
    }
  }
  throw Error(fmt::format("--plant-bug {}: no NPU segment of this model has a place for it", kind));
}

}  // namespace npuforge::compiler
