#pragma once
// The SystemC top of one NPU: fetch/dispatch, the three queue engines with their tokens, the
// scratchpad (TLM or RTL), DDR and the instruction ROM. Internal to sim/sc_model; users call
// sc_backend.h.
#include <algorithm>
#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>

#include "sim/checkers.h"
#include "sim/memory.h"
#include "bundle/program.h"
#include "sim/sc_model/mem_target.h"
#include "sim/sc_model/rtl_blocks.h"
#include "sim/sc_model/rtl_compute.h"
#include "sim/sc_model/sc_backend.h"
#include "sim/semantics.h"

namespace npuforge::sim::sc_model {

inline constexpr unsigned kQueueDepth = 8;  // instructions buffered per queue
inline const sc_core::sc_time kCycle(1, sc_core::SC_NS);

inline uint64_t to_cycles(const sc_core::sc_time& t) { return t.value() / kCycle.value(); }

class Engine;

// What every process of one top shares.
struct Context {
  // The kernel's current time, read in place: sc_time_stamp() is an out-of-line call that
  // looks the kernel up again, several per instruction.
  const sc_core::sc_time& now() const { return *now_; }
  const sc_core::sc_time* now_ = &sc_core::sc_get_curr_simcontext()->time_stamp();
  const bundle::Program* program = nullptr;
  const Semantics* sem = nullptr;
  Checkers* checkers = nullptr;
  // Instruction i as dispatched: the program's own, unless its fetched word is not known to
  // decode to it (NpuTop::fetch_word), when it is the one decoded from the word, kept in
  // `fetched` with its index in `fetched_at` (ascending: the dispatcher fetches in order). A
  // table of a pointer per instruction was 800 KB per 100k instructions to zero and fault in.
  const isa::Instruction& instr(uint32_t i) const {
    if (!fetched_at.empty()) {
      const auto it = std::lower_bound(fetched_at.begin(), fetched_at.end(), i);
      if (it != fetched_at.end() && *it == i) return fetched[static_cast<size_t>(it - fetched_at.begin())];
    }
    return program->instrs[i];
  }
  std::deque<isa::Instruction> fetched;  // a deque: references into it stay valid
  std::vector<uint32_t> fetched_at;
  // tokens[from][to]: signals sent by queue `from` to queue `to` not yet consumed.
  std::array<std::array<uint32_t, isa::kNumQueues>, isa::kNumQueues> tokens{};
  std::array<sc_core::sc_event, isa::kNumQueues> token_ev;  // a token arrived for queue q
  // Queue q's engine waits on token_ev[q] (Engine::take_tokens): the only time a token needs
  // telling, as with InstrQueue (see Engine::send_tokens).
  std::array<bool, isa::kNumQueues> token_waiting{};
  std::array<uint64_t, isa::kNumQueues> outstanding{};      // dispatched, not yet completed
  RtlCompute* rtl_compute = nullptr;  // GEMM/ELTWISE through the RTL (--rtl), else semantics
  // A waveform is written: the signals that only the VCD shows (pc, busy, current) are
  // driven. Without one their writes were an update request and a value-change event each,
  // four per instruction, that nothing observed.
  bool traced = false;
  // Scratchpad reads fill every byte (the TLM MemTarget<Sram>); false with the RTL
  // scratchpad, where a planted bug may leave bytes unwritten: they must read as zeros.
  bool sram_reads_fill = false;
  // The scratchpad grants DMI (the TLM MemTarget<Sram>): engines move operands in place
  // instead of through b_transport payloads. Never with the RTL scratchpad, whose port must
  // see every access.
  bool sram_dmi = false;
  sc_core::sc_event completed_ev;
  // The dispatcher waits on completed_ev (drain): the only time a completion needs telling. A
  // notification that wakes nobody was a delta event per instruction for nothing.
  bool draining = false;
  uint64_t completed = 0;
  uint64_t last_finish = 0;  // cycles
  // deferred[q]: queue q's engine while its DMA copies its source at its end instead of its
  // start (Plan::Deferred, engine.cc), else null: every write first lets it take its copy if
  // the write would change it (Engine::before_write).
  std::array<Engine*, isa::kNumQueues> deferred{};
  RunResult result;
  Plant plant;  // a planted model bug (ScOptions::plant)
};

// A reusable operand buffer whose bytes are not initialised: a std::vector zero-fills what
// resize() adds, which for buffers that shrink and grow again from one instruction to the next
// was a memset of most operands (a third of the TLM run's memset). Whoever takes it fills it:
// a read that fills every byte (mem_target.h), a kernel that overwrites its whole write
// extent (semantics.h), or an explicit clear.
class ByteBuffer {
 public:
  std::span<uint8_t> take(size_t bytes) {
    if (bytes > capacity_) {
      data_ = std::make_unique_for_overwrite<uint8_t[]>(bytes);
      capacity_ = bytes;
    }
    return {data_.get(), bytes};
  }
  std::span<uint8_t> take_cleared(size_t bytes) {
    const std::span<uint8_t> s = take(bytes);
    std::fill(s.begin(), s.end(), uint8_t{0});
    return s;
  }

