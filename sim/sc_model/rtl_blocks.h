#pragma once
// The Verilated RTL stubs bound into the SystemC top: the scratchpad and the decoder.
//
// Both are plain C++ (--cc) Verilated models driven directly from the threads that use them,
// like the compute unit (rtl_compute.h): the adapter sets the pins, eval()s a rising and a
// falling edge, reads the registered outputs, and advances SystemC time by the RTL cycles
// with one wait per transaction instead of a free-running sc_clock that woke the kernel
// every half cycle for the whole run.
//
// The cycle-level behaviour is that of the clocked adapter they replace, cycle for cycle:
// pins change on falling edges (cycle n: the falling edge at n + 0.5 ns, sampled on the
// rising edge at n + 1 ns), a port serves its requests in order, a request starts on the
// first falling edge after it arrives (or right behind the request before it), a read
// dropped by a bank conflict (rd_valid low) is re-issued, and the caller resumes in the same
// delta cycle as before. With a trace file the free-running clock is kept, every cycle is
// evaluated on its own falling edge and the pins are mirrored into sc_signals, so the VCD
// shows them; the results are the same either way.
#include <algorithm>
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

// The RTL clock's falling edges: edge n is at n + 0.5 cycles.
struct FallingEdges {
  static uint64_t after(const sc_core::sc_time& t);   // the first edge strictly after t
  static uint64_t before(const sc_core::sc_time& t);  // how many edges lie strictly before t
  static bool at(const sc_core::sc_time& t);          // t is an edge
  static sc_core::sc_time time(uint64_t n);
};

class RtlSram : public sc_core::sc_module {
 public:
  // The Verilated model's maxima (npu_scratchpad.sv parameters, = the NPU config's limits);
  // the geometry itself is loaded into the model's configuration register at reset.
  static constexpr unsigned kMaxBankBytes = 256;
  static constexpr unsigned kMaxBanks = 64;
  static constexpr uint64_t kMaxCapacity = uint64_t{1} << 24;

  SC_HAS_PROCESS(RtlSram);
  tlm_utils::multi_passthrough_target_socket<RtlSram> socket;

  // Throws npuforge::Error when `config`'s geometry exceeds the RTL's maxima. `monitor`
  // gets one line per violation of the documented port behaviour (rd_valid, conflict, reset).
  // `clk` (trace mode only, else nullptr): evaluate every cycle on its falling edge and
  // mirror the pins into `trace`. An RTL plant of npu_scratchpad runs its variant.
  RtlSram(sc_core::sc_module_name name, Plant plant, const isa::NpuConfig& config,
          sc_core::sc_clock* clk, sc_core::sc_trace_file* trace, std::function<void(std::string)> monitor = {});
  ~RtlSram() override;

  uint64_t words() const { return words_; }
  uint64_t conflicts() const { return conflicts_; }
  // The cycle by which every transaction accepted so far is done at the latest, whatever the
  // bank conflicts (a read word is retried once per colliding write word: at most twice its
  // words). The watchdog's allowance: the RTL moves one bank word a cycle, so with banks
  // narrower than the DMA's bytes per cycle (1-byte banks: 32x) a transfer outlasts its
  // timing; a read retried for ever (a planted bug) still overruns this bound.
  uint64_t busy_until() const { return std::max(write_free_, read_bound_); }

  // The configuration pins, as log2 (loaded by the model while rst_n is low).
  struct Geometry {
    unsigned bank_bits = 0;
    unsigned width_bits = 0;
  };
  // Lanes are only as wide as the configured bank word (bank_bytes_): only those bytes are
  // driven and read, so the default 16-byte geometry moves 16 bytes a cycle, not 256.
  struct Pins {
    bool rst_n = true;
    bool wr_en = false;
    uint32_t wr_addr = 0;
    unsigned be_off = 0;  // wr_be: bytes [be_off, be_off + be_len) of the word
    unsigned be_len = 0;
    uint8_t wr_lane[kMaxBankBytes];  // bytes outside the enabled ones are don't-care
    bool rd_en = false;
    uint32_t rd_addr = 0;
  };
  struct Outputs {
    bool rd_valid = false;
    uint64_t conflict = 0;
    uint8_t rd_lane[kMaxBankBytes];  // the configured bank width's bytes are valid
  };
  // The Verilated model (one per variant, rtl_blocks.cc): one clock cycle with these pins.
  class Model {
   public:
    virtual ~Model() = default;
    virtual void cycle(const Pins& pins) = 0;  // set, rising edge, falling edge
    virtual Outputs outputs() const = 0;       // the registered outputs now
  };

 private:
  struct Write {
    uint64_t addr = 0;
    const uint8_t* data = nullptr;
    uint64_t len = 0;
    uint64_t start = 0;  // falling edge of its first word
    uint64_t words = 0;
  };
  struct Read {
    uint64_t addr = 0;
    uint8_t* data = nullptr;
    uint64_t len = 0;
    uint64_t eligible = 0;  // the first falling edge it may start on (if the port is free)
    uint64_t words = 0;
    bool done = false;
    uint64_t done_at = 0;   // the falling edge the clocked adapter reported it done on
  };

