#pragma once
// The Verilated rtl_stubs/npu_compute.sv (GEMM MAC array + element-wise unit) behind a
// blocking call for the compute engine. The engine fetches operands over TLM as usual and
// hands them here instead of to sim/semantics.cc, so with --rtl the golden compare checks an
// arithmetic implementation written independently of the golden model's.
//
// The unit is a plain C++ (--cc) Verilated model driven directly from the engine's thread:
// set the inputs, eval() a rising and a falling clock edge, read the registered outputs.
// Clocking a --sc model through sc_signals cost ~1.6 us of SystemC kernel work per cycle,
// more than the whole rest of the co-simulation; the unit talks to nothing else in the
// model, so nothing observes its pins between two calls. Simulated time still advances by
// exactly one cycle per RTL clock: compute() runs the tile's cycles in zero time, then
// waits that many cycles once. With a trace file open it instead waits per cycle and
// mirrors the strobes into the VCD, so waveforms keep one value per cycle.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include <systemc>

#include "isa/instruction.h"
#include "sim/sc_model/sc_backend.h"
#include "sim/semantics.h"

namespace npuforge::sim::sc_model {

class RtlCompute : public sc_core::sc_module {
 public:
  static constexpr unsigned kRows = NPUFORGE_COMPUTE_ROWS;  // the Verilated model's parameters
  static constexpr unsigned kCols = NPUFORGE_COMPUTE_COLS;
  static constexpr unsigned kLanes = NPUFORGE_COMPUTE_LANES;

  // An RTL plant of npu_compute runs its Verilated variant, anything else the correct model.
  // `monitor` receives one line per output-port violation (valid strobes).
  RtlCompute(sc_core::sc_module_name name, Plant plant, sc_core::sc_trace_file* trace,
             std::function<void(std::string)> monitor);
  ~RtlCompute() override;

  // True for the instructions this unit computes (GEMM and ELTWISE).
  static bool handles(Op op) { return op == Op::Gemm || op == Op::Eltwise; }
  // Computes `instr` on operand buffers exactly like Semantics::compute, clocking the RTL;
  // returns after the RTL's cycles of simulated time. Call from an SC_THREAD.
  void compute(const Semantics& sem, const isa::Instruction& instr, const OperandBuffers& buffers);

  uint64_t tiles() const { return tiles_; }
  // RTL clock cycles so far. Inside compute() the cycles count as simulated time passes (as
  // a per-cycle clock would), so the deadlock watchdog sees steady progress.
  uint64_t cycles() const;

  // The strobes after one clock cycle (the trace's view of the pins).
  struct Strobes {
    bool mac_en, mac_first, gemm_out_req, gemm_valid, elt_en, elt_valid;
  };
  class Model;  // the Verilated model and its per-cycle driver (rtl_compute.cc)

 private:
  void cycle_done(const Strobes& s);  // after each RTL clock cycle (called by Model)

  std::unique_ptr<Model> model_;
  std::function<void(std::string)> monitor_;
  bool tracing_ = false;
  bool reset_done_ = false;
  uint64_t tiles_ = 0;
  uint64_t cycles_ = 0;
  // The compute() call in progress: its first cycle and cycles_ when it started.
  bool in_call_ = false;
  uint64_t call_start_cycle_ = 0;
  uint64_t call_base_cycles_ = 0;

  // Mirrors of the strobes, written only while tracing.
  sc_core::sc_signal<bool> clk_{"compute_clk"};
  sc_core::sc_signal<bool> mac_en_{"mac_en"};
  sc_core::sc_signal<bool> mac_first_{"mac_first"};
  sc_core::sc_signal<bool> gemm_out_req_{"gemm_out_req"};
  sc_core::sc_signal<bool> gemm_valid_{"gemm_valid"};
  sc_core::sc_signal<bool> elt_en_{"elt_en"};
  sc_core::sc_signal<bool> elt_valid_{"elt_valid"};
};

}  // namespace npuforge::sim::sc_model
