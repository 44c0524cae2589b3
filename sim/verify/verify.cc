#include "sim/verify/verify.h"

#include <memory>

#include <fmt/core.h>

#include "sim/backend.h"
#include "sim/golden.h"
#include "sim/semantics.h"
#include "util/error.h"

namespace npuforge::sim::verify {
namespace {

// The one place that chooses a backend.
std::unique_ptr<Backend> make_backend(const Options& o, const Semantics& sem) {
  if (o.backend == BackendKind::Sequential) {
    if (o.rtl || !o.trace.empty() || o.plant.any())
      throw Error("--rtl, --trace and --plant need --backend systemc");
    return std::make_unique<SequentialBackend>(sem);
  }
  sc_model::ScOptions sc;
  sc.sram = o.rtl ? sc_model::SramModel::Rtl : sc_model::SramModel::Tlm;
  sc.trace_path = o.trace;
  sc.plant = o.plant;
  // The final DDR stays memory over the program's image: the golden compare then looks at
  // the pages the run wrote, where two images cost a page fault per 4 KiB of the image, twice.
  sc.images = false;
  return std::make_unique<sc_model::ScBackend>(sem, sc);
}

// The final DDR compared with the golden model's and the expected image; the image itself
// when asked for.
void judge_ddr(const bundle::Program& program, const Semantics& sem, const Options& o, RunResult& result,
               sc_model::ScBackend* sc, Checkers& checkers, Verdict& v) {
  const GoldenMemory golden = run_golden_memory(program, sem);
  std::optional<Ddr> ddr;
  if (sc) {
    ddr = sc->take_ddr();
    if (!ddr) throw Error("SystemC model: no final DDR");
    check_ddr(program, sem, golden.memory.ddr, *ddr, "the golden model", checkers);
  } else {
    check_ddr(program, sem, golden.memory.ddr, result.ddr, "the golden model", checkers);
  }
  if (!o.expect_ddr && !o.keep_final_ddr) return;
  std::vector<uint8_t> image = ddr ? ddr->image() : std::move(result.ddr);
  if (o.expect_ddr) check_ddr(program, sem, *o.expect_ddr, image, o.expect_ddr_name, checkers);
  if (o.keep_final_ddr) v.final_ddr = std::move(image);
}

}  // namespace

std::string_view to_string(BackendKind kind) {
  return kind == BackendKind::Sequential ? "sequential" : "systemc";
}

BackendKind backend_named(std::string_view name) {
  for (const BackendKind k : {BackendKind::SystemC, BackendKind::Sequential})
    if (to_string(k) == name) return k;
  throw Error(fmt::format("--backend: unknown backend '{}' (available: systemc, sequential)", name));
}

bool pass_rule(const Verdict& v) {
  return v.findings == 0 && v.completed && (!v.rtl || v.rtl->decoder_mismatches == 0);
}

Verdict run(const bundle::Program& program, const Options& o) {
  if (!program.isa) throw Error(fmt::format("program {} has no ISA", program.name));
  const Semantics sem(*program.isa);
  Checkers checkers(program, sem, CheckerOptions{.max_errors = o.max_errors});
  const std::unique_ptr<Backend> backend = make_backend(o, sem);
  auto* sc = dynamic_cast<sc_model::ScBackend*>(backend.get());
  if (sc) sc_model::restart_kernel();  // a previous run used the kernel: a fresh one, as in a fresh process
  RunResult result = backend->run(program, checkers);
  Verdict v;
  judge_ddr(program, sem, o, result, sc, checkers, v);
  v.program = program.name;
  v.backend = std::string(backend->name());
  v.completed = result.completed;
  v.program_instructions = program.instrs.size();
  v.instructions = result.instructions;
  v.cycles = result.cycles;
  v.busy_cycles = result.busy_cycles;
  v.findings = checkers.total();
  for (size_t k = 0; k < kNumFindingKinds; ++k) v.by_kind[k] = checkers.count(static_cast<FindingKind>(k));
  v.kept = checkers.findings();
  if (sc && o.rtl) v.rtl = sc->stats();
  v.pass = pass_rule(v);
  return v;
}

std::string report(const Verdict& v) {
  std::string s = fmt::format("{} {}: {} of {} instructions, {} cycles ({} backend)\n", v.pass ? "PASS" : "FAIL",
                              v.program, v.instructions, v.program_instructions, v.cycles, v.backend);
  if (!v.completed) s += "  run stopped early (deadlock): some instructions never retired\n";
  for (unsigned q = 0; q < isa::kNumQueues; ++q) {
    const double util = v.cycles ? 100.0 * static_cast<double>(v.busy_cycles[q]) / static_cast<double>(v.cycles) : 0.0;
    s += fmt::format("  {:<8} busy {:>10} cycles  {:5.1f}%\n", isa::to_string(static_cast<isa::Queue>(q)),
                     v.busy_cycles[q], util);
  }
  s += "  " + findings_summary(v.findings, v.by_kind, v.kept);
  if (v.rtl && v.rtl->decoded_words != 0) {
    const sc_model::ScStats& st = *v.rtl;
    s += fmt::format("  rtl: {} words decoded, {} decoder mismatches, {} scratchpad words, {} bank conflicts, "
                     "{} compute tiles in {} cycles, {} monitor violations\n",
                     st.decoded_words, st.decoder_mismatches, st.sram_words, st.sram_bank_conflicts, st.compute_tiles,
                     st.compute_cycles, st.monitor_errors);
    for (const auto& m : st.decoder_messages) s += fmt::format("  [rtl-decoder] {}\n", m);
  }
  return s;
}

}  // namespace npuforge::sim::verify
