#pragma once
// The SystemC/TLM-2.0 backend of the simulator (see sim/backend.h for the interface).
//
//   fetch/dispatch --TLM--> instruction ROM
//        | sc_fifo per queue (LOAD, COMPUTE, STORE), tokens between them
//        v
//   load DMA | compute engine | store DMA  --TLM--> scratchpad (TLM model or Verilated RTL)
//                                          --TLM--> DDR
//
// The three queue engines run concurrently as SC_THREADs and honour the wait/signal tokens;
// SYNC and HALT drain all queues. One cycle is 1 ns of simulated time. With `rtl`, the
// scratchpad is the Verilated rtl_stubs/npu_scratchpad.sv, every fetched word is also decoded
// by rtl_stubs/npu_decoder.sv and compared field by field with the C++ decode (rtl_blocks.h),
// and GEMM and ELTWISE run on rtl_stubs/npu_compute.sv (rtl_compute.h); all three are plain
// C++ Verilated models driven directly from the threads that use them.
//
// ONE SIMULATION PER KERNEL: SystemC elaborates once per kernel, so run() (or run_together)
// may be called once per kernel; a second call throws npuforge::Error unless
// restart_kernel() installed a fresh kernel in between. A process therefore runs any number
// of programs one after the other, each on a fresh kernel (sim::verify::run does that for
// every run: sim/verify/verify.h), or several side by side in one elaboration with
// run_together(). The library defines a weak sc_main that is never called (libsystemc.so
// needs the symbol); programs keep their own main() and the simulation is started with
// sc_start from ordinary code.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "sim/backend.h"
#include "sim/memory.h"
#include "util/plant.h"

namespace npuforge::sim::sc_model {

enum class SramModel : uint8_t {
  Tlm,  // sim::Sram behind a TLM target
  Rtl,  // Verilated npu_scratchpad (and decoder and compute unit): the variant of an RTL plant
};

struct ScOptions {
  SramModel sram = SramModel::Tlm;
  // Decode every fetched word with the Verilated npu_decoder too (RTL mode only).
  bool rtl_decoder = true;
  // Run GEMM and ELTWISE through the Verilated npu_compute (RTL mode only).
  bool rtl_compute = true;
  // Waveform file (.vcd): dispatch pc, per-queue busy/instruction, and in RTL mode the
  // clock and every RTL port. Empty: none.
  std::string trace_path;
  // Deadlock watchdog: no instruction retires for this many cycles beyond the expected
  // duration of those in flight -> a `deadlock` finding naming each queue's state, and the
  // result has completed == false. 0: the NPU config's deadlock_cycles.
  uint64_t watchdog_cycles = 0;
  // A planted bug (util/plant.h): model plants are honoured by the engines; an RTL plant
  // makes the block of its rtl_stubs/ module run the plant's Verilated variant (needs Rtl).
  Plant plant;
  // false: RunResult::ddr and ::sram stay empty and the final DDR is handed over as memory
  // (ScOutput::ddr, ScBackend::take_ddr), to be compared page by page with the golden
  // model's (check_ddr on two Ddr). A regression seed's DDR image is 1 MiB of which a run
  // writes a few pages; building the two images cost 512 page faults per seed.
  bool images = true;
};

struct ScStats {
  uint64_t decoded_words = 0;        // words decoded by the RTL decoder
  uint64_t decoder_mismatches = 0;   // words whose RTL decode differs from the C++ one
  std::vector<std::string> decoder_messages;  // the first few mismatches, one line each
  uint64_t sram_words = 0;           // RTL scratchpad port transfers (BANK_BYTES each)
  uint64_t sram_bank_conflicts = 0;  // reads retried because a write hit the same bank
  uint64_t compute_tiles = 0;        // GEMM tiles and ELTWISE beats run by the RTL compute unit
  uint64_t compute_cycles = 0;       // cycles the RTL compute unit was clocked
  uint64_t monitor_errors = 0;       // RTL output-port monitor violations (also rtl findings)
};

struct ScOutput {
  RunResult result;
  ScStats stats;
  std::optional<Ddr> ddr;  // the final DDR when ScOptions::images is off (it references the program's image)
};

// The byte distance at which the rtl-scratchpad-stuck-bit plant aliases: addresses a and
// a + this map to the same scratchpad word (the stuck word-address bit times `config`'s bank
// word size).
uint64_t stuck_bit_alias_bytes(const isa::NpuConfig& config);
// False once a simulation has been elaborated on the current SystemC kernel (until
// restart_kernel() installs a fresh one).
bool can_simulate();

// For a process that simulates many programs one after the other (sim::verify::run, which the
// regression worker, shrink and run-model call once per program: sim/verify/verify.h):
// throws away the used SystemC kernel and installs a fresh one, so
// that the next run_together / ScBackend::run elaborates and starts at time 0 exactly as in a
// fresh process (same cycles, findings and stats). A no-op while can_simulate(). Every
// SystemC object of the previous run must already be gone: run_together destroys its tops
// before returning. A program that deadlocked left threads blocked mid-instruction; they
// are discarded with their kernel rather than reset, which is why this replaces the kernel
// instead of reusing one elaboration (no module has to know how to reset itself, and no
// seed's leftovers can reach the next seed).
void restart_kernel();

class ScBackend : public Backend {
 public:
  explicit ScBackend(const Semantics& sem, ScOptions options = {});
  std::string_view name() const override;
  // Once per kernel (see above).
  RunResult run(const bundle::Program& program, Checkers& checkers) override;
  const ScStats& stats() const { return stats_; }
  // The final DDR of the last run with ScOptions::images off (empty otherwise); moved out.
  std::optional<Ddr> take_ddr() { return std::exchange(ddr_, std::nullopt); }

 private:
  const Semantics* sem_;
  ScOptions options_;
  ScStats stats_;
  std::optional<Ddr> ddr_;
};

struct ScJob {
  const bundle::Program* program = nullptr;
  Checkers* checkers = nullptr;
  ScOptions options;
};
// Elaborates one NPU per job in the same SystemC kernel and simulates them together (they
// do not interact). Checkers get on_end() after the run. Once per kernel.
std::vector<ScOutput> run_together(const Semantics& sem, std::span<const ScJob> jobs);

}  // namespace npuforge::sim::sc_model
