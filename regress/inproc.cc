#include "regress/inproc.h"

#include <fmt/core.h>

#include "isa/isa.h"
#include "sim/checkers.h"
#include "sim/golden.h"
#include "sim/sc_model/sc_backend.h"
#include "sim/semantics.h"
#include "util/error.h"

namespace npuforge::regress {

sim::Program to_sim_program(const isa::Isa& isa, const gen::GeneratedProgram& g, const std::string& name) {
  sim::Program p;
  p.name = name;
  p.isa = &isa;
  p.instrs = g.instrs;
  p.memmap = g.memmap();
  p.ddr_init = g.ddr_image;
  p.config = g.npu;
  if (const std::string err = p.validate(); !err.empty()) throw Error(err);
  return p;
}

SimVerdict simulate(const sim::Program& program, bool rtl, const Plant& plant, uint64_t max_errors) {
  const sim::Semantics sem(*program.isa);
  sim::Checkers checkers(program, sem, sim::CheckerOptions{.max_errors = max_errors});
  sim::sc_model::ScOptions sc;
  sc.sram = rtl ? sim::sc_model::SramModel::Rtl : sim::sc_model::SramModel::Tlm;
  sc.plant = plant;
  sim::sc_model::ScBackend backend(sem, sc);
  const sim::RunResult result = backend.run(program, checkers);
  // The golden DDR stays sparse memory: building its image to compare cost a page fault per
  // 4 KiB of the seed's DDR image.
  const sim::GoldenMemory golden = sim::run_golden_memory(program, sem);
  sim::check_ddr(program, sem, golden.memory.ddr, result.ddr, "the golden model", checkers);
  const bool rtl_ok = backend.stats().decoder_mismatches == 0;
  SimVerdict v;
  v.pass = checkers.clean() && result.completed && rtl_ok;
  v.cycles = result.cycles;
  v.findings = checkers.total();
  if (!checkers.findings().empty()) v.first_finding = sim::format(checkers.findings().front());
  v.report = fmt::format("{} {}: {} of {} instructions, {} cycles ({} backend)\n", v.pass ? "PASS" : "FAIL",
                         program.name, result.instructions, program.instrs.size(), result.cycles, backend.name());
  if (!result.completed) v.report += "  run stopped early: some instructions never started\n";
  v.report += "  " + checkers.summary();
  return v;
}

}  // namespace npuforge::regress
