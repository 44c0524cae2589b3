// npuforge sim: run a program on a simulation backend with all checkers, compare the final
// DDR image with the golden model, print PASS/FAIL, cycles, queue utilisation and findings.
#include <memory>
#include <string>

#include <fmt/core.h>

#include "bundle/ddr_image.h"
#include "bundle/files.h"
#include "isa/isa.h"
#include "isa/npu_config.h"
#include "util/file_io.h"
#include "util/text.h"
#include "sim/backend.h"
#include "sim/checkers.h"
#include "sim/golden.h"
#include "sim/sc_model/sc_backend.h"
#include "tools/command.h"
#include "util/plant.h"

namespace npuforge::tools {
namespace {

struct SimOptions {
  std::string program;
  std::string memmap;
  std::string ddr;
  std::string npu;
  std::string isa;
  uint64_t max_errors = 20;
  std::string expect_ddr;
  std::string out_ddr;
  std::string backend = "systemc";
  bool rtl = false;    // systemc: Verilated scratchpad + decoder in the loop
  std::string trace;   // systemc: VCD waveform file
  std::string rtl_variant = "none";  // systemc: a planted RTL bug (implies --rtl)
  std::string json;    // machine-readable verdict for scripts and the regression runner
  std::string plant;   // systemc: a planted model or RTL bug by name (npuforge plants)
};

// The one place that chooses a backend by name (the SystemC backends register here too).
std::unique_ptr<sim::Backend> make_backend(const SimOptions& o, const sim::Semantics& sem) {
  const Plant plant = parse_plant(o.plant);
  if (o.backend == "sequential" && !o.rtl && o.trace.empty() && o.rtl_variant == "none" && !plant.any())
    return std::make_unique<sim::SequentialBackend>(sem);
  if (o.backend == "systemc" || o.backend == "sequential") {
    if (o.backend == "sequential") throw Error("--rtl, --trace and --plant need --backend systemc");
    sim::sc_model::ScOptions sc;
    sc.sram = o.rtl ? sim::sc_model::SramModel::Rtl : sim::sc_model::SramModel::Tlm;
    sc.trace_path = o.trace;
    sc.rtl_variant = sim::sc_model::rtl_variant_from_name(o.rtl_variant);
    sc.plant = plant;
    return std::make_unique<sim::sc_model::ScBackend>(sem, sc);
  }
  throw Error(fmt::format("--backend: unknown backend '{}' (available: systemc, sequential)", o.backend));
}

// The RTL decoder's verdict (systemc --rtl): false when it disagreed with the C++ decoder.
bool report_rtl(const sim::Backend& backend) {
  const auto* sc = dynamic_cast<const sim::sc_model::ScBackend*>(&backend);
  if (!sc || sc->stats().decoded_words == 0) return true;
  const auto& st = sc->stats();
  fmt::print("  rtl: {} words decoded, {} decoder mismatches, {} scratchpad words, {} bank conflicts, "
             "{} compute tiles in {} cycles, {} monitor violations\n",
             st.decoded_words, st.decoder_mismatches, st.sram_words, st.sram_bank_conflicts, st.compute_tiles,
             st.compute_cycles, st.monitor_errors);
  for (const auto& m : st.decoder_messages) fmt::print("  [rtl-decoder] {}\n", m);
  return st.decoder_mismatches == 0;
}

void print_report(const bundle::Program& program, const sim::Backend& backend,
                  const sim::RunResult& r, const sim::Checkers& checkers, bool pass) {
  fmt::print("{} {}: {} of {} instructions, {} cycles ({} backend)\n", pass ? "PASS" : "FAIL",
             program.name, r.instructions, program.instrs.size(), r.cycles, backend.name());
  if (!r.completed) fmt::print("  run stopped early (deadlock): some instructions never retired\n");
  for (unsigned q = 0; q < isa::kNumQueues; ++q) {
    const double util = r.cycles ? 100.0 * static_cast<double>(r.busy_cycles[q]) / static_cast<double>(r.cycles) : 0.0;
    fmt::print("  {:<8} busy {:>10} cycles  {:5.1f}%\n",
               isa::to_string(static_cast<isa::Queue>(q)), r.busy_cycles[q], util);
  }
  fmt::print("  {}", checkers.summary());
}

// The verdict as JSON: what a regression runner needs without parsing the text report.
std::string verdict_json(const bundle::Program& program, const sim::Backend& backend, const sim::RunResult& r,
                         const sim::Checkers& checkers, bool pass) {
  std::string kinds;
  for (const auto& f : checkers.findings())
    if (kinds.find(fmt::format("\"{}\"", sim::to_string(f.kind))) == std::string::npos)
      kinds += fmt::format("{}\"{}\": {}", kinds.empty() ? "" : ", ", sim::to_string(f.kind), checkers.count(f.kind));
  const std::string first = checkers.findings().empty() ? "" : sim::format(checkers.findings().front());
  return fmt::format(
      "{{\"program\": {}, \"pass\": {}, \"completed\": {}, \"backend\": {}, \"instructions\": {}, "
      "\"cycles\": {}, \"busy_cycles\": {{\"load\": {}, \"compute\": {}, \"store\": {}}}, \"findings\": {}, "
      "\"by_kind\": {{{}}}, \"first_finding\": {}}}\n",
      util::json_quote(program.name), pass, r.completed, util::json_quote(backend.name()), r.instructions,
      r.cycles, r.busy_cycles[0], r.busy_cycles[1], r.busy_cycles[2], checkers.total(), kinds,
      util::json_quote(first));
}

int run_sim(const SimOptions& o) {
  const isa::Isa custom = o.isa.empty() ? isa::Isa{} : isa::Isa::load_file(o.isa);
  const isa::Isa& the_isa = o.isa.empty() ? isa::builtin_isa() : custom;
  const isa::NpuConfig config = isa::load_npu_config(o.npu).config;
  const bundle::Program program =
      bundle::read_program(the_isa, {.binary = o.program, .memmap = o.memmap, .ddr = o.ddr}, config);
  const sim::Semantics sem(the_isa);
  sim::Checkers checkers(program, sem, sim::CheckerOptions{.max_errors = o.max_errors});

  auto backend = make_backend(o, sem);
  const sim::RunResult result = backend->run(program, checkers);
  const sim::GoldenResult golden = sim::run_golden(program, sem);
  sim::check_ddr(program, sem, golden.ddr, result.ddr, "the golden model", checkers);
  if (!o.expect_ddr.empty()) {
    sim::check_ddr(program, sem, bundle::read_ddr_image(o.expect_ddr), result.ddr, o.expect_ddr, checkers);
  }
  if (!o.out_ddr.empty()) bundle::write_ddr_image(o.out_ddr, result.ddr);
  const auto* sc = dynamic_cast<const sim::sc_model::ScBackend*>(backend.get());
  const bool rtl_ok = !sc || sc->stats().decoder_mismatches == 0;
  const bool pass = checkers.clean() && result.completed && rtl_ok;
  print_report(program, *backend, result, checkers, pass);
  report_rtl(*backend);
  if (!o.json.empty()) util::write_file(o.json, verdict_json(program, *backend, result, checkers, pass), "JSON verdict");
  return pass ? kExitOk : kExitFinding;
}

}  // namespace

void add_sim_command(CLI::App& app, Runner& run) {
  auto opts = std::make_shared<SimOptions>();
  CLI::App* sub = app.add_subcommand("sim", "Simulate a program with all checkers and compare with the golden model");
  sub->add_option("program", opts->program, "program binary (<name>.bin)")->required()->check(CLI::ExistingFile);
  sub->add_option("--memmap", opts->memmap, "memory map (<name>.memmap.yaml); without it the shadow and overlap checkers are off")
      ->check(CLI::ExistingFile);
  sub->add_option("--ddr", opts->ddr, "initial DDR image (<name>.ddr.bin: raw bytes from address 0)")
      ->check(CLI::ExistingFile);
  sub->add_option("--npu", opts->npu, "NPU config (default: the built-in configs/npu/default.yaml)")
      ->check(CLI::ExistingFile);
  sub->add_option("--isa", opts->isa, "ISA file (default: the built-in isa/npu_isa.yaml)")->check(CLI::ExistingFile);
  sub->add_option("--max-errors", opts->max_errors, "findings to print (all are counted; 0 = all)");
  sub->add_option("--expect-ddr", opts->expect_ddr, "also compare the final DDR with this image")
      ->check(CLI::ExistingFile);
  sub->add_option("--out-ddr", opts->out_ddr, "write the final DDR image here");
  sub->add_option("--json", opts->json, "also write the verdict (pass, cycles, findings by kind, first finding) as JSON");
  sub->add_option("--backend", opts->backend,
                  "simulation backend: systemc (SystemC/TLM-2.0 model, default) or sequential");
  sub->add_flag("--rtl", opts->rtl, "systemc: run the Verilated scratchpad and decoder RTL in the loop");
  std::string variants;
  for (const auto& v : sim::sc_model::rtl_variants()) variants += fmt::format(", {}", v.name);
  sub->add_option("--rtl-variant", opts->rtl_variant,
                  fmt::format("systemc: run a planted RTL bug (implies --rtl): none{}", variants));
  sub->add_option("--plant", opts->plant,
                  "systemc: run with a planted model bug (or, with --rtl, an RTL one; see `npuforge plants`)");
  sub->add_option("--trace", opts->trace, "systemc: write a VCD waveform (dispatch, queues, RTL pins) to FILE");
  bind_runner(sub, opts, run, &run_sim);
}

}  // namespace npuforge::tools
