#include "compiler/emitter.h"

#include <algorithm>

#include <fmt/core.h>

#include "allocator/fixup.h"
#include "util/error.h"

namespace npuforge::compiler {

SegmentEmitter::SegmentEmitter(const isa::Isa& isa, const isa::NpuConfig& npu, allocator::Policy policy,
                               std::vector<DdrBufferSpec> ddr_buffers, uint64_t ddr_lo, uint64_t ddr_hi)
    : isa_(isa),
      npu_(npu),
      align_(npu.alignment.value),
      alloc_(SramAddr{0}, npu.sram_bytes, npu.alignment, policy),
      table_(alloc_),
      sram_(npu.sram_bytes.value / npu.alignment.value + 1),
      ddr_lo_(ddr_lo / npu.alignment.value * npu.alignment.value),
      ddr_hi_(std::max(ddr_hi, ddr_lo)),
      ddr_specs_(std::move(ddr_buffers)),
      ddr_uses_(ddr_specs_.size()) {
  ddr_.resize((ddr_hi_ - ddr_lo_ + align_ - 1) / align_);
}

// The tracked units an extent covers ([first, first + count) of the returned array), or
// nullptr for DDR bytes outside the tracked range.
SegmentEmitter::Tracked* SegmentEmitter::tracked(const isa::Extent& e, uint64_t& first, uint64_t& count) {
  if (e.space == isa::Space::Sram) {
    first = e.addr / align_;
    count = (e.addr + e.bytes + align_ - 1) / align_ - first;
    if (first + count > sram_.size())
      throw Error(fmt::format("internal: SRAM extent [0x{:x}, 0x{:x}) outside the scratchpad", e.addr, e.addr + e.bytes));
    return sram_.data();
  }
  const uint64_t lo = std::max(e.addr, ddr_lo_), hi = std::min(e.addr + e.bytes, ddr_hi_);
  if (lo >= hi) return nullptr;
  first = (lo - ddr_lo_) / align_;
  count = (hi - ddr_lo_ + align_ - 1) / align_ - first;
  return ddr_.data();
}

// Sets the waits `in` (of queue q) needs and the matching signals on earlier instructions.
void SegmentEmitter::order(isa::Instruction& in, unsigned q) {
  Clock need{};
  for (const isa::Extent& e : isa::extents(in)) {
    if (e.bytes == 0) continue;
    uint64_t first = 0, count = 0;
    Tracked* t = tracked(e, first, count);
    if (!t) continue;
    for (uint64_t u = first; u < first + count; ++u) {
      const Clock& c = e.access == isa::Access::Write ? t[u].access : t[u].write;
      for (unsigned p = 0; p < isa::kNumQueues; ++p) need[p] = std::max(need[p], c[p]);
    }
  }
  for (unsigned p = 0; p < isa::kNumQueues; ++p) {
    if (p == q || need[p] == 0 || order_.follows(q, p, need[p])) continue;
    const size_t x = order_.instr(p, need[p]);
    order_.add_token(x, q);
    instrs_[x].raw[isa::kSignalSlot] |= 1u << q;
    in.raw[isa::kWaitSlot] |= 1u << p;
    ++tokens_;
  }
}

// Marks the bytes the instruction (at queue position seq of q) reads and writes.
void SegmentEmitter::record(size_t, unsigned q, uint32_t seq, const isa::Instruction& in) {
  for (const isa::Extent& e : isa::extents(in)) {
    if (e.bytes == 0) continue;
    uint64_t first = 0, count = 0;
    Tracked* t = tracked(e, first, count);
    if (!t) continue;
    for (uint64_t u = first; u < first + count; ++u) {
      t[u].access[q] = seq;
      if (e.access == isa::Access::Write) t[u].write[q] = seq;
    }
  }
}

void SegmentEmitter::emit(const OpCode& code) {
  const std::vector<uint32_t> readers = code.readers();
  std::vector<SymbolId> sym(code.bufs.size());
  std::vector<bool> placed(code.bufs.size(), false);
  for (const OpInstr& oi : code.instrs) {
    isa::Instruction in = oi.in;
    const auto idx = static_cast<int64_t>(instrs_.size());
    // Outputs first: a buffer is placed when its first writer comes.
    for (uint8_t r = 0; r < oi.nrefs; ++r) {
      const OperandRef& ref = oi.refs[r];
      if (!ref.write || placed[ref.buf]) continue;
      const OpBuffer& b = code.bufs[ref.buf];
      const SymbolId id = table_.intern(b.name);
      const allocator::AllocResult a = table_.define(id, Bytes{b.bytes}, readers[ref.buf]);
      if (!a.ok())
        throw Error(fmt::format("internal: no SRAM for buffer '{}' ({} bytes): {}", b.name, b.bytes, a.oom.message()));
      sym[ref.buf] = id;
      placed[ref.buf] = true;
      if (bufs_.size() <= id.value) bufs_.resize(id.value + 1);
      bufs_[id.value] = BufInfo{b.name, idx, {}};
    }
    for (uint8_t r = 0; r < oi.nrefs; ++r) {
      const OperandRef& ref = oi.refs[r];
      if (!placed[ref.buf])
        throw Error(fmt::format("internal: {} reads SRAM buffer '{}' before anything wrote it", in.spec->mnemonic,
                                code.bufs[ref.buf].name));
      // The address now (for the tokens); fix-up writes the same value and checks the extent.
      in.set_value(ref.field, int64_t{table_.lookup(sym[ref.buf]).value} + ref.offset);
      refs_.push_back({static_cast<size_t>(idx), ref.field, code.bufs[ref.buf].name, int64_t{ref.offset}});
      BufInfo& info = bufs_[sym[ref.buf].value];
      if (!ref.write && (info.consumers.empty() || info.consumers.back() != idx)) info.consumers.push_back(idx);
    }
    if (const std::string bad = isa::validate(in); !bad.empty())
      throw Error(fmt::format("internal: instruction {} ({}) is invalid: {}", idx, in.spec->mnemonic, bad));
    const auto q = static_cast<unsigned>(in.spec->queue);
    uint32_t seq = 0;
    if (q < isa::kNumQueues) {
      order(in, q);
      seq = order_.append(in.spec->queue);
      record(static_cast<size_t>(idx), q, seq, in);
    } else {
      order_.append(in.spec->queue);
    }
    instrs_.push_back(in);
    if (oi.ddr_buf != kNoDdrBuffer) {
      DdrUse& u = ddr_uses_.at(static_cast<size_t>(oi.ddr_buf));
      (in.spec->queue == isa::Queue::Store ? u.writers : u.readers).push_back(idx);
    }
    // Inputs die after the instruction that reads them last (outputs were placed before).
    for (uint8_t r = 0; r < oi.nrefs; ++r) {
      const OperandRef& ref = oi.refs[r];
      if (!ref.write) table_.consume(sym[ref.buf]);
    }
    for (uint8_t r = 0; r < oi.nrefs; ++r) {
      const OperandRef& ref = oi.refs[r];
      if (ref.write && readers[ref.buf] == 0 && table_.is_live(sym[ref.buf])) table_.release(sym[ref.buf]);
    }
  }
  // Every buffer of an op dies inside it (the op's last reads consumed them).
  if (table_.live_count() != 0)
    throw Error(fmt::format("internal: {} SRAM buffers still live after an op", table_.live_count()));
}

SegmentProgram SegmentEmitter::finish(const std::string& header) {
  const isa::InstrSpec& halt = isa_.require("halt");
  instrs_.push_back(isa::Instruction::make(halt));
  order_.append(halt.queue);

  SegmentProgram out;
  isa::AsmProgram prog;
  prog.instrs = std::move(instrs_);
  prog.symbol_refs = refs_;
  allocator::fixup(prog, [this](std::string_view name) -> std::optional<allocator::Placement> {
    const std::optional<SymbolId> id = table_.find_id(name);
    if (!id) return std::nullopt;
    return table_.last_placement(*id);
  });
  out.instrs = std::move(prog.instrs);
  out.refs = std::move(refs_);
  out.tokens = tokens_;
  out.sram_peak = alloc_.stats().high_water.value;

  bundle::MemMap& map = out.memmap;
  map.header = header;
  map.sram_bytes = npu_.sram_bytes;
  map.alignment = npu_.alignment;
  map.instructions = static_cast<int64_t>(out.instrs.size());
  for (uint32_t id = 0; id < bufs_.size(); ++id) {
    const BufInfo& b = bufs_[id];
    if (b.producer < 0) continue;
    const allocator::Placement p = table_.placed(SymbolId{id});
    bundle::MemBuffer mb;
    mb.symbol = b.name;
    mb.offset = p.addr;
    mb.size = p.padded;
    mb.first = b.producer;
    mb.last = b.consumers.empty() ? b.producer : std::max(b.producer, b.consumers.back());
    mb.producer = b.producer;
    mb.consumers = b.consumers;
    map.buffers.push_back(std::move(mb));
  }
  const int64_t last = map.instructions - 1;
  for (size_t i = 0; i < ddr_specs_.size(); ++i) {
    const DdrBufferSpec& s = ddr_specs_[i];
    const DdrUse& u = ddr_uses_[i];
    bundle::MemDdrBuffer b;
    b.name = s.name;
    b.region = s.region;
    b.offset = DdrAddr{s.addr};
    b.size = Bytes{s.bytes};
    int64_t first = last, end = 0;
    for (const auto* list : {&u.writers, &u.readers}) {
      if (list->empty()) continue;
      first = std::min(first, list->front());
      end = std::max(end, list->back());
    }
    if (s.live_in) first = 0;
    if (s.live_out || (u.writers.empty() && u.readers.empty())) end = last;
    b.first = first;
    b.last = std::max(first, end);
    b.writers = u.writers;
    b.readers = u.readers;
    std::sort(b.writers.begin(), b.writers.end());
    std::sort(b.readers.begin(), b.readers.end());
    map.ddr_buffers.push_back(std::move(b));
  }
  return out;
}

}  // namespace npuforge::compiler
