#include "sim/sc_model/rtl_blocks.h"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "Vnpu_scratchpad.h"
#include "Vnpu_scratchpad_conflict.h"
#include "Vnpu_scratchpad_stuck.h"
#if NPUFORGE_HAVE_RTL_DECODER
#include "Vnpu_decoder.h"
#include "Vnpu_decoder_bug.h"
#endif
#include "util/error.h"

namespace npuforge::sim::sc_model {
namespace {

using sc_core::sc_module;

template <class M>
std::unique_ptr<sc_module> make_scratchpad(RtlSram& s, sc_core::sc_clock& clk) {
  auto m = std::make_unique<M>("rtl");
  m->clk(clk);
  m->rst_n(s.rst_n);
  m->wr_en(s.wr_en);
  m->wr_addr(s.wr_addr);
  m->wr_data(s.wr_data);
  m->wr_be(s.wr_be);
  m->rd_en(s.rd_en);
  m->rd_addr(s.rd_addr);
  m->rd_valid(s.rd_valid);
  m->rd_data(s.rd_data);
  m->conflict(s.conflict);
  return m;
}

uint32_t le32(const uint8_t* p) {
  return uint32_t{p[0]} | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16 | uint32_t{p[3]} << 24;
}

template <class Signal>
void trace_signal(sc_core::sc_trace_file* tf, const Signal& s) {
  if (tf) sc_core::sc_trace(tf, s, s.name());
}

}  // namespace

uint64_t stuck_bit_alias_bytes() { return uint64_t{RtlSram::kBankBytes} << NPUFORGE_SPAD_STUCK_BIT; }

RtlSram::RtlSram(sc_core::sc_module_name name, SramModel variant, const isa::NpuConfig& config,
                 sc_core::sc_clock& clk, sc_core::sc_trace_file* tf, std::function<void(std::string)> monitor)
    : sc_module(name), socket("socket"), clk_(&clk), size_(config.sram_bytes.value), monitor_(std::move(monitor)) {
  if (config.sram_banks != kBanks || config.bank_width_bytes != kBankBytes ||
      config.sram_bytes.value > kCapacity)
    throw Error(fmt::format(
        "--rtl: the Verilated scratchpad is built for sram_banks={}, bank_width_bytes={}, "
        "sram_bytes<={}; the NPU config has sram_banks={}, bank_width_bytes={}, sram_bytes={} "
        "(rebuild rtl_stubs with other parameters)",
        kBanks, kBankBytes, kCapacity, config.sram_banks, config.bank_width_bytes,
        config.sram_bytes.value));
  switch (variant) {
    case SramModel::RtlStuckBit: model_ = make_scratchpad<Vnpu_scratchpad_stuck>(*this, clk); break;
    case SramModel::RtlConflictBug: model_ = make_scratchpad<Vnpu_scratchpad_conflict>(*this, clk); break;
    default: model_ = make_scratchpad<Vnpu_scratchpad>(*this, clk); break;
  }
  socket.register_b_transport(this, &RtlSram::b_transport);
  SC_THREAD(reset_thread);
  SC_THREAD(write_thread);
  SC_THREAD(read_thread);
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
  wait(delay);
  delay = sc_core::SC_ZERO_TIME;
  const uint64_t addr = p.get_address();
  const uint64_t len = p.get_data_length();
  if (addr > size_ || len > size_ - addr) {
    p.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
    return;
  }
  if (len > 0) {
    Request r;
    r.addr = addr;
    r.data = p.get_data_ptr();
    r.len = len;
    if (p.is_write()) {
      writes_.push_back(&r);
      write_ev_.notify(sc_core::SC_ZERO_TIME);
    } else {
      reads_.push_back(&r);
      read_ev_.notify(sc_core::SC_ZERO_TIME);
    }
    wait(r.done);
  }
  p.set_response_status(tlm::TLM_OK_RESPONSE);
}

void RtlSram::reset_thread() {
  rst_n.write(false);
  wait(clk_->posedge_event());
  wait(clk_->posedge_event());
  wait(clk_->negedge_event());
  // Monitor: the documented reset values (rd_valid and conflict low).
  if (rd_valid.read() || conflict.read() != 0)
    violation(fmt::format("scratchpad: after reset rd_valid={} conflict={:#x}, expected 0 and 0", rd_valid.read(),
                          conflict.read()));
  rst_n.write(true);
  in_reset_ = false;
  reset_done_.notify(sc_core::SC_ZERO_TIME);
}

void RtlSram::wait_request(std::deque<Request*>& queue, sc_core::sc_event& ev) {
  while (in_reset_) wait(reset_done_);
  while (queue.empty()) wait(ev);
}

void RtlSram::write_thread() {
  for (;;) {
    wait_request(writes_, write_ev_);
    wait(clk_->negedge_event());
    while (!writes_.empty()) {
      Request* r = writes_.front();
      writes_.pop_front();
      for (uint64_t a = r->addr, end = r->addr + r->len; a < end;) {
        const unsigned off = static_cast<unsigned>(a % kBankBytes);
        const unsigned n = static_cast<unsigned>(std::min<uint64_t>(kBankBytes - off, end - a));
        uint8_t lane[kBankBytes] = {};
        std::memcpy(lane + off, r->data + (a - r->addr), n);
        sc_dt::sc_bv<128> bv;
        for (unsigned i = 0; i < kBankBytes / 4; ++i) bv.set_word(i, le32(lane + 4 * i));
        wr_en.write(true);
        wr_addr.write(static_cast<uint32_t>(a / kBankBytes));
        wr_data.write(bv);
        wr_be.write(((1u << n) - 1) << off);
        writing_ = true;
        write_word_ = a / kBankBytes;
        ++words_;
        wait(clk_->negedge_event());  // sampled on the rising edge in between
        a += n;
      }
      r->done.notify(sc_core::SC_ZERO_TIME);
    }
    wr_en.write(false);
    writing_ = false;
  }
}

void RtlSram::read_thread() {
  for (;;) {
    wait_request(reads_, read_ev_);
    wait(clk_->negedge_event());
    while (!reads_.empty()) {
      Request* r = reads_.front();
      reads_.pop_front();
      std::deque<uint64_t> todo;
      for (uint64_t w = r->addr / kBankBytes; w <= (r->addr + r->len - 1) / kBankBytes; ++w)
        todo.push_back(w);
      bool pending = false;  // `issued` went out on the previous falling edge
      uint64_t issued = 0;
      bool clash = false;    // ... while the write port drove a word of the same bank
      while (!todo.empty() || pending) {
        if (pending) {
          check_read(issued, clash);
          if (rd_valid.read()) {
            const sc_dt::sc_bv<128> bv = rd_data.read();
            uint8_t lane[kBankBytes];
            for (unsigned i = 0; i < kBankBytes / 4; ++i) {
              const uint32_t v = bv.get_word(i);
              for (unsigned b = 0; b < 4; ++b) lane[4 * i + b] = static_cast<uint8_t>(v >> (8 * b));
            }
            const uint64_t lo = std::max(r->addr, issued * kBankBytes);
            const uint64_t hi = std::min(r->addr + r->len, (issued + 1) * kBankBytes);
            std::memcpy(r->data + (lo - r->addr), lane + (lo - issued * kBankBytes), hi - lo);
          } else {
            ++conflicts_;  // a write took the bank: issue again
            todo.push_front(issued);
          }
          pending = false;
        }
        if (!todo.empty()) {
          rd_en.write(true);
          rd_addr.write(static_cast<uint32_t>(todo.front()));
          issued = todo.front();
          // The write thread drives its pins on the same falling edge; sample its word after.
          pending = true;
          todo.pop_front();
          ++words_;
        } else {
          rd_en.write(false);
        }
        wait(sc_core::SC_ZERO_TIME);  // let the write thread drive this cycle's word first
        clash = pending && writing_ && write_word_ % kBanks == issued % kBanks;
        wait(clk_->negedge_event());
      }
      r->done.notify(sc_core::SC_ZERO_TIME);
    }
    rd_en.write(false);
  }
}

void RtlSram::violation(std::string what) {
  if (monitor_) monitor_(std::move(what));
}

// Monitor of rd_valid and conflict one cycle after a read of `word`: the read is served
// exactly when no write hit its bank, and conflict flags exactly that bank then.
void RtlSram::check_read(uint64_t word, bool wrote_same_bank) {
  const uint32_t bank_bit = 1u << (word % kBanks);
  const bool valid = rd_valid.read();
  const uint32_t conflict_bits = conflict.read();
  if (valid == wrote_same_bank || ((conflict_bits & bank_bit) != 0) != wrote_same_bank)
    violation(fmt::format("scratchpad: read of word {:#x} (bank {}) {} a write to its bank: rd_valid={}, conflict={:#x}",
                          word, word % kBanks, wrote_same_bank ? "with" : "without", valid, conflict_bits));
}

#if NPUFORGE_HAVE_RTL_DECODER
template <class M>
std::unique_ptr<sc_core::sc_module> make_decoder(RtlDecoder& d, sc_core::sc_clock& clk) {
  auto m = std::make_unique<M>("rtl");
  m->clk(clk);
  m->rst_n(d.rst_n);
  m->in_valid(d.in_valid);
  m->instr(d.instr);
  m->out_valid(d.out_valid);
  m->illegal(d.illegal);
  m->queue_id(d.queue_id);
  m->field_count(d.field_count);
  m->fields(d.fields);
  return m;
}
#endif

RtlDecoder::RtlDecoder(sc_core::sc_module_name name, sc_core::sc_clock& clk,
                       sc_core::sc_trace_file* tf, bool planted_bug)
    : sc_module(name), clk_(&clk) {
#if NPUFORGE_HAVE_RTL_DECODER
  model_ = planted_bug ? make_decoder<Vnpu_decoder_bug>(*this, clk) : make_decoder<Vnpu_decoder>(*this, clk);
#else
  (void)planted_bug;
  throw Error("--rtl: this build has no RTL decoder (npu_isa_pkg.sv was missing at configure time)");
#endif
  trace_signal(tf, in_valid);
  trace_signal(tf, instr);
  trace_signal(tf, out_valid);
  trace_signal(tf, illegal);
  trace_signal(tf, queue_id);
  trace_signal(tf, field_count);
  trace_signal(tf, fields);
}

RtlDecoder::~RtlDecoder() = default;

RtlDecoder::Decoded RtlDecoder::decode(std::span<const uint8_t> word) {
  wait(clk_->negedge_event());
  if (!rst_n.read()) {  // first use: one reset cycle
    wait(clk_->negedge_event());
    rst_n.write(true);
    wait(clk_->negedge_event());
  }
  sc_dt::sc_bv<256> bv;
  for (unsigned i = 0; i < 8; ++i) bv.set_word(i, le32(word.data() + 4 * i));
  instr.write(bv);
  in_valid.write(true);
  wait(clk_->negedge_event());
  in_valid.write(false);
  Decoded d;
  d.illegal = illegal.read() || !out_valid.read();
  d.queue = queue_id.read();
  d.field_count = field_count.read();
  const sc_dt::sc_bv<32 * kMaxFields> f = fields.read();
  for (unsigned s = 0; s < kMaxFields; ++s) d.fields[s] = f.get_word(s);
  return d;
}

}  // namespace npuforge::sim::sc_model
