// npuforge sim: run a program on a simulation backend with all checkers, compare the final
// DDR image with the golden model, print PASS/FAIL, cycles, queue utilisation and findings.
#include <memory>
#include <string>
#include <vector>

#include <fmt/core.h>

#include "isa/isa.h"
#include "isa/npu_config.h"
#include "bundle/ddr_image.h"
#include "bundle/files.h"
#include "sim/sc_model/sc_backend.h"
#include "sim/verify/verdict_json.h"
#include "sim/verify/verify.h"
#include "tools/command.h"
#include "tools/input_file.h"
#include "util/error.h"
#include "util/file_io.h"
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

int run_sim(const SimOptions& o) {
  const isa::Isa custom = o.isa.empty() ? isa::Isa{} : isa::Isa::load_file(o.isa);
  const isa::Isa& the_isa = o.isa.empty() ? isa::builtin_isa() : custom;
  const isa::NpuConfig config = isa::load_npu_config(o.npu).config;
  const bundle::Program program = bundle::read_program(the_isa, {.binary = o.program, .memmap = o.memmap, .ddr = o.ddr}, config);
  const std::vector<uint8_t> expected = o.expect_ddr.empty() ? std::vector<uint8_t>{} : bundle::read_ddr_image(o.expect_ddr);
  // --rtl-variant NAME is --rtl --plant NAME for the RTL plants of the catalogue.
  const Plant variant = parse_rtl_plant(o.rtl_variant);
  if (variant.any() && !o.plant.empty()) throw Error("--rtl-variant and --plant name one plant each: give one");
  sim::verify::Options v;
  v.backend = sim::verify::backend_named(o.backend);
  v.rtl = o.rtl || variant.any();
  v.plant = variant.any() ? variant : parse_plant(o.plant);
  v.trace = o.trace;
  v.max_errors = o.max_errors;
  if (!o.expect_ddr.empty()) {
    v.expect_ddr = &expected;
    v.expect_ddr_name = o.expect_ddr;
  }
  v.keep_final_ddr = !o.out_ddr.empty();
  const sim::verify::Verdict verdict = sim::verify::run(program, v);
  if (!o.out_ddr.empty()) bundle::write_ddr_image(o.out_ddr, verdict.final_ddr);
  fmt::print("{}", sim::verify::report(verdict));
  if (!o.json.empty()) util::write_file(o.json, sim::verify::to_json(verdict), "JSON verdict");
  return verdict.pass ? kExitOk : kExitFinding;
}

}  // namespace

void add_sim_command(CLI::App& app, Runner& run) {
  auto opts = std::make_shared<SimOptions>();
  CLI::App* sub = app.add_subcommand("sim", "Simulate a program with all checkers and compare with the golden model");
  sub->add_option("program", opts->program, "program binary (<name>.bin)")->required()->check(input_file("program"));
  sub->add_option("--memmap", opts->memmap, "memory map (<name>.memmap.yaml); without it the shadow and overlap checkers are off")
      ->check(input_file("--memmap"));
  sub->add_option("--ddr", opts->ddr, "initial DDR image (<name>.ddr.bin: raw bytes from address 0)")
      ->check(input_file("--ddr"));
  sub->add_option("--npu", opts->npu, "NPU config (default: the built-in configs/npu/default.yaml)")
      ->transform(config_file("--npu", ConfigKind::kNpu));
  sub->add_option("--isa", opts->isa, "ISA file (default: the built-in isa/npu_isa.yaml)")->check(input_file("--isa"));
  sub->add_option("--max-errors", opts->max_errors, "findings to print (all are counted; 0 = all)");
  sub->add_option("--expect-ddr", opts->expect_ddr, "also compare the final DDR with this image")
      ->check(input_file("--expect-ddr"));
  sub->add_option("--out-ddr", opts->out_ddr, "write the final DDR image here");
  sub->add_option("--json", opts->json, "also write the verdict (pass, cycles, findings by kind, every kept finding) as JSON");
  sub->add_option("--backend", opts->backend,
                  "simulation backend: systemc (SystemC/TLM-2.0 model, default) or sequential");
  sub->add_flag("--rtl", opts->rtl, "systemc: run the Verilated scratchpad and decoder RTL in the loop");
  std::string variants;
  for (const PlantInfo& p : plant_catalogue())
    if (p.layer == PlantLayer::Rtl) variants += fmt::format(", {}", p.name);
  sub->add_option("--rtl-variant", opts->rtl_variant,
                  fmt::format("systemc: run a planted RTL bug (implies --rtl): none{}", variants));
  sub->add_option("--plant", opts->plant,
                  "systemc: run with a planted model bug (or, with --rtl, an RTL one; see `npuforge plants`)");
  sub->add_option("--trace", opts->trace, "systemc: write a VCD waveform (dispatch, queues, RTL pins) to FILE");
  bind_runner(sub, opts, run, &run_sim);
}

}  // namespace npuforge::tools
