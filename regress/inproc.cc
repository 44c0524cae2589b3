#include "regress/inproc.h"

#include <optional>

#include <fmt/core.h>

#include "isa/isa.h"
#include "sim/checkers.h"
#include "sim/golden.h"
#include "sim/sc_model/sc_backend.h"
#include "sim/semantics.h"
#include "util/error.h"

namespace npuforge::regress {

SimVerdict simulate(const bundle::Program& program, bool rtl, const Plant& plant, uint64_t max_errors) {
  sim::sc_model::restart_kernel();  // a worker's previous seed used the kernel: a fresh one, as in a fresh process
  const sim::Semantics sem(*program.isa);
  sim::Checkers checkers(program, sem, sim::CheckerOptions{.max_errors = max_errors});
  sim::sc_model::ScOptions sc;
  sc.sram = rtl ? sim::sc_model::SramModel::Rtl : sim::sc_model::SramModel::Tlm;
  sc.plant = plant;
  sc.images = false;
  sim::sc_model::ScBackend backend(sem, sc);
  const sim::RunResult result = backend.run(program, checkers);
  // Both DDRs stay sparse memory over the program's image: building the images to compare
  // cost a page fault per 4 KiB of the seed's DDR image, twice.
  const sim::GoldenMemory golden = sim::run_golden_memory(program, sem);
  const std::optional<sim::Ddr> ddr = backend.take_ddr();
  if (!ddr) throw Error("SystemC model: no final DDR");  // images off hands it over
  sim::check_ddr(program, sem, golden.memory.ddr, *ddr, "the golden model", checkers);
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
