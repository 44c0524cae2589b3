#include "sim/sc_model/npu_top.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <exception>

#include <fmt/format.h>

#include "util/error.h"
#include "sim/golden.h"

// The queue engines of NpuTop (npu_top.h): tokens, operand transfers and the instruction's
// timing.
namespace npuforge::sim::sc_model {

using sc_core::sc_time;
using sc_core::sc_time_stamp;

Engine::Engine(sc_core::sc_module_name name, isa::Queue q, Context& ctx)
    : sc_module(name), sram("sram"), ddr("ddr"), queue("queue", static_cast<int>(kQueueDepth)),
      q_(static_cast<unsigned>(q)), ctx_(&ctx) {
  sram.register_invalidate_direct_mem_ptr(this, &Engine::invalidate_sram_dmi);
  SC_THREAD(run);
}

// Asked once, at the first scratchpad operand (the sockets are bound by then), and again
// after an invalidation. Only the TLM scratchpad is asked: the RTL one must see every access
// on its port (planted RTL bugs live there).
bool Engine::sram_dmi_ask() {
  if (!ctx_->sram_dmi) return false;
  if (!dmi_asked_) {
    dmi_asked_ = true;
    tlm::tlm_generic_payload p;
    p.set_command(tlm::TLM_READ_COMMAND);
    p.set_address(0);
    tlm::tlm_dmi dmi;
    // Reads and writes alike, zero latency (the engine times the whole instruction) and the
    // whole scratchpad from address 0: anything less is not used.
    if (sram->get_direct_mem_ptr(p, dmi) && dmi.is_read_write_allowed() && dmi.get_start_address() == 0 &&
        dmi.get_read_latency() == sc_core::SC_ZERO_TIME && dmi.get_write_latency() == sc_core::SC_ZERO_TIME) {
      dmi_ptr_ = dmi.get_dmi_ptr();
      dmi_bytes_ = dmi.get_end_address() + 1;
    }
  }
  return dmi_ptr_ != nullptr;
}

void Engine::invalidate_sram_dmi(sc_dt::uint64 /*start*/, sc_dt::uint64 /*end*/) {
  dmi_ptr_ = nullptr;
  dmi_bytes_ = 0;
  dmi_asked_ = false;
}

void Engine::run() {
  for (;;) {
    uint32_t i = 0;
    queue.read(i);
    instr_ = i;
    const isa::Instruction& instr = ctx_->instr(i);
    take_tokens(instr);
    if (planted(PlantId::ModelStaleRead) && q_ == 0) send_tokens(instr);  // before the write lands
    execute(i, instr);
    if (!(planted(PlantId::ModelStaleRead) && q_ == 0)) send_tokens(instr);
    state_ = State::Idle;
    instr_ = -1;
    --ctx_->outstanding[q_];
    ++ctx_->completed;
    ++ctx_->result.instructions;
    if (ctx_->draining) ctx_->completed_ev.notify(sc_core::SC_ZERO_TIME);
  }
}

// The token loops visit only the queues whose mask bits are set, lowest first, as a loop over
// every queue testing its bit did (most instructions wait on or signal one queue, or none).
constexpr uint32_t kQueueBits = (1u << isa::kNumQueues) - 1;

void Engine::take_tokens(const isa::Instruction& instr) {
  if (planted(PlantId::ModelIgnoreWait) && q_ == 1) return;
  for (uint32_t m = instr.wait_mask() & kQueueBits; m != 0; m &= m - 1) {
    const auto p = static_cast<unsigned>(std::countr_zero(m));
    if (planted(PlantId::ModelStoreEarly) && q_ == 2 && p == 1) continue;
    while (ctx_->tokens[p][q_] == 0) {
      state_ = State::WaitToken;
      waits_for_ = p;
      ctx_->token_waiting[q_] = true;
      wait(ctx_->token_ev[q_]);
      ctx_->token_waiting[q_] = false;
    }
    --ctx_->tokens[p][q_];
  }
}

// A token is told (a delta notification of token_ev[p]) only when queue p's engine waits on
// it: notifying nobody was a delta cycle per signal for nothing. Equivalent: an engine that
// does not wait now either finds the count already raised when it next looks (take_tokens
// checks the count before waiting), or starts waiting later in this evaluation phase for
// another queue's token, when the skipped notification would only have woken it for another
// look at a count still zero (no state, time or order changes: it waits again).
void Engine::send_tokens(const isa::Instruction& instr) {
  for (uint32_t m = instr.signal_mask() & kQueueBits; m != 0; m &= m - 1) {
    const auto p = static_cast<unsigned>(std::countr_zero(m));
    ++ctx_->tokens[q_][p];
    if (planted(PlantId::ModelDoubleSignal) && q_ == 1) ++ctx_->tokens[q_][p];
    if (ctx_->token_waiting[p]) ctx_->token_ev[p].notify(sc_core::SC_ZERO_TIME);
  }
}

void Engine::transport(isa::Space space, tlm::tlm_command cmd, uint64_t addr, std::span<uint8_t> data) {
  if (cmd == tlm::TLM_WRITE_COMMAND) before_write(space, addr, data.size());
  tlm::tlm_generic_payload& p = payload_;
  p.set_command(cmd);
  p.set_address(addr);
  p.set_data_ptr(data.data());
  p.set_data_length(static_cast<unsigned>(data.size()));
  p.set_streaming_width(static_cast<unsigned>(data.size()));
  p.set_byte_enable_ptr(nullptr);
  p.set_dmi_allowed(false);
  p.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
  sc_time delay = sc_core::SC_ZERO_TIME;
  (space == isa::Space::Sram ? sram : ddr)->b_transport(p, delay);
  if (delay != sc_core::SC_ZERO_TIME) wait(delay);
  if (p.is_response_error())
    throw Error(fmt::format("sc_model: {} of {}[{:#x}, +{}) failed: {}", cmd == tlm::TLM_READ_COMMAND ? "read" : "write",
                            space == isa::Space::Sram ? "sram" : "ddr", addr, data.size(),
                            p.get_response_string()));
}

// Reads one operand at the instruction's start. A scratchpad operand under DMI is either used
// in place (`in_place`: the kernel runs now, before anything else can write there) or copied
// out of the scratchpad; everything else goes through b_transport into in_[k].
std::span<const uint8_t> Engine::read_operand(unsigned k, const isa::Extent& e, bool in_place) {
  const bundle::Program& prog = *ctx_->program;
  if (e.space == isa::Space::Sram) {
    if (const uint8_t* direct = sram_direct(e.addr, e.bytes)) {
      if (in_place) return {direct, e.bytes};
      const std::span<uint8_t> in = in_[k].take(e.bytes);
      std::memcpy(in.data(), direct, e.bytes);
      return in;
    }
  }
  // No allocation once grown, and no clearing where the target fills every byte of a read
  // (DDR and the TLM scratchpad, mem_target.h: a memset per operand was 2% of a regression
  // seed). The RTL scratchpad's reads are cleared first, as a fresh vector was: a planted bug
  // may leave bytes unwritten, and they must read as zeros, not as the last operand.
  const bool fills = e.space == isa::Space::Ddr || ctx_->sram_reads_fill;
  const std::span<uint8_t> in = fills ? in_[k].take(e.bytes) : in_[k].take_cleared(e.bytes);
  const bool skew = planted(PlantId::ModelDmaOffByOne) && q_ == 0 && e.space == isa::Space::Ddr &&
                    e.addr + e.bytes < prog.config.ddr_bytes.value;
  transport(e.space, tlm::TLM_READ_COMMAND, e.addr + (skew ? 1 : 0), in);
  return in;
}

// Writes the result at the instruction's end: by DMI into the scratchpad, else b_transport.
void Engine::write_result(const isa::Extent& e, std::span<uint8_t> out) {
  if (e.space == isa::Space::Sram) {
    if (uint8_t* direct = sram_direct(e.addr, out.size())) {
      before_write(e.space, e.addr, out.size());
      std::memcpy(direct, out.data(), out.size());
      return;
    }
  }
  const bool short_store = planted(PlantId::ModelStoreShort) && q_ == 2 && e.space == isa::Space::Ddr && out.size() > 1;
  transport(e.space, tlm::TLM_WRITE_COMMAND, e.addr, short_store ? out.first(out.size() - 1) : out);
}

// Where an instruction's kernel runs under scratchpad DMI. The result is the same either way,
// since the operands are what the scratchpad held at the start and every kernel but STORE
// overwrites its whole write extent (semantics.h):
//  - AtStart: scratchpad operands read in place, the result kept in out_ and copied in at the
//    end (saves copying the inputs: GEMM, POOL, ELTWISE, ...);
//  - AtEndInPlace: operands copied at the start, the result computed straight into the
//    scratchpad at the end (saves copying the result when it is larger than the scratchpad
//    inputs: LOAD, IM2COL);
//  - AtEnd: operands copied at the start, the result computed into out_ at the end and written
//    (a STORE with gaps between its rows, whose DDR range is read at the end; no DMI, e.g. the
//    RTL scratchpad).
// A STORE whose rows cover its DDR range reads nothing of DDR, so it runs AtStart: its
// scratchpad rows are packed into out_ straight from the scratchpad (one copy, not two).
Engine::Plan Engine::plan(Op op, const isa::Instruction& instr, const isa::ExtentList& ex, const isa::Extent* we) {
  if (!sram_direct(0, 0)) return Plan::AtEnd;  // no DMI: every operand is a copy
  if (!we) return Plan::AtStart;                // nothing computed: the operands are only read
  if (can_defer(op, instr, ex, *we)) return Plan::Deferred;
  if (op == Op::Store) return store_covers(instr, we->bytes) ? Plan::AtStart : Plan::AtEnd;
  uint64_t sram_in = 0;
  for (const isa::Extent& e : ex)
    if (e.access == isa::Access::Read && e.space == isa::Space::Sram) sram_in += e.bytes;
  if (we->space == isa::Space::Sram && sram_in < we->bytes && sram_direct(we->addr, we->bytes))
    return Plan::AtEndInPlace;
  return Plan::AtStart;
}

// True when the store's rows cover its whole DDR extent of `bytes` (one row, or rows no
// further apart than their length): nothing of the range survives, so it needs no reading
// first (most stores; the read was a DDR copy of the whole range per store).
bool Engine::store_covers(const isa::Instruction& instr, uint64_t bytes) const {
  const auto& s = ctx_->sem->store_slots();
  const uint64_t rows = instr.get(s.rows), row_bytes = instr.get(s.row_bytes), stride = instr.get(s.stride);
  if (rows == 0 || (rows > 1 && stride > row_bytes)) return false;
  return bytes == (rows - 1) * stride + row_bytes;
}

// A LOAD or STORE moves `rows` rows of `row_bytes`, packed in the scratchpad and `stride`
// apart in DDR. Read at the instruction's start and written at its end, done literally that is
// two copies (into an operand buffer, then out of it), and with gaps between the DDR rows the
// buffer spans the whole DDR range: a store first reads the range (its gaps are kept), packs
// its rows in and writes the range back. As long as nothing writes the source in between,
// copying the rows straight from source to destination at the end moves the same bytes (the
// gaps are not touched, so they keep what they held), and the first engine about to write the
// source makes this one take its copy first (before_write, snapshot): the bytes are always
// those of the start. Rows that overlap in DDR (stride < row_bytes) keep the general path.
// Not with the plants that bend the transfer itself (they keep their two-copy path).
bool Engine::can_defer(Op op, const isa::Instruction& instr, const isa::ExtentList& ex, const isa::Extent& we) {
  if (op != Op::Load && op != Op::Store) return false;
  if (planted(PlantId::ModelDmaOffByOne) || planted(PlantId::ModelStoreShort)) return false;
  const auto& s = op == Op::Load ? ctx_->sem->load_slots() : ctx_->sem->store_slots();
  const uint64_t rows = instr.get(s.rows), row_bytes = instr.get(s.row_bytes), stride = instr.get(s.stride);
  if (rows == 0 || (rows != 1 && stride < row_bytes)) return false;
  const uint64_t packed = rows * row_bytes, spread = (rows - 1) * stride + row_bytes;
  const isa::Space from_space = op == Op::Load ? isa::Space::Ddr : isa::Space::Sram;
  if (we.bytes != (op == Op::Load ? packed : spread)) return false;
  const isa::Extent* from = nullptr;
  for (const isa::Extent& e : ex) {
    if (e.bytes == 0 || e.access != isa::Access::Read) continue;
    if (from || e.space != from_space || e.bytes != (op == Op::Load ? spread : packed)) return false;
    from = &e;
  }
  if (!from || we.space == from_space) return false;
  const isa::Extent& sram_side = op == Op::Load ? we : *from;
  if (!sram_direct(sram_side.addr, sram_side.bytes)) return false;
  // The row shape for run_deferred, read here once (this engine's deferred_ is idle until then).
  deferred_.rows = rows;
  deferred_.row_bytes = row_bytes;
  deferred_.stride = stride;
  return true;
}

// A deferred DMA's DDR side, row by row: `packed` holds (reads into, or writes from) the rows
// back to back; in DDR they start at `ddr_addr`, deferred_.stride apart.
void Engine::ddr_rows(tlm::tlm_command cmd, uint64_t ddr_addr, std::span<uint8_t> packed) {
  const Deferred& d = deferred_;
  if (d.contiguous()) return transport(isa::Space::Ddr, cmd, ddr_addr, packed);
  for (uint64_t r = 0; r < d.rows; ++r)
    transport(isa::Space::Ddr, cmd, ddr_addr + r * d.stride, packed.subspan(r * d.row_bytes, d.row_bytes));
}

// Called before every write this engine makes: a deferred read of another engine that the
// write would change takes its copy now (its source is still as it was at its start).
void Engine::before_write(isa::Space space, uint64_t addr, uint64_t bytes) {
  for (Engine* e : ctx_->deferred) {
    if (!e || e == this) continue;
    const isa::Extent& f = e->deferred_.from;
    if (f.space == space && addr < f.addr + f.bytes && f.addr < addr + bytes) e->snapshot();
  }
}

// The deferred read's copy, taken the two-copy way: a LOAD's DDR range into its operand
// buffer, a STORE's scratchpad range into its result buffer (its rows are contiguous: packed
// is the range as it lies).
void Engine::snapshot() {
  Deferred& d = deferred_;
  ctx_->deferred[q_] = nullptr;
  d.copied = true;
  if (d.from.space == isa::Space::Ddr) {
    read_operand(d.k, d.from, false);
  } else {
    const std::span<uint8_t> out = out_.take(d.from.bytes);
    std::memcpy(out.data(), sram_direct(d.from.addr, d.from.bytes), d.from.bytes);
  }
}

// The end of a Plan::Deferred DMA: one copy straight from source to destination, or, if a
// write made it take its copy earlier, that copy written as before.
void Engine::finish_deferred(const isa::Instruction& instr, const isa::ExtentList& ex, const isa::Extent& we) {
  Deferred& d = deferred_;
  ctx_->deferred[q_] = nullptr;
  if (we.space == isa::Space::Sram) {  // LOAD
    before_write(we.space, we.addr, we.bytes);
    const std::span<uint8_t> to{sram_direct(we.addr, we.bytes), we.bytes};
    if (!d.copied) {
      ddr_rows(tlm::TLM_READ_COMMAND, d.from.addr, to);
      return;
    }
    OperandBuffers ob;
    ob.in[d.k] = in_[d.k].take(d.from.bytes);  // what snapshot() read
    ob.out = to;
    ctx_->sem->compute(instr, ob, ex);
    return;
  }
  // STORE: its rows packed, as the scratchpad holds them (or held them, when copied)
  const std::span<uint8_t> from =
      d.copied ? out_.take(d.from.bytes) : std::span<uint8_t>{sram_direct(d.from.addr, d.from.bytes), d.from.bytes};
  ddr_rows(tlm::TLM_WRITE_COMMAND, we.addr, from);
}

void Engine::execute(uint32_t i, const isa::Instruction& instr) {
  const bundle::Program& prog = *ctx_->program;
  const Semantics& sem = *ctx_->sem;
  Checkers& checkers = *ctx_->checkers;
  const sc_time t0 = ctx_->now();
  // Each time in cycles once: a conversion is a 64-bit division (kCycle is known at run time).
  const uint64_t c0 = to_cycles(t0);
  const isa::ExtentList ex = isa::extents(instr);
  const uint64_t expected = instruction_cycles(sem, instr, prog.config, ex);
  state_ = State::Busy;
  expected_end_ = c0 + expected;
  if (ctx_->traced) {
    busy.write(true);
    current.write(i);
  }
  checkers.on_start(i, c0);

  bool in_range = true;
  for (const isa::Extent& e : ex) {
    const uint64_t size = e.space == isa::Space::Sram ? prog.config.sram_bytes.value : prog.config.ddr_bytes.value;
    if (e.bytes > 0 && (e.addr > size || e.bytes > size - e.addr)) {
      checkers.report(out_of_range_finding(i, instr, AccessError(e.space, e.addr, e.bytes, size)));
      in_range = false;
      break;
    }
  }
  if (in_range) run_operands(i, instr, ex, t0, expected);
  const uint64_t c1 = to_cycles(ctx_->now());
  checkers.on_finish(i, c1);
  if (ctx_->traced) busy.write(false);
  ctx_->result.busy_cycles[q_] += c1 - c0;
  ctx_->last_finish = std::max(ctx_->last_finish, c1);
}

// run_operands for a Plan::Deferred DMA (plan(): a LOAD or STORE, `we` its write): its one
// read operand is copied at the end (or when another engine is about to write it), so it
// needs none of the operand buffers the other plans fill. The same steps in the same order
// as the general path took for it.
void Engine::run_deferred(uint32_t i, const isa::Instruction& instr, const isa::ExtentList& ex, const isa::Extent& we,
                          sc_time t0, uint64_t expected) {
  Checkers& checkers = *ctx_->checkers;
  for (unsigned k = 0; k < ex.count; ++k) {
    const isa::Extent& e = ex.items[k];
    if (e.bytes == 0 || e.access != isa::Access::Read) continue;
    deferred_.k = k;  // the row shape is can_defer's
    deferred_.from = e;
    deferred_.copied = false;
    ctx_->deferred[q_] = this;
    checkers.on_access(i, e);
  }
  const sc_time busy_for = kCycle * static_cast<double>(expected);
  if (ctx_->now() - t0 < busy_for) wait(busy_for - (ctx_->now() - t0));
  finish_deferred(instr, ex, we);
  checkers.on_access(i, we);
}

// Reads happen when the instruction starts, the write when it completes, so that a missing
// token shows up as stale or clobbered data, as on hardware. The checkers see each read when
// it happens and the write when it lands, whichever way the bytes move.
void Engine::run_operands(uint32_t i, const isa::Instruction& instr, const isa::ExtentList& ex, sc_time t0,
                          uint64_t expected) {
  const Semantics& sem = *ctx_->sem;
  Checkers& checkers = *ctx_->checkers;
  const Op op = sem.op(instr);  // also rejects a spec foreign to the semantics
  // The write operand as Semantics::write_operand picks it (the spec's last operand that
  // writes), read off the extents, which carry each operand's access: not a call per
  // instruction. Null when unused (no bytes).
  const isa::Extent* we = nullptr;
  for (const isa::Extent& e : ex)
    if (e.access == isa::Access::Write) we = &e;
  if (we && we->bytes == 0) we = nullptr;
  const bool rtl = ctx_->rtl_compute && RtlCompute::handles(op) && we;
  const Plan how = rtl ? Plan::AtEnd : plan(op, instr, ex, we);
  if (how == Plan::Deferred) {  // most DMAs: no operand buffers to set up
    run_deferred(i, instr, ex, *we, t0, expected);
    return;
  }
  OperandBuffers ob;
  for (unsigned k = 0; k < ex.count; ++k) {
    const isa::Extent& e = ex.items[k];
    if (e.bytes == 0 || e.access != isa::Access::Read) continue;
    ob.in[k] = read_operand(k, e, how == Plan::AtStart);
    checkers.on_access(i, e);
  }
  const sc_time busy_for = kCycle * static_cast<double>(expected);
  auto wait_until_done = [&] {
    if (ctx_->now() - t0 < busy_for) wait(busy_for - (ctx_->now() - t0));
  };
  if (!we) {
    wait_until_done();
    return;
  }
  if (rtl) {
    // The RTL computes while the instruction holds the queue (its cycles count there).
    const std::span<uint8_t> out = out_.take_cleared(we->bytes);  // the RTL may leave bytes unwritten
    ob.out = out;
    ctx_->rtl_compute->compute(sem, instr, ob);
    wait_until_done();
    transport(we->space, tlm::TLM_WRITE_COMMAND, we->addr, out);
  } else if (how == Plan::AtStart) {
    ob.out = out_.take(we->bytes);
    // A kernel that throws does so at the instruction's end, as it did when it ran there.
    std::exception_ptr failed;
    try {
      sem.compute(instr, ob, ex);
    } catch (...) {
      failed = std::current_exception();
    }
    wait_until_done();
    if (failed) std::rethrow_exception(failed);
    write_result(*we, ob.out);
  } else if (how == Plan::AtEndInPlace) {
    wait_until_done();
    before_write(we->space, we->addr, we->bytes);
    ob.out = {sram_direct(we->addr, we->bytes), we->bytes};
    sem.compute(instr, ob, ex);
  } else {
    wait_until_done();
    if (op == Op::Store && !store_covers(instr, we->bytes)) {
      // A store with gaps between its DDR rows reads its range first (the gaps are kept); a
      // read that fills every byte needs no clearing.
      const bool fills = we->space == isa::Space::Ddr || ctx_->sram_reads_fill;
      ob.out = fills ? out_.take(we->bytes) : out_.take_cleared(we->bytes);
      transport(we->space, tlm::TLM_READ_COMMAND, we->addr, ob.out);
    } else {
      // Every other kernel, and a store whose rows cover its range, overwrites its whole
      // write extent (semantics.h).
      ob.out = out_.take(we->bytes);
    }
    sem.compute(instr, ob, ex);
    write_result(*we, ob.out);
  }
  checkers.on_access(i, *we);
}

}  // namespace npuforge::sim::sc_model