 private:
  std::unique_ptr<uint8_t[]> data_;
  size_t capacity_ = 0;
};

// An instruction queue between the dispatcher (its one writer) and an engine (its one
// reader): an sc_fifo whose update phase notifies its data-read / data-written events only
// when the writer / reader waits on them. sc_fifo notifies them after every delta that wrote
// or read, a delta notification and trigger per instruction each, nearly always for nobody.
// Equivalent: everything else (the update phase that makes writes and reads visible one delta
// later, and the order of the notifications) is sc_fifo's own; a process can only start
// waiting in an evaluation phase, and a notification made in update() triggers before the
// next one, so an event skipped here would have woken nobody.
class InstrQueue final : public sc_core::sc_fifo<uint32_t> {
 public:
  InstrQueue(const char* name, int size) : sc_core::sc_fifo<uint32_t>(name, size) {}
  void read(uint32_t& value) override {
    while (num_available() == 0) {
      reader_waits_ = true;
      sc_core::wait(m_data_written_event);
      reader_waits_ = false;
    }
    sc_core::sc_fifo<uint32_t>::nb_read(value);
  }
  void write(const uint32_t& value) override {
    wait_free();
    sc_core::sc_fifo<uint32_t>::nb_write(value);
  }
  // Blocks until a write would not (what write() waits for first). The dispatcher is the one
  // writer, so the slot stays free until it writes.
  void wait_free() {
    while (num_free() == 0) {
      writer_waits_ = true;
      sc_core::wait(m_data_read_event);
      writer_waits_ = false;
    }
  }

 protected:
  void update() override {
    if (m_num_read > 0 && writer_waits_) m_data_read_event.notify(sc_core::SC_ZERO_TIME);
    if (m_num_written > 0 && reader_waits_) m_data_written_event.notify(sc_core::SC_ZERO_TIME);
    m_num_readable = m_size - m_free;
    m_num_read = 0;
    m_num_written = 0;
  }

 private:
  bool reader_waits_ = false;
  bool writer_waits_ = false;
};

// One queue's execution unit: the load DMA, the compute engine or the store DMA. Reads its
// operands over TLM when an instruction starts, holds the queue for instruction_cycles(),
// then writes its result over TLM; checkers see each access when it happens.
class Engine : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(Engine);
  tlm_utils::simple_initiator_socket<Engine> sram;
  tlm_utils::simple_initiator_socket<Engine> ddr;
  InstrQueue queue;
  sc_core::sc_signal<bool> busy{"busy"};
  sc_core::sc_signal<uint32_t> current{"current"};  // instruction index being executed

  Engine(sc_core::sc_module_name name, isa::Queue q, Context& ctx);

  // What the engine is doing, for the deadlock report.
  enum class State : uint8_t { Idle, WaitToken, Busy };
  State state() const { return state_; }
  int64_t instr() const { return instr_; }        // the instruction taken from the queue, -1 when idle
  unsigned waits_for() const { return waits_for_; }  // the queue whose token it waits for (WaitToken)
  uint64_t expected_end() const { return expected_end_; }  // cycle its instruction should finish (Busy)

