#pragma once
// Simulating a generated program inside the regression worker, without files: the same
// steps and verdict as `npuforge sim --json` (all checkers, the SystemC model, the golden
// model's DDR compared with the backend's), so a seed passes or fails identically on the
// in-process and the file-based path (tests/regress/inproc_test.cc compares both).
#include <cstdint>
#include <string>

#include "bundle/program.h"
#include "util/plant.h"

namespace npuforge::regress {

struct SimVerdict {
  bool pass = false;
  uint64_t cycles = 0;
  uint64_t findings = 0;      // all findings, counted
  std::string first_finding;  // formatted like `npuforge sim`'s first line of findings
  std::string report;         // the text report `npuforge sim` prints (for PREFIX.sim.log)
};

// Runs `program` on the SystemC model (TLM scratchpad, or the Verilated one with `rtl`) with
// all checkers. Each call simulates on a fresh SystemC kernel (sim::sc_model::restart_kernel),
// so a persistent worker may call it once per seed (regress/worker_pool.h) and get the
// verdict a fresh process gives.
SimVerdict simulate(const bundle::Program& program, bool rtl, const Plant& plant = {}, uint64_t max_errors = 20);

}  // namespace npuforge::regress
