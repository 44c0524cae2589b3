#pragma once
// One run path for every tool that simulates a program and judges it: `npuforge sim`, the
// regression workers, shrink, run-model and kill-rate. run() simulates the program on a
// backend with every checker, compares the final DDR with the golden model's (and an expected
// image, when given) and returns the verdict as a value: the pass rule, the report text and
// the JSON form (verdict_json.h) exist here once.
//
// A SystemC run starts on a fresh kernel (sim::sc_model::restart_kernel), so one process may
// call run() any number of times and get, each time, the verdict a fresh process gives.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/checkers.h"
#include "bundle/program.h"
#include "sim/sc_model/sc_backend.h"
#include "util/plant.h"

namespace npuforge::sim::verify {

enum class BackendKind : uint8_t {
  SystemC,     // the SystemC/TLM-2.0 model (sim/sc_model), optionally with the Verilated RTL
  Sequential,  // the timing model without SystemC (sim/backend.h)
};
std::string_view to_string(BackendKind kind);  // "systemc", "sequential"
// The backend named `name`; throws npuforge::Error naming the choices.
BackendKind backend_named(std::string_view name);

struct Options {
  BackendKind backend = BackendKind::SystemC;
  bool rtl = false;  // systemc: the Verilated scratchpad, decoder and compute unit in the loop
  Plant plant;        // systemc: a planted model bug, or with rtl an RTL one (util/plant.h)
  std::string trace;  // systemc: VCD waveform file; empty: none
  uint64_t max_errors = 20;  // findings kept (all are counted); 0 = all
  // Also compare the final DDR with this image (named `expect_ddr_name` in the finding).
  const std::vector<uint8_t>* expect_ddr = nullptr;
  std::string expect_ddr_name;
  bool keep_final_ddr = false;  // fill Verdict::final_ddr
};

struct Verdict {
  std::string program;  // the program's name
  std::string backend;  // the backend's own name ("systemc-tlm", "systemc-rtl", "sequential", ...)
  bool pass = false;    // pass_rule() of the fields below
  bool completed = true;              // false when the run stopped early (deadlock)
  uint64_t program_instructions = 0;  // instructions in the program
  uint64_t instructions = 0;          // instructions completed
  uint64_t cycles = 0;
  std::array<uint64_t, isa::kNumQueues> busy_cycles{};  // per queue (load, compute, store)
  uint64_t findings = 0;  // all findings, counted
  KindCounts by_kind{};   // all findings, counted per kind
  std::vector<Finding> kept;  // the first Options::max_errors findings, in order
  // The RTL's counters (a SystemC run with the Verilated RTL in the loop): the decoder's
  // mismatches fail the run.
  std::optional<sc_model::ScStats> rtl;
  std::vector<uint8_t> final_ddr;  // with Options::keep_final_ddr: the final DDR image from address 0

  const Finding* first() const { return kept.empty() ? nullptr : &kept.front(); }
  uint64_t count(FindingKind kind) const { return by_kind[static_cast<size_t>(kind)]; }
};

// The one pass rule: no finding, the run completed, and the RTL decoder (when it ran) agreed
// with the C++ one on every word.
bool pass_rule(const Verdict& v);

// Runs `program` as described above. Throws npuforge::Error for options that do not go
// together (rtl, trace or a plant on the sequential backend; an RTL plant without rtl) and
// for a program the backend refuses.
Verdict run(const bundle::Program& program, const Options& options);

// The text `npuforge sim` prints: PASS/FAIL with counts, queue utilisation, the findings
// (counts per kind, the kept ones) and the RTL's counters.
std::string report(const Verdict& v);

}  // namespace npuforge::sim::verify
