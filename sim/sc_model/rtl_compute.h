#pragma once
// The Verilated rtl_stubs/npu_compute.sv (GEMM MAC array + element-wise unit) behind a
// blocking call for the compute engine. The engine fetches operands over TLM as usual and
// hands them here instead of to sim/semantics.cc, so with --rtl the golden compare checks an
// arithmetic implementation written independently of the golden model's.
//
// The unit has its own gated clock: it is clocked only while a tile runs (an idle compute
// unit costs the co-simulation nothing). Inputs change while the clock is low and are
// sampled on its rising edge, half a cycle later.
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <type_traits>

#include <systemc>

#include "isa/instruction.h"
#include "sim/sc_model/sc_backend.h"
#include "sim/semantics.h"

namespace npuforge::sim::sc_model {

// The sc_signal value type Verilator --sc gives a port of W bits.
template <unsigned W>
using RtlPort = std::conditional_t<
    W == 1, bool,
    std::conditional_t<(W <= 32), uint32_t, std::conditional_t<(W <= 64), uint64_t, sc_dt::sc_bv<W>>>>;

class RtlCompute : public sc_core::sc_module {
 public:
  static constexpr unsigned kRows = NPUFORGE_COMPUTE_ROWS;  // the Verilated model's parameters
  static constexpr unsigned kCols = NPUFORGE_COMPUTE_COLS;
  static constexpr unsigned kLanes = NPUFORGE_COMPUTE_LANES;

  // `variant` picks a planted-bug model for MacSign / NoSaturation / RequantRound, else the
  // correct one. `monitor` receives one line per output-port violation (valid strobes).
  RtlCompute(sc_core::sc_module_name name, RtlVariant variant, sc_core::sc_trace_file* trace,
             std::function<void(std::string)> monitor);
  ~RtlCompute() override;

  // True for the instructions this unit computes (GEMM and ELTWISE).
  static bool handles(Op op) { return op == Op::Gemm || op == Op::Eltwise; }
  // Computes `instr` on operand buffers exactly like Semantics::compute, clocking the RTL.
  // Call from an SC_THREAD.
  void compute(const Semantics& sem, const isa::Instruction& instr, const OperandBuffers& buffers);

  uint64_t tiles() const { return tiles_; }
  uint64_t cycles() const { return cycles_; }

  sc_core::sc_signal<bool> clk{"compute_clk"};
  sc_core::sc_signal<bool> rst_n{"rst_n"};
  sc_core::sc_signal<bool> mac_en{"mac_en"};
  sc_core::sc_signal<bool> mac_first{"mac_first"};
  sc_core::sc_signal<RtlPort<8 * kRows>> a_col{"a_col"};
  sc_core::sc_signal<RtlPort<8 * kCols>> b_row{"b_row"};
  sc_core::sc_signal<RtlPort<32 * kCols>> bias{"bias"};
  sc_core::sc_signal<RtlPort<32 * kCols>> scale{"scale"};
  sc_core::sc_signal<RtlPort<6 * kCols>> shift{"shift"};
  sc_core::sc_signal<bool> relu{"relu"};
  sc_core::sc_signal<bool> gemm_out_req{"gemm_out_req"};
  sc_core::sc_signal<bool> gemm_valid{"gemm_valid"};
  sc_core::sc_signal<RtlPort<8 * kRows * kCols>> gemm_out{"gemm_out"};
  sc_core::sc_signal<bool> elt_en{"elt_en"};
  sc_core::sc_signal<uint32_t> elt_op{"elt_op"};
  sc_core::sc_signal<RtlPort<8 * kLanes>> elt_a{"elt_a"};
  sc_core::sc_signal<RtlPort<8 * kLanes>> elt_b{"elt_b"};
  sc_core::sc_signal<uint32_t> elt_scale{"elt_scale"};
  sc_core::sc_signal<uint32_t> elt_shift{"elt_shift"};
  sc_core::sc_signal<uint32_t> elt_lo{"elt_lo"};
  sc_core::sc_signal<uint32_t> elt_hi{"elt_hi"};
  sc_core::sc_signal<bool> elt_valid{"elt_valid"};
  sc_core::sc_signal<RtlPort<8 * kLanes>> elt_out{"elt_out"};

 private:
  void tick();  // one cycle of the gated clock
  void reset_once();
  void gemm(const Semantics::GemmSlots& s, const isa::Instruction& instr, const OperandBuffers& b);
  void eltwise(const Semantics::EltwiseSlots& s, const isa::Instruction& instr, const OperandBuffers& b);
  void expect_valid(bool valid, const char* port);

  std::unique_ptr<sc_core::sc_module> model_;
  std::function<void(std::string)> monitor_;
  bool reset_done_ = false;
  uint64_t tiles_ = 0;
  uint64_t cycles_ = 0;
};

}  // namespace npuforge::sim::sc_model
