#pragma once
// Simulating a generated program inside the regression worker, without files: the same
// steps and verdict as `npuforge sim --json` (all checkers, the SystemC model, the golden
// model's DDR compared with the backend's), so a seed passes or fails identically on the
// in-process and the file-based path (tests/regress/inproc_test.cc compares both).
#include <cstdint>
#include <string>

#include "gen/generator.h"
#include "sim/program.h"
#include "util/plant.h"

namespace npuforge::regress {

struct SimVerdict {
  bool pass = false;
  uint64_t cycles = 0;
  uint64_t findings = 0;      // all findings, counted
  std::string first_finding;  // formatted like `npuforge sim`'s first line of findings
  std::string report;         // the text report `npuforge sim` prints (for PREFIX.sim.log)
};

// The bundle `npuforge sim` would load from the files `npuforge gen` writes for `program`
// (named `name`, the files' stem); throws npuforge::Error when the pieces disagree.
sim::Program to_sim_program(const isa::Isa& isa, const gen::GeneratedProgram& program, const std::string& name);

// The same bundle with the instructions and the DDR image moved in from `program` and moved
// back when this goes out of scope (also on an exception), for a worker that writes the
// program's files after a failing simulation: a copy cost a page fault per 4 KiB of the
// image, every seed. `map` is program.memmap() (the worker has built it for coverage).
class LentProgram {
 public:
  LentProgram(const isa::Isa& isa, gen::GeneratedProgram& program, allocator::MemMap map, const std::string& name);
  ~LentProgram() { give_back(); }
  LentProgram(const LentProgram&) = delete;
  LentProgram& operator=(const LentProgram&) = delete;
  const sim::Program& program() const { return sim_; }

 private:
  void give_back();
  gen::GeneratedProgram& gen_;
  sim::Program sim_;
};

// Runs `program` on the SystemC model (TLM scratchpad, or the Verilated one with `rtl`) with
// all checkers. Each call simulates on a fresh SystemC kernel (sim::sc_model::restart_kernel),
// so a persistent worker may call it once per seed (regress/worker_pool.h) and get the
// verdict a fresh process gives.
SimVerdict simulate(const sim::Program& program, bool rtl, const Plant& plant = {}, uint64_t max_errors = 20);

}  // namespace npuforge::regress
