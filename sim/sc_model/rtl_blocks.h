#pragma once
// The Verilated RTL stubs bound into the SystemC top.
// RtlSram: a TLM-2.0 target that serves scratchpad reads and writes with the Verilated
// rtl_stubs/npu_scratchpad.sv: b_transport splits a transaction into BANK_BYTES words and
// queues it for the write-port or read-port driver thread, which drive the RTL pins on the
// falling clock edge and sample on the next falling edge. A read dropped by a bank conflict
// (rd_valid low) is re-issued. Each driver thread is the only writer of its pins.
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <span>
#include <string>

#include <systemc>
#include <tlm>
#include <tlm_utils/multi_passthrough_target_socket.h>

#include "isa/isa.h"
#include "isa/npu_config.h"
#include "sim/sc_model/sc_backend.h"

namespace npuforge::sim::sc_model {

class RtlSram : public sc_core::sc_module {
 public:
  static constexpr unsigned kBankBytes = 16;  // the Verilated model's parameters
  static constexpr unsigned kBanks = 8;
  static constexpr uint64_t kCapacity = uint64_t{kBanks} * 4096 * kBankBytes;

  SC_HAS_PROCESS(RtlSram);
  tlm_utils::multi_passthrough_target_socket<RtlSram> socket;

  // Throws npuforge::Error when `config` does not match the built RTL geometry. `monitor`
  // gets one line per violation of the documented port behaviour (rd_valid, conflict, reset).
  RtlSram(sc_core::sc_module_name name, SramModel variant, const isa::NpuConfig& config,
          sc_core::sc_clock& clk, sc_core::sc_trace_file* trace,
          std::function<void(std::string)> monitor = {});
  ~RtlSram() override;

  uint64_t words() const { return words_; }
  uint64_t conflicts() const { return conflicts_; }

  sc_core::sc_signal<bool> rst_n{"rst_n"};
  sc_core::sc_signal<bool> wr_en{"wr_en"};
  sc_core::sc_signal<uint32_t> wr_addr{"wr_addr"};
  sc_core::sc_signal<sc_dt::sc_bv<128>> wr_data{"wr_data"};
  sc_core::sc_signal<uint32_t> wr_be{"wr_be"};
  sc_core::sc_signal<bool> rd_en{"rd_en"};
  sc_core::sc_signal<uint32_t> rd_addr{"rd_addr"};
  sc_core::sc_signal<bool> rd_valid{"rd_valid"};
  sc_core::sc_signal<sc_dt::sc_bv<128>> rd_data{"rd_data"};
  sc_core::sc_signal<uint32_t> conflict{"conflict"};

 private:
  struct Request {
    uint64_t addr = 0;
    uint8_t* data = nullptr;
    uint64_t len = 0;
    sc_core::sc_event done;
  };

  void b_transport(int initiator, tlm::tlm_generic_payload& p, sc_core::sc_time& delay);
  void reset_thread();
  void write_thread();
  void read_thread();
  void wait_request(std::deque<Request*>& queue, sc_core::sc_event& ev);
  void check_read(uint64_t word, bool wrote_same_bank);
  void violation(std::string what);

  sc_core::sc_clock* clk_;
  uint64_t size_;
  std::unique_ptr<sc_core::sc_module> model_;
  std::deque<Request*> writes_, reads_;
  sc_core::sc_event write_ev_, read_ev_, reset_done_;
  bool in_reset_ = true;
  uint64_t words_ = 0;
  uint64_t conflicts_ = 0;
  std::function<void(std::string)> monitor_;
  bool writing_ = false;        // the write port drives wr_en this cycle
  uint64_t write_word_ = 0;     // ... at this word address
};

// The Verilated npu_decoder behind a blocking call for the dispatcher thread.
class RtlDecoder : public sc_core::sc_module {
 public:
  // Field slots of the decoder's output: as many as the C++ decoder has (npu_isa_pkg MAX_FIELDS).
  static constexpr unsigned kMaxFields = isa::kMaxFields;
  struct Decoded {
    bool illegal = false;
    unsigned queue = 0;
    unsigned field_count = 0;
    uint32_t fields[kMaxFields] = {};
  };

  // planted_bug: use the Vnpu_decoder_bug variant (tests of the rtl-mismatch finding).
  RtlDecoder(sc_core::sc_module_name name, sc_core::sc_clock& clk, sc_core::sc_trace_file* trace,
             bool planted_bug = false);
  ~RtlDecoder() override;
  // Drives the word on a falling edge, returns the registered outputs one cycle later.
  // Call from an SC_THREAD only.
  Decoded decode(std::span<const uint8_t> word);

  sc_core::sc_signal<bool> rst_n{"rst_n"};
  sc_core::sc_signal<bool> in_valid{"in_valid"};
  sc_core::sc_signal<sc_dt::sc_bv<256>> instr{"instr"};
  sc_core::sc_signal<bool> out_valid{"out_valid"};
  sc_core::sc_signal<bool> illegal{"illegal"};
  sc_core::sc_signal<uint32_t> queue_id{"queue_id"};
  sc_core::sc_signal<uint32_t> field_count{"field_count"};
  sc_core::sc_signal<sc_dt::sc_bv<32 * kMaxFields>> fields{"fields"};

 private:
  sc_core::sc_clock* clk_;
  std::unique_ptr<sc_core::sc_module> model_;
};

}  // namespace npuforge::sim::sc_model
