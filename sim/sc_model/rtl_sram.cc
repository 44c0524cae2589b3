// RtlSram: the scratchpad's two ports (one write, one read) scheduled cycle by cycle exactly
// as the clocked adapter served them, with the Verilated model evaluated only for cycles in
// which a port is busy, and lazily: a cycle is evaluated once no request can still change its
// pins (every request starts after the falling edge it arrived on), so a caller waits once
// per transaction (a read again after each bank conflict), not once per cycle.
#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>

#include <fmt/format.h>

#include "sim/sc_model/npu_top.h"
#include "sim/sc_model/rtl_blocks.h"
#include "util/error.h"

namespace npuforge::sim::sc_model {
namespace {

using sc_core::sc_time;

// The clocked adapter held rst_n low through the rising edges at 0 and 1 ns and served
// requests from the falling edge at 2.5 ns on.
constexpr uint64_t kFirstEdge = 2;

// A request starts on the first falling edge after it arrived, or behind the requests before
// it on its port, never on the edge it arrived on: the clocked adapter queued it one delta
// cycle after its caller woke (delta 1 at the earliest), and a port thread that finished on
// that edge had looked at its queue in that same delta cycle already, before the caller ran
// (SystemC ran the clock edge's waiters first; measured against the clocked adapter).
uint64_t words_spanned(uint64_t addr, uint64_t len, unsigned bank_bytes) {
  return (addr + len - 1) / bank_bytes - addr / bank_bytes + 1;
}

unsigned log2_of(unsigned pow2) { return static_cast<unsigned>(std::countr_zero(pow2)); }

template <class Signal>
void trace_signal(sc_core::sc_trace_file* tf, const Signal& s) {
  if (tf) sc_core::sc_trace(tf, s, s.name());
}

// The first `bytes` bytes of a lane (the configured bank word; the rest reads as 0).
sc_dt::sc_bv<8 * RtlSram::kMaxBankBytes> lane_bits(const uint8_t* lane, unsigned bytes) {
  sc_dt::sc_bv<8 * RtlSram::kMaxBankBytes> bv;
  for (unsigned i = 0; i < bytes; ++i) bv.range(8 * i + 7, 8 * i) = lane[i];
  return bv;
}

sc_dt::sc_bv<RtlSram::kMaxBankBytes> enable_bits(unsigned off, unsigned len) {
  sc_dt::sc_bv<RtlSram::kMaxBankBytes> bv;
  for (unsigned i = off; i < off + len; ++i) bv[i] = 1;
  return bv;
}

}  // namespace

RtlSram::RtlSram(sc_core::sc_module_name name, Plant plant, const isa::NpuConfig& config,
                 sc_core::sc_clock* clk, sc_core::sc_trace_file* tf, std::function<void(std::string)> monitor)
    : sc_module(name),
      socket("socket"),
      clk_(clk),
      size_(config.sram_bytes.value),
      bank_bytes_(config.bank_width_bytes),
      banks_(config.sram_banks),
      monitor_(std::move(monitor)) {
  // The NPU config loader has checked the geometry already (powers of two, its limits, which
  // are the RTL's maxima); this guards a config built in code past the loader.
  if (std::popcount(banks_) != 1 || banks_ > kMaxBanks || std::popcount(bank_bytes_) != 1 ||
      bank_bytes_ > kMaxBankBytes || size_ > kMaxCapacity)
    throw Error(fmt::format(
        "--rtl: the Verilated scratchpad takes sram_banks a power of two <= {}, bank_width_bytes a power of "
        "two <= {}, sram_bytes <= {}; the NPU config has sram_banks={}, bank_width_bytes={}, sram_bytes={}",
        kMaxBanks, kMaxBankBytes, kMaxCapacity, banks_, bank_bytes_, size_));
  model_ = make_model(plant, Geometry{log2_of(banks_), log2_of(bank_bytes_)});
  socket.register_b_transport(this, &RtlSram::b_transport);
  if (!clk_) return;
  SC_THREAD(trace_thread);
  trace_signal(tf, rst_n);
  trace_signal(tf, wr_en);
  trace_signal(tf, wr_addr);
  trace_signal(tf, wr_data);
  trace_signal(tf, wr_be);
  trace_signal(tf, rd_en);
  trace_signal(tf, rd_addr);
  trace_signal(tf, rd_valid);
  trace_signal(tf, rd_data);
  trace_signal(tf, conflict);
}

RtlSram::~RtlSram() = default;

void RtlSram::b_transport(int, tlm::tlm_generic_payload& p, sc_core::sc_time& delay) {
  wait(delay);  // the clocked adapter queued the request one delta cycle in; keep its timing
  delay = sc_core::SC_ZERO_TIME;
  const uint64_t addr = p.get_address();
  const uint64_t len = p.get_data_length();
  if (addr > size_ || len > size_ - addr) {
    p.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
    return;
  }
  if (len > 0) {
    if (p.is_write())
      write(addr, p.get_data_ptr(), len);
    else
      read(addr, p.get_data_ptr(), len);
  }
  p.set_response_status(tlm::TLM_OK_RESPONSE);
}

// Writes never stall: a write's cycles are known when it arrives.
void RtlSram::write(uint64_t addr, const uint8_t* data, uint64_t len) {
  const sc_time now = sc_core::sc_time_stamp();
  Write w;
  w.addr = addr;
  w.data = data;
  w.len = len;
  w.words = words_spanned(addr, len, bank_bytes_);
  w.start = std::max({FallingEdges::after(now), write_free_, kFirstEdge});
  write_free_ = w.start + w.words;
  writes_.push_back(&w);
  resume_at(write_free_);
  catch_up(FallingEdges::before(sc_core::sc_time_stamp()));  // all its words, while `data` lives
}

void RtlSram::read(uint64_t addr, uint8_t* data, uint64_t len) {
  const sc_time now = sc_core::sc_time_stamp();
  catch_up(FallingEdges::before(now));
  Read r;
  r.addr = addr;
  r.data = data;
  r.len = len;
  r.words = words_spanned(addr, len, bank_bytes_);
  r.eligible = std::max(FallingEdges::after(now), kFirstEdge);  // behind any read before it, too
  queued_.push_back(&r);
  read_bound_ = std::max(read_bound_, r.eligible) + 2 * r.words + 2;
  // Wake at the earliest edge it can be done on (no more bank conflicts); a conflict found on
  // the way puts that edge later.
  while (!r.done) {
    wait(FallingEdges::time(earliest_done(r)) - sc_core::sc_time_stamp());
    catch_up(FallingEdges::before(sc_core::sc_time_stamp()));
  }
  resume_at(r.done_at);
}

// The clocked port thread saw a request done on a falling edge (delta 1) and notified its
// caller one delta later.
void RtlSram::resume_at(uint64_t edge) {
  const sc_time t = FallingEdges::time(edge);
  if (t > sc_core::sc_time_stamp()) wait(t - sc_core::sc_time_stamp());
  wait(sc_core::SC_ZERO_TIME);
  wait(sc_core::SC_ZERO_TIME);
}

// Evaluates every cycle whose falling edge is before `end` (edge index); without a trace,
// cycles in which neither port is busy are skipped (they change no state a later read sees:
// the registered outputs are only sampled one cycle after a read was issued).
void RtlSram::catch_up(uint64_t end) {
  reset_once();
  while (next_edge_ < end) {
    const uint64_t n = clk_ ? next_edge_ : next_active_edge(next_edge_);
    if (n >= end) {
      next_edge_ = end;
      return;
    }
    step(n);
    next_edge_ = n + 1;
  }
}

uint64_t RtlSram::next_active_edge(uint64_t from) const {
  if (active_) return from;
  uint64_t n = std::numeric_limits<uint64_t>::max();
  if (!queued_.empty()) n = std::max(from, queued_.front()->eligible);
  if (!writes_.empty()) n = std::min(n, std::max(from, writes_.front()->start));
  return n;
}

// A lower bound of the edge `r` is done on: each word it still has to issue takes a cycle,
// then one to sample the last and one more before the port loop notices (no conflicts).
uint64_t RtlSram::earliest_done(const Read& r) const {
  uint64_t free = active_ ? next_edge_ + todo_.size() + 1 : std::max(read_free_, next_edge_);
  if (active_ == &r) return free;
  for (const Read* q : queued_) {
    free = std::max(free, q->eligible) + q->words + 1;
    if (q == &r) return free;
  }
  throw Error("rtl scratchpad: a read waits that is not queued");
}

void RtlSram::reset_once() {
  if (reset_done_) return;
  reset_done_ = true;
  Pins pins;
  pins.rst_n = false;
  model_->cycle(pins);  // the rising edges at 0 and 1 ns
  model_->cycle(pins);
  // Monitor: the documented reset values (rd_valid and conflict low).
  const Outputs out = model_->outputs();
  if (out.rd_valid || out.conflict != 0)
    violation(fmt::format("scratchpad: after reset rd_valid={} conflict={:#x}, expected 0 and 0", out.rd_valid,
                          out.conflict));
}

// One cycle: the pins both port threads of the clocked adapter drove on falling edge n.
void RtlSram::step(uint64_t n) {
  Pins pins;
  read_port(n, pins);
  write_port(n, pins);
  clash_ = pins.rd_en && pins.wr_en && pins.wr_addr % banks_ == pins.rd_addr % banks_;
  model_->cycle(pins);
  if (active_ && !pending_ && todo_.empty()) {  // the clocked read loop ended on the next edge
    active_->done = true;
    active_->done_at = n + 1;
    read_free_ = n + 1;
    active_ = nullptr;
  }
  if (!clk_) return;
  wr_en.write(pins.wr_en);
  if (pins.wr_en) {
    wr_addr.write(pins.wr_addr);
    wr_data.write(lane_bits(pins.wr_lane, bank_bytes_));
    wr_be.write(enable_bits(pins.be_off, pins.be_len));
  }
  rd_en.write(pins.rd_en);
  if (pins.rd_en) rd_addr.write(pins.rd_addr);
}

// The read port: sample the word issued on the previous edge (re-issue it if a write took
// its bank), then issue the next word of the read in progress, or of the next queued read.
void RtlSram::read_port(uint64_t n, Pins& pins) {
  if (!active_ && !queued_.empty() && queued_.front()->eligible <= n) {
    active_ = queued_.front();
    queued_.pop_front();
    for (uint64_t w = active_->addr / bank_bytes_; w <= (active_->addr + active_->len - 1) / bank_bytes_; ++w)
      todo_.push_back(w);
    pending_ = false;
    clash_ = false;
  }
  if (!active_) return;
  if (pending_) {
    const Outputs out = model_->outputs();
    check_read(issued_, clash_, out);
    if (out.rd_valid) {
      const uint64_t lo = std::max(active_->addr, issued_ * bank_bytes_);
      const uint64_t hi = std::min(active_->addr + active_->len, (issued_ + 1) * bank_bytes_);
      std::memcpy(active_->data + (lo - active_->addr), out.rd_lane + (lo - issued_ * bank_bytes_), hi - lo);
    } else {
      ++conflicts_;  // a write took the bank: issue again
      todo_.push_front(issued_);
    }
    pending_ = false;
  }
  if (todo_.empty()) return;
  pins.rd_en = true;
  pins.rd_addr = static_cast<uint32_t>(todo_.front());
  issued_ = todo_.front();
  todo_.pop_front();
  pending_ = true;
  ++words_;
}

// The write port: word n - start of the write in progress (a partial first or last word
// with byte enables).
void RtlSram::write_port(uint64_t n, Pins& pins) {
  if (writes_.empty() || writes_.front()->start > n) return;
  const Write& w = *writes_.front();
  const uint64_t j = n - w.start;
  const uint64_t a = j == 0 ? w.addr : (w.addr / bank_bytes_ + j) * bank_bytes_;
  const auto off = static_cast<unsigned>(a % bank_bytes_);
  const auto len = static_cast<unsigned>(std::min<uint64_t>(bank_bytes_ - off, w.addr + w.len - a));
  // The bank word's bytes outside the enables are 0, so the pins (and a trace) are the same
  // for the same run; only the word is cleared, not the 256-byte maximum lane.
  std::memset(pins.wr_lane, 0, std::max(bank_bytes_, 4u));
  std::memcpy(pins.wr_lane + off, w.data + (a - w.addr), len);
  pins.wr_en = true;
  pins.wr_addr = static_cast<uint32_t>(a / bank_bytes_);
  pins.be_off = off;
  pins.be_len = len;
  ++words_;
  if (j + 1 == w.words) writes_.pop_front();
}

// Trace mode: every cycle evaluated on its own falling edge (the requests it serves all
// arrived before that edge), so the mirrors change when the clocked pins did.
void RtlSram::trace_thread() {
  reset_once();
  for (;;) {
    wait(clk_->negedge_event());
    const uint64_t n = FallingEdges::after(sc_core::sc_time_stamp()) - 1;
    if (n >= 1) rst_n.write(true);
    catch_up(n + 1);
    wait(clk_->posedge_event());
    const Outputs out = model_->outputs();
    rd_valid.write(out.rd_valid);
    rd_data.write(lane_bits(out.rd_lane, bank_bytes_));
    conflict.write(out.conflict);
  }
}

void RtlSram::violation(std::string what) {
  if (monitor_) monitor_(std::move(what));
}

// Monitor of rd_valid and conflict one cycle after a read of `word`: the read is served
// exactly when no write hit its bank, and conflict flags exactly that bank then.
void RtlSram::check_read(uint64_t word, bool wrote_same_bank, const Outputs& out) {
  // The bank under the configured geometry (the RTL's configuration register holds the same).
  const uint64_t bank_bit = uint64_t{1} << (word % banks_);
  if (out.rd_valid == wrote_same_bank || (out.conflict & bank_bit) != (wrote_same_bank ? bank_bit : 0) ||
      (out.conflict & ~bank_bit) != 0)
    violation(fmt::format("scratchpad: read of word {:#x} (bank {}) {} a write to its bank: rd_valid={}, conflict={:#x}",
                          word, word % banks_, wrote_same_bank ? "with" : "without", out.rd_valid, out.conflict));
}

}  // namespace npuforge::sim::sc_model
