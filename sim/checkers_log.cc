// The checkers' event log: on_start/on_access/on_finish append an event, flush() checks the
// logged ones in order (see CheckerOptions::batch).
#include <algorithm>
#include <utility>

#include <fmt/core.h>

#include "sim/checkers.h"
#include "sim/semantics.h"
#include "util/error.h"

namespace npuforge::sim {

void Checkers::on_start(size_t instr, uint64_t time) {
  if (instr >= instrs_) {
    throw Error(fmt::format("checkers: instruction index {} beyond the program ({} instructions)",
                            instr, program_->instrs.size()));
  }
  log({kStart, 0, 0, 0, static_cast<uint32_t>(instr), time, 0});
}

void Checkers::on_access(size_t instr, const isa::Extent& e) {
  if (e.bytes == 0 || instr >= instrs_) return;
  const bool ddr = e.space == isa::Space::Ddr;
  // An access no checker looks at is not logged (its check would do nothing).
  if (ddr ? !ddr_hazards_ && !ddr_owner_ : !sram_runs_ && !shadow_on_) return;
  const isa::Queue queue = program_->instrs[instr].spec->queue;
  const uint8_t flags = static_cast<uint8_t>((e.access == isa::Access::Write ? kWrite : 0) |
                                             (options_.hazard && queue != isa::Queue::Control ? kHazard : 0));
  const auto i = static_cast<uint32_t>(instr);
  if (ddr) return log_ddr(i, e, flags, static_cast<uint8_t>(queue));
  if (e.addr >= sram_bytes_) return;  // out of range: the executor reports it
  log({kSram, static_cast<uint8_t>(e.field), flags, static_cast<uint8_t>(queue), i, e.addr,
       std::min(e.bytes, sram_bytes_ - e.addr)});
}

// DDR is not in the memory map, but a STORE and a later LOAD of the same DDR bytes (a spill
// and its reload) race like SRAM accesses. A 2-D DMA touches only its rows, not the gaps.
// One row (nearly every DDR access: a 1-D DMA's, a 2-D DMA of one row) with no loop and no
// frame (the log's flush a jump); more rows in log_ddr_rows.
void Checkers::log_ddr(uint32_t instr, const isa::Extent& e, uint8_t flags, uint8_t queue) {
  const auto& in = program_->instrs[instr];
  const Op op = sem_->op(in);
  uint64_t row_bytes = e.bytes;
  if (op == Op::Load || op == Op::Store) {
    const auto& s = op == Op::Load ? sem_->load_slots() : sem_->store_slots();
    const uint64_t rows = in.get(s.rows);
    row_bytes = in.get(s.row_bytes);
    if (rows != 1) return log_ddr_rows(instr, e.addr, rows, row_bytes, in.get(s.stride), flags, queue);
  }
  if (e.addr >= ddr_bytes_) return;
  log({kDdr, 0, flags, queue, instr, e.addr, std::min(row_bytes, ddr_bytes_ - e.addr)});
}

void Checkers::log_ddr_rows(uint32_t instr, uint64_t addr0, uint64_t rows, uint64_t row_bytes, uint64_t stride,
                            uint8_t flags, uint8_t queue) {
  for (uint64_t r = 0; r < rows; ++r) {
    const uint64_t addr = addr0 + r * stride;
    if (addr >= ddr_bytes_) break;
    log({kDdr, 0, flags, queue, instr, addr, std::min(row_bytes, ddr_bytes_ - addr)});
  }
}

void Checkers::on_accesses(size_t instr) {
  for (const auto& e : isa::extents(program_->instrs.at(instr))) {
    if (e.bytes > 0) on_access(instr, e);
  }
}

void Checkers::flush() {
  // The log is emptied first: a check that throws leaves no event to be checked twice.
  const size_t n = std::exchange(logged_, 0);
  for (size_t k = 0; k < n; ++k) {
    const Event& e = log_[k];
    switch (e.kind) {
      case kStart: do_start(e.instr, e.a); break;
      case kFinish: do_finish(e.instr, e.a); break;
      case kSram: do_sram(e); break;
      case kDdr: do_ddr(e); break;
    }
  }
}

}  // namespace npuforge::sim