 private:
  void run();
  void take_tokens(const isa::Instruction& instr);
  void send_tokens(const isa::Instruction& instr);
  void execute(uint32_t index, const isa::Instruction& instr);
  enum class Plan : uint8_t { AtStart, AtEndInPlace, AtEnd, Deferred };  // where the kernel runs (engine.cc)
  Plan plan(Op op, const isa::Instruction& instr, const isa::ExtentList& ex, const isa::Extent* write);
  bool store_covers(const isa::Instruction& instr, uint64_t bytes) const;
  bool can_defer(Op op, const isa::Instruction& instr, const isa::ExtentList& ex, const isa::Extent& write);
  void ddr_rows(tlm::tlm_command cmd, uint64_t ddr_addr, std::span<uint8_t> packed);
  void finish_deferred(const isa::Instruction& instr, const isa::ExtentList& ex, const isa::Extent& write);
  void before_write(isa::Space space, uint64_t addr, uint64_t bytes);
  void snapshot();
  void run_operands(uint32_t index, const isa::Instruction& instr, const isa::ExtentList& ex, sc_core::sc_time t0,
                    uint64_t expected);
  void run_deferred(uint32_t index, const isa::Instruction& instr, const isa::ExtentList& ex, const isa::Extent& write,
                    sc_core::sc_time t0, uint64_t expected);
  std::span<const uint8_t> read_operand(unsigned k, const isa::Extent& e, bool in_place);
  void write_result(const isa::Extent& e, std::span<uint8_t> out);
  // The scratchpad bytes [addr, addr + bytes) by DMI, or null (no DMI granted, or out of it).
  // Inline for the granted case (several calls per instruction); asking is sram_dmi_ask.
  uint8_t* sram_direct(uint64_t addr, uint64_t bytes) {
    if (!dmi_ptr_ && !sram_dmi_ask()) return nullptr;
    if (addr > dmi_bytes_ || bytes > dmi_bytes_ - addr) return nullptr;
    return dmi_ptr_ + addr;
  }
  bool sram_dmi_ask();
  void invalidate_sram_dmi(sc_dt::uint64 start, sc_dt::uint64 end);
  void transport(isa::Space space, tlm::tlm_command cmd, uint64_t addr, std::span<uint8_t> data);
  bool planted(PlantId p) const { return ctx_->plant.any() && ctx_->plant.is(p); }

  unsigned q_;
  Context* ctx_;
  State state_ = State::Idle;
  int64_t instr_ = -1;
  unsigned waits_for_ = 0;
  uint64_t expected_end_ = 0;
  // Operand buffers kept from one instruction to the next (an engine runs one at a time): a
  // fresh vector per operand cost an allocation each, and page faults for large ones.
  std::array<ByteBuffer, isa::kMaxOperands> in_;
  ByteBuffer out_;
  // A DMA whose one copy is deferred to its end (Plan::Deferred): its source extent `from`
  // (DDR for a LOAD, the scratchpad for a STORE) and its operand index; `copied` once
  // snapshot() has copied it the two-copy way because another engine was about to write it.
  // Its rows: `row_bytes` each, packed in the scratchpad, `stride` apart in DDR (rows == 1 or
  // stride == row_bytes: one contiguous range).
  struct Deferred {
    unsigned k = 0;  // the source operand
    isa::Extent from;
    bool copied = false;
    uint64_t rows = 1, row_bytes = 0, stride = 0;
    bool contiguous() const { return rows == 1 || stride == row_bytes; }
  };
  Deferred deferred_;
  // One payload for all of the engine's transports (one at a time; transport() sets every
  // field it uses): constructing and destroying one per transfer was ~90 instructions each.
  tlm::tlm_generic_payload payload_;
  // The scratchpad's DMI region (see sram_direct), asked for once.
  bool dmi_asked_ = false;
  uint8_t* dmi_ptr_ = nullptr;
  uint64_t dmi_bytes_ = 0;
};

// True when decoding x's encoding gives x back: every field fits its width, the slots past
// the spec's fields are zero and the opcode names x's own spec (what the assembler and the
// generator produce; the ISA loader rejects overlapping fields). The dispatcher then takes x
// as it is instead of decoding the ROM word that was encoded from it, a second decode per
// instruction (5% of a TLM run). The per-slot checks are masks of the bits no field of the
// spec holds, worked out once per spec: a branch per slot and instruction was 3% of a run.
// Asked when the dispatcher fetches x (NpuTop::fetch), once per instruction: a table of the
// answers filled up front cost a pass over the program and a bit per instruction besides.
class RoundTrips {
 public:
  explicit RoundTrips(const isa::Isa& isa) : isa_(&isa), by_index_(isa.instructions().size()) {}
  bool operator()(const isa::Instruction& x) {
    const Masks& m = masks(*x.spec);
    uint32_t excess = 0;
    for (size_t s = 0; s < x.raw.size(); ++s) excess |= x.raw[s] & m.excess[s];
    return m.decodes_to_spec && excess == 0 && x.raw[isa::kOpcodeSlot] == x.spec->opcode;
  }