  static std::unique_ptr<Model> make_model(Plant plant, Geometry g);
  void b_transport(int initiator, tlm::tlm_generic_payload& p, sc_core::sc_time& delay);
  void write(uint64_t addr, const uint8_t* data, uint64_t len);
  void read(uint64_t addr, uint8_t* data, uint64_t len);
  void resume_at(uint64_t edge);
  void catch_up(uint64_t end);
  uint64_t next_active_edge(uint64_t from) const;
  uint64_t earliest_done(const Read& r) const;
  void step(uint64_t n);
  void read_port(uint64_t n, Pins& pins);
  void write_port(uint64_t n, Pins& pins);
  void reset_once();
  void trace_thread();
  void check_read(uint64_t word, bool wrote_same_bank, const Outputs& out);
  void violation(std::string what);

  sc_core::sc_clock* clk_;
  uint64_t size_;
  unsigned bank_bytes_;  // the NPU config's geometry
  unsigned banks_;
  std::unique_ptr<Model> model_;
  std::function<void(std::string)> monitor_;
  bool reset_done_ = false;
  uint64_t next_edge_ = 1;  // the first falling edge not evaluated yet
  uint64_t words_ = 0;
  uint64_t conflicts_ = 0;
  uint64_t read_bound_ = 0;
  // Write port: scheduled writes in order; it is free again from write_free_ on.
  std::deque<Write*> writes_;
  uint64_t write_free_ = 0;
  // Read port: the read in progress, those waiting behind it, and the edge the last finished.
  Read* active_ = nullptr;
  std::deque<Read*> queued_;
  std::deque<uint64_t> todo_;  // words of active_ still to issue
  bool pending_ = false;       // issued_ went out on the previous edge
  uint64_t issued_ = 0;
  bool clash_ = false;         // ... while the write port drove a word of the same bank
  uint64_t read_free_ = 0;

  // Mirrors of the pins, written only in trace mode.
  sc_core::sc_signal<bool> rst_n{"rst_n"};
  sc_core::sc_signal<bool> wr_en{"wr_en"};
  sc_core::sc_signal<uint32_t> wr_addr{"wr_addr"};
  sc_core::sc_signal<sc_dt::sc_bv<8 * kMaxBankBytes>> wr_data{"wr_data"};
  sc_core::sc_signal<sc_dt::sc_bv<kMaxBankBytes>> wr_be{"wr_be"};
  sc_core::sc_signal<bool> rd_en{"rd_en"};
  sc_core::sc_signal<uint32_t> rd_addr{"rd_addr"};
  sc_core::sc_signal<bool> rd_valid{"rd_valid"};
  sc_core::sc_signal<sc_dt::sc_bv<8 * kMaxBankBytes>> rd_data{"rd_data"};
  sc_core::sc_signal<uint64_t> conflict{"conflict"};
};

// The Verilated npu_decoder behind a blocking call for the dispatcher thread.
class RtlDecoder : public sc_core::sc_module {
 public:
  // Field slots of the decoder's output: as many as the C++ decoder has (npu_isa_pkg MAX_FIELDS).
  static constexpr unsigned kMaxFields = isa::kMaxFields;
  struct Decoded {
    bool out_valid = false;
    bool illegal = false;  // the illegal output, or out_valid low
    unsigned queue = 0;
    unsigned field_count = 0;
    uint32_t fields[kMaxFields] = {};
  };

  // An RTL plant of npu_decoder runs its variant (the rtl-mismatch finding's tests).
  // `clk` (trace mode only, else nullptr): wait out each decode cycle by cycle and mirror the
  // pins into `trace`.
  RtlDecoder(sc_core::sc_module_name name, sc_core::sc_clock* clk, sc_core::sc_trace_file* trace,
             Plant plant = {});
  ~RtlDecoder() override;
  // Drives the word on a falling edge, returns the registered outputs one cycle later.
  // Call from an SC_THREAD only.
  Decoded decode(std::span<const uint8_t> word);

  // The Verilated model (one per variant, rtl_blocks.cc).
  class Model {
   public:
    virtual ~Model() = default;
    virtual void reset() = 0;                           // two cycles with rst_n low
    virtual Decoded decode(const uint32_t* words) = 0;  // one cycle with in_valid high (8 words)
  };

 private:
  void wait_until(const sc_core::sc_time& t);
  void mirror_outputs(const Decoded& d);

  sc_core::sc_clock* clk_;
  std::unique_ptr<Model> model_;
  bool reset_done_ = false;

  // Mirrors of the pins, written only in trace mode.
  sc_core::sc_signal<bool> in_valid{"in_valid"};
  sc_core::sc_signal<sc_dt::sc_bv<256>> instr{"instr"};
  sc_core::sc_signal<bool> out_valid{"out_valid"};
  sc_core::sc_signal<bool> illegal{"illegal"};
  sc_core::sc_signal<uint32_t> queue_id{"queue_id"};
  sc_core::sc_signal<uint32_t> field_count{"field_count"};
  sc_core::sc_signal<sc_dt::sc_bv<32 * kMaxFields>> fields{"fields"};
};

}  // namespace npuforge::sim::sc_model
