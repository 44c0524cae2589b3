#include "sim/sc_model/npu_top.h"

#include <algorithm>
#include <bit>
#include <functional>

#include <fmt/format.h>

#include "util/error.h"
#include "sim/golden.h"

namespace npuforge::sim::sc_model {

using sc_core::sc_time;
using sc_core::sc_time_stamp;

namespace {

const char* const kEngineNames[isa::kNumQueues] = {"load_dma", "compute", "store_dma"};

template <class Signal>
void trace_signal(sc_core::sc_trace_file* tf, const Signal& s) {
  if (tf) sc_core::sc_trace(tf, s, s.name());
}

// Opens a VCD file; SystemC appends ".vcd" itself.
sc_core::sc_trace_file* open_trace(const std::string& path) {
  if (path.empty()) return nullptr;
  const std::string ext = ".vcd";
  if (path.size() <= ext.size() || path.compare(path.size() - ext.size(), ext.size(), ext) != 0)
    throw Error(fmt::format("--trace {}: only VCD waveforms are supported (name the file *.vcd)", path));
  auto* tf = sc_core::sc_create_vcd_trace_file(path.substr(0, path.size() - ext.size()).c_str());
  tf->set_time_unit(100, sc_core::SC_PS);  // RTL pins change on the falling edge (0.5 ns)
  return tf;
}

// The ROM bit that the model-fetch-bit-flip plant flips when instruction `index` is fetched:
// in the first load's first SRAM address field, the bit worth one allocation unit (or the
// field's lowest bit), so the load writes one unit off its buffer. None: no load has one.
struct FetchFlip {
  int64_t index = -1;
  unsigned bit = 0;  // bit b of the word: byte b / 8, bit b % 8 (isa/instruction.cc put_bits)
};

FetchFlip fetch_flip(const bundle::Program& program) {
  const uint64_t unit = std::max<uint64_t>(program.config.alignment.value, 1);
  const auto unit_bit = static_cast<unsigned>(std::countr_zero(unit));
  for (size_t i = 0; i < program.instrs.size(); ++i) {
    const isa::InstrSpec& spec = *program.instrs[i].spec;
    if (spec.queue != isa::Queue::Load) continue;
    for (const isa::FieldSpec& f : spec.fields) {
      if (f.kind != isa::FieldKind::SramAddr) continue;
      return {static_cast<int64_t>(i), f.lsb + (unit_bit < f.width ? unit_bit : 0)};
    }
  }
  return {};
}

}  // namespace

NpuTop::NpuTop(sc_core::sc_module_name name, const bundle::Program& program, const Semantics& sem,
               Checkers& checkers, const ScOptions& options, std::function<void()> on_done)
    : sc_module(name),
      options_(options),
      memory_(program.config),
      round_trips_(*program.isa),
      rom_(*program.isa, program.instrs),
      on_done_(std::move(on_done)),
      trace_(open_trace(options.trace_path)),
      rom_target_("rom", rom_),
      ddr_target_("ddr", memory_.ddr),
      fetch_("fetch"),
      sram_dump_("sram_dump") {
  ctx_.program = &program;
  ctx_.sem = &sem;
  ctx_.checkers = &checkers;
  ctx_.plant = options.plant;
  ctx_.traced = trace_ != nullptr;
  if (options.plant.is(PlantId::ModelFetchBitFlip)) {
    const FetchFlip flip = fetch_flip(program);
    flip_index_ = flip.index;
    flip_bit_ = flip.bit;
  }
  memory_.ddr.load_image(program.ddr_init);

  // An RTL plant lives in one block, which runs its Verilated variant.
  auto monitor = [this](std::string what) { report_monitor(std::move(what)); };
  if (options.sram == SramModel::Rtl) {
    // The RTL blocks are driven directly; a clock runs only for the waveform's sake.
    if (trace_) clk_ = std::make_unique<sc_core::sc_clock>("clk", kCycle);
    rtl_sram_ = std::make_unique<RtlSram>("spad_rtl", options.plant, program.config, clk_.get(), trace_, monitor);
    if (options.rtl_decoder)
      rtl_decoder_ = std::make_unique<RtlDecoder>("decoder_rtl", clk_.get(), trace_, options.plant);
    if (options.rtl_compute) {
      rtl_compute_ = std::make_unique<RtlCompute>("compute_rtl", options.plant, trace_, monitor);
      ctx_.rtl_compute = rtl_compute_.get();
    }
    if (clk_) sc_core::sc_trace(trace_, *clk_, "clk");
  } else {
    sram_target_ = std::make_unique<MemTarget<Sram>>("spad", memory_.sram);
    ctx_.sram_reads_fill = true;
    ctx_.sram_dmi = true;
  }
  auto bind_sram = [this](auto& initiator) {
    if (rtl_sram_)
      initiator.bind(rtl_sram_->socket);
    else
      initiator.bind(sram_target_->socket);
  };
  for (unsigned q = 0; q < isa::kNumQueues; ++q) {
    engines_[q] = std::make_unique<Engine>(kEngineNames[q], static_cast<isa::Queue>(q), ctx_);
    bind_sram(engines_[q]->sram);
    engines_[q]->ddr.bind(ddr_target_.socket);
    trace_signal(trace_, engines_[q]->busy);
    trace_signal(trace_, engines_[q]->current);
  }
  fetch_.bind(rom_target_.socket);
  bind_sram(sram_dump_);
  trace_signal(trace_, pc_);
  SC_THREAD(dispatch);
  SC_THREAD(watchdog);  // also in TLM mode: another NPU's clock may keep the kernel alive
}

NpuTop::~NpuTop() {
  if (trace_) sc_core::sc_close_vcd_trace_file(trace_);
}

void NpuTop::dispatch() {
  const bundle::Program& prog = *ctx_.program;
  const sc_time latency = kCycle * static_cast<double>(prog.config.dispatch_latency_cycles);
  for (uint32_t i = 0; i < prog.instrs.size(); ++i) {
    dispatch_pc_ = i;
    dispatch_state_ = DispatchState::Fetching;
    const sc_time t0 = ctx_.now();
    const isa::Instruction& instr = fetch(i);
    wait_dispatch(instr, t0, latency);
    if (ctx_.traced) pc_.write(i);
    if (instr.spec->queue == isa::Queue::Control) {
      control(i, instr);
      if (ctx_.sem->op(instr) == Op::Halt) break;
      continue;
    }
    const auto q = static_cast<unsigned>(instr.spec->queue);
    ++ctx_.outstanding[q];
    dispatch_state_ = DispatchState::QueueFull;  // until write() returns
    engines_[q]->queue.write(i);
  }
  dispatch_state_ = DispatchState::Draining;
  drain();
  dispatch_state_ = DispatchState::Done;  // a program without HALT ends when its queues are empty
  ctx_.result.completed = true;
  finish();
}

// Instruction i as fetched from the ROM (zero time, as b_transport) and decoded. What was
// fetched is executed: only a word equal to its instruction's encoding may skip the decode (a
// corrupted fetch must still be decoded, and fail or misbehave). The ROM is read-only and its
// word i is that encoding, so a fetch nothing corrupts is known to give it: an instruction that
// decodes back to itself (round_trips_) is taken as it is, unfetched, unless the fetch-bit-flip
// plant flips its word or the RTL decoder must see the word (NpuTop::fetch). Every other word
// is fetched over the socket and compared with the encoding.
const isa::Instruction& NpuTop::fetch_word(uint32_t i) {
  const bundle::Program& prog = *ctx_.program;
  const bool flipped = flip_index_ == int64_t{i};
  const unsigned width = prog.isa->width_bytes();
  // Members, not locals: a thread left blocked by a deadlock never unwinds its stack.
  std::vector<uint8_t>& word = fetch_word_;
  word.resize(width);
  tlm::tlm_generic_payload& p = fetch_payload_;
  p.set_command(tlm::TLM_READ_COMMAND);
  p.set_address(uint64_t{i} * width);
  p.set_data_ptr(word.data());
  p.set_data_length(width);
  p.set_streaming_width(width);
  p.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
  sc_time delay = sc_core::SC_ZERO_TIME;
  fetch_->b_transport(p, delay);
  if (flipped) word[flip_bit_ / 8] ^= static_cast<uint8_t>(1u << (flip_bit_ % 8));  // planted
  std::array<uint8_t, isa::kMaxWordBytes> encoded;
  rom_.word(i, {encoded.data(), width});
  const bool as_encoded = std::equal(word.begin(), word.end(), encoded.begin());
  if (as_encoded && round_trips_(prog.instrs[i])) {
    if (rtl_decoder_) check_rtl_decode(i, word, prog.instrs[i]);
    return prog.instrs[i];
  }
  const isa::Instruction& instr = ctx_.fetched.emplace_back(isa::decode(*prog.isa, word, prog.name));
  ctx_.fetched_at.push_back(i);
  if (rtl_decoder_) check_rtl_decode(i, word, instr);
  return instr;
}

// Waits out the dispatch latency from `t0` and, for a full queue, its slot too: one wake-up
// where waiting the latency first and the slot after took two (the dispatcher finds its
// queue full for about half of a generated program's instructions).
// Equivalent, same-instant order included: the latency is a timed notification of
// latency_ev_ made at the very point where wait(latency) made one (the same place in the
// kernel's queue of timed events, whose order among equal times depends on that queue's
// history and decides the order in which processes due at one instant run), and the
// dispatcher waits on it whenever it did before: when the queue has a free slot, or when
// the slot frees (a read, then the update, notifies data-read) before the latency is over.
// When the slot frees later, the notification wakes nobody where it woke the dispatcher
// only for it to find the queue full and wait again, and the write lands in the delta after
// that read, as it did. The dispatcher is the queue's only writer, so a slot stays free
// until it writes; between fetch and write nothing looks at the dispatcher but a deadlock
// report (which may say "blocked on a full queue" for the latency's cycles where it said
// "fetching"). Control instructions, and runs that write a waveform (pc is driven at
// t0 + latency), wait the latency as before.
void NpuTop::wait_dispatch(const isa::Instruction& instr, const sc_time& t0, const sc_time& latency) {
  const bool timed = ctx_.now() - t0 < latency;
  if (ctx_.traced || instr.spec->queue == isa::Queue::Control) {
    if (timed) wait(latency - (ctx_.now() - t0));
    return;
  }
  // Never still pending here: it fired at the last instruction's t0 + latency, before the
  // dispatcher (woken by it, or by a read no earlier) could write and fetch again.
  if (timed) latency_ev_.notify(latency - (ctx_.now() - t0));
  InstrQueue& queue = engines_[static_cast<unsigned>(instr.spec->queue)]->queue;
  if (queue.num_free() == 0) {
    dispatch_state_ = DispatchState::QueueFull;
    queue.wait_free();
  }
  if (ctx_.now() - t0 < latency) wait(latency_ev_);
}

void NpuTop::drain() {
  auto pending = [this] {
    return std::any_of(ctx_.outstanding.begin(), ctx_.outstanding.end(), [](uint64_t n) { return n > 0; });
  };
  while (pending()) {
    ctx_.draining = true;
    wait(ctx_.completed_ev);
    ctx_.draining = false;
  }
}

void NpuTop::control(uint32_t i, const isa::Instruction& instr) {
  const Op op = ctx_.sem->op(instr);
  if (op == Op::Sync || op == Op::Halt) {
    dispatch_state_ = DispatchState::Draining;
    drain();
    dispatch_state_ = DispatchState::Fetching;
  }
  ctx_.checkers->on_start(i, to_cycles(sc_time_stamp()));
  wait(kCycle * static_cast<double>(instruction_cycles(*ctx_.sem, instr, ctx_.program->config)));
  const uint64_t t = to_cycles(sc_time_stamp());
  ctx_.checkers->on_finish(i, t);
  ctx_.last_finish = std::max(ctx_.last_finish, t);
  ++ctx_.completed;
  ++ctx_.result.instructions;
}

void NpuTop::check_rtl_decode(uint32_t i, std::span<const uint8_t> word, const isa::Instruction& instr) {
  const RtlDecoder::Decoded d = rtl_decoder_->decode(word);
  ++stats_.decoded_words;
  const auto& fields = instr.spec->fields;
  std::string why;
  if (d.illegal) {
    why = "RTL flags an illegal opcode";
  } else if (d.queue != static_cast<unsigned>(instr.spec->queue)) {
    why = fmt::format("queue: RTL {} vs C++ {}", d.queue, static_cast<unsigned>(instr.spec->queue));
  } else if (d.field_count != fields.size()) {
    why = fmt::format("field count: RTL {} vs C++ {}", d.field_count, fields.size());
  } else {
    for (size_t s = 0; s < fields.size() && why.empty(); ++s) {
      if (d.fields[s] != instr.raw[s])
        why = fmt::format("field {}: RTL {:#x} vs C++ {:#x}", fields[s].name, d.fields[s], instr.raw[s]);
    }
  }
  if (why.empty()) return;
  Finding f;  // a finding like any checker's, so regressions and shrink see it too
  f.kind = FindingKind::RtlMismatch;
  f.instr = static_cast<int64_t>(i);
  f.mnemonic = instr.spec->mnemonic;
  f.detail = "decoder: " + why;
  ctx_.checkers->report(std::move(f));
  ++stats_.decoder_mismatches;
  if (stats_.decoder_messages.size() < 10)
    stats_.decoder_messages.push_back(fmt::format("#{} {}: {}", i, instr.spec->mnemonic, why));
}

uint64_t NpuTop::watchdog_limit() const {
  return options_.watchdog_cycles ? options_.watchdog_cycles : ctx_.program->config.deadlock_cycles;
}

// Deadlock watchdog: an instruction must retire within `limit` cycles of the last retirement,
// of the expected end of the slowest instruction in flight, or of the RTL compute unit's last
// clock, whichever is latest. Covers a
// token deadlock (nothing runs) and an engine stuck inside a transfer (busy for ever) alike.
void NpuTop::watchdog() {
  const uint64_t limit = std::max<uint64_t>(watchdog_limit(), 1);
  // The RTL compute unit may need more cycles than the timing model gives a GEMM (a config
  // with a larger MAC array than the built one); while it is clocked it is not stuck.
  uint64_t compute_seen = 0, compute_progress_at = 0;
  for (;;) {
    // After HALT the RTL scratchpad is read out over its port (sram_bytes / bank_width_bytes cycles), long
    // after the last retirement: the run is over, nothing can be stuck.
    if (finishing_) return;
    const uint64_t compute_now = rtl_compute_ ? rtl_compute_->cycles() : 0;
    if (compute_now != compute_seen) {
      compute_seen = compute_now;
      compute_progress_at = to_cycles(sc_time_stamp());
    }
    // Nor while the RTL scratchpad has accepted transfers to finish (RtlSram::busy_until: a
    // narrow bank geometry makes them slower than timed).
    const uint64_t sram_busy = rtl_sram_ ? rtl_sram_->busy_until() : 0;
    uint64_t deadline = std::max({ctx_.last_finish, compute_progress_at, sram_busy}) + limit;
    for (const auto& e : engines_)
      if (e->state() == Engine::State::Busy) deadline = std::max(deadline, e->expected_end() + limit);
    const uint64_t now = to_cycles(sc_time_stamp());
    if (now >= deadline) {
      report_deadlock(limit);
      ctx_.result.completed = false;
      finish();
      return;
    }
    wait(kCycle * static_cast<double>(deadline - now));
  }
}

std::string NpuTop::queue_states() const {
  const bundle::Program& prog = *ctx_.program;
  auto name_of = [&](int64_t i) {
    return fmt::format("#{} {}", i, ctx_.instr(static_cast<uint32_t>(i)).spec->mnemonic);
  };
  std::string s;
  for (unsigned q = 0; q < isa::kNumQueues; ++q) {
    const Engine& e = *engines_[q];
    const auto qname = isa::to_string(static_cast<isa::Queue>(q));
    s += fmt::format("{}{} queue ({} queued): ", s.empty() ? "" : "; ", qname, e.queue.num_available());
    switch (e.state()) {
      case Engine::State::Idle: s += "idle"; break;
      case Engine::State::WaitToken: {
        const auto from = isa::to_string(static_cast<isa::Queue>(e.waits_for()));
        s += fmt::format("{} waits for a token from {} ({} {}->{} tokens pending)", name_of(e.instr()), from,
                         ctx_.tokens[e.waits_for()][q], from, qname);
        break;
      }
      case Engine::State::Busy:
        s += fmt::format("{} busy, expected to finish at cycle {}", name_of(e.instr()), e.expected_end());
        break;
    }
  }
  const char* d = "fetching";
  switch (dispatch_state_) {
    case DispatchState::Fetching: d = "fetching"; break;
    case DispatchState::QueueFull: d = "blocked on a full queue"; break;
    case DispatchState::Draining: d = "waiting for the queues to drain (sync/halt)"; break;
    case DispatchState::Done: d = "done"; break;
  }
  s += fmt::format("; dispatch at #{} of {}: {}", dispatch_pc_, prog.instrs.size(), d);
  return s;
}

void NpuTop::report_deadlock(uint64_t limit) {
  Finding f;
  f.kind = FindingKind::Deadlock;
  f.detail = fmt::format("watchdog: no instruction retired for {} cycles (last at cycle {}, now {}): {}", limit,
                         ctx_.last_finish, to_cycles(sc_time_stamp()), queue_states());
  ctx_.checkers->report(std::move(f));
}

void NpuTop::report_monitor(std::string what) {
  ++stats_.monitor_errors;
  Finding f;
  f.kind = FindingKind::RtlMismatch;
  f.detail = "monitor: " + what;
  ctx_.checkers->report(std::move(f));
}

void NpuTop::finish() {
  if (finishing_) return;
  finishing_ = true;
  ctx_.result.cycles = ctx_.result.completed ? to_cycles(sc_time_stamp()) : ctx_.last_finish;
  const uint64_t size = ctx_.program->config.sram_bytes.value;
  if (rtl_sram_) {  // the RTL holds the scratchpad contents: read them out over the port
    final_sram_.resize(size);
    constexpr uint64_t kChunk = 4096;
    for (uint64_t a = 0; a < size; a += kChunk) {
      tlm::tlm_generic_payload p;
      const auto n = static_cast<unsigned>(std::min(kChunk, size - a));
      p.set_command(tlm::TLM_READ_COMMAND);
      p.set_address(a);
      p.set_data_ptr(final_sram_.data() + a);
      p.set_data_length(n);
      p.set_streaming_width(n);
      sc_time delay = sc_core::SC_ZERO_TIME;
      sram_dump_->b_transport(p, delay);
    }
  }
  done_ = true;
  on_done_();
}

ScOutput NpuTop::output() {
  ScOutput out;
  out.result = ctx_.result;
  if (!done_) {  // the kernel ran out of events before the watchdog fired: a deadlock all the same
    report_deadlock(0);
    out.result.completed = false;
    out.result.cycles = ctx_.last_finish;
  }
  if (options_.images) {
    out.result.ddr = memory_.ddr.image();
    const auto sram = memory_.sram.contents();
    out.result.sram = rtl_sram_ ? final_sram_ : std::vector<uint8_t>(sram.begin(), sram.end());
  } else {
    out.ddr.emplace(std::move(memory_.ddr));  // the simulation is over: no transport reaches it again
  }
  out.stats = stats_;
  if (rtl_sram_) {
    out.stats.sram_words = rtl_sram_->words();
    out.stats.sram_bank_conflicts = rtl_sram_->conflicts();
  }
  if (rtl_compute_) {
    out.stats.compute_tiles = rtl_compute_->tiles();
    out.stats.compute_cycles = rtl_compute_->cycles();
  }
  return out;
}

}  // namespace npuforge::sim::sc_model