 private:
  struct Masks {
    const isa::InstrSpec* spec;
    std::array<uint32_t, isa::kMaxFields> excess;  // per slot, the bits its field cannot hold
    bool decodes_to_spec;                          // the spec has fields and owns its opcode
  };
  // A spec of the ISA is found by its index in it (a search of the specs met was half of
  // this check's cost); any other, by that search.
  const Masks& masks(const isa::InstrSpec& spec) {
    const auto& all = isa_->instructions();
    const std::less<const isa::InstrSpec*> before;  // a total order even for unrelated pointers
    if (!all.empty() && !before(&spec, all.data()) && before(&spec, all.data() + all.size())) {
      Masks& m = by_index_[static_cast<size_t>(&spec - all.data())];
      if (!m.spec) m = make(spec);
      return m;
    }
    for (const Masks& m : specs_)
      if (m.spec == &spec) return m;
    return specs_.emplace_back(make(spec));
  }
  Masks make(const isa::InstrSpec& spec) const {
    Masks m{&spec, {}, !spec.fields.empty() && isa_->by_opcode(spec.opcode) == &spec};
    for (size_t s = 0; s < m.excess.size(); ++s) {
      if (s >= spec.fields.size())
        m.excess[s] = ~0u;
      else if (spec.fields[s].width < 32)
        m.excess[s] = ~((1u << spec.fields[s].width) - 1);
    }
    return m;
  }

  const isa::Isa* isa_;
  std::vector<Masks> by_index_;  // per spec of the ISA, spec == null until met
  std::vector<Masks> specs_;     // specs from elsewhere, one per spec met
};

class NpuTop : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(NpuTop);
  // `on_done` is called once when HALT completes (or the watchdog gives up).
  NpuTop(sc_core::sc_module_name name, const bundle::Program& program, const Semantics& sem,
         Checkers& checkers, const ScOptions& options, std::function<void()> on_done);
  ~NpuTop() override;

  bool done() const { return done_; }
  // Valid after the simulation: final memories, counts, cycles.
  ScOutput output();

 private:
  void dispatch();
  void watchdog();
  void wait_dispatch(const isa::Instruction& instr, const sc_core::sc_time& t0, const sc_core::sc_time& latency);
  // Instruction `index` as fetched and decoded (npu_top.cc fetch_word); inline for the
  // instructions that need no fetch, nearly all of them.
  const isa::Instruction& fetch(uint32_t index) {
    const isa::Instruction& x = ctx_.program->instrs[index];
    if (!rtl_decoder_ && flip_index_ != int64_t{index} && round_trips_(x)) return x;
    return fetch_word(index);
  }
  const isa::Instruction& fetch_word(uint32_t index);
  void drain();
  void control(uint32_t index, const isa::Instruction& instr);
  void check_rtl_decode(uint32_t index, std::span<const uint8_t> word, const isa::Instruction& instr);
  void report_monitor(std::string what);
  uint64_t watchdog_limit() const;
  std::string queue_states() const;
  void report_deadlock(uint64_t limit);
  void finish();

  ScOptions options_;
  Context ctx_;
  Memory memory_;
  // round_trips_(x): decoding instruction x's encoding gives it back.
  RoundTrips round_trips_;
  // The model-fetch-bit-flip plant: instruction flip_index_'s fetched word has bit flip_bit_
  // flipped (-1: no plant).
  int64_t flip_index_ = -1;
  unsigned flip_bit_ = 0;
  // The program as encoded (words encoded when read, mem_target.h), behind rom_target_.
  Rom rom_;
  std::function<void()> on_done_;
  bool done_ = false;
  bool finishing_ = false;  // finish() began (it may take simulated time: the RTL read-out)
  ScStats stats_;
  std::vector<uint8_t> final_sram_;
  sc_core::sc_trace_file* trace_ = nullptr;

  std::unique_ptr<sc_core::sc_clock> clk_;  // RTL mode with a trace only (the VCD's clock)
  MemTarget<Rom> rom_target_;
  MemTarget<Ddr> ddr_target_;
  std::unique_ptr<MemTarget<Sram>> sram_target_;
  std::unique_ptr<RtlSram> rtl_sram_;
  std::unique_ptr<RtlDecoder> rtl_decoder_;
  std::unique_ptr<RtlCompute> rtl_compute_;
  // Dispatcher state for the deadlock report.
  enum class DispatchState : uint8_t { Fetching, QueueFull, Draining, Done };
  DispatchState dispatch_state_ = DispatchState::Fetching;
  uint32_t dispatch_pc_ = 0;
  tlm_utils::simple_initiator_socket<NpuTop> fetch_;
  tlm_utils::simple_initiator_socket<NpuTop> sram_dump_;
  std::array<std::unique_ptr<Engine>, isa::kNumQueues> engines_;
  sc_core::sc_signal<uint32_t> pc_{"pc"};
  std::vector<uint8_t> fetch_word_;
  tlm::tlm_generic_payload fetch_payload_;
  sc_core::sc_event latency_ev_;  // the dispatch latency is over (see wait_dispatch)
};

}  // namespace npuforge::sim::sc_model
