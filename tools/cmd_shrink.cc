// npuforge shrink: delta-debug a failing program down to the few instructions and buffers
// that still make the same checker fail with the same kind of finding.
#include <filesystem>

#include <fmt/core.h>

#include "isa/npu_config.h"
#include "regress/shrink.h"
#include "bundle/ddr_image.h"
#include "bundle/files.h"
#include "sim/verify/verify.h"
#include "tools/command.h"
#include "tools/input_file.h"
#include "util/error.h"
#include "util/plant.h"

namespace npuforge::tools {
namespace {

struct ShrinkOpts {
  std::string program, memmap, ddr, npu, out, plant;
  bool rtl = false;
  size_t max_tests = 4000;
};

int run_shrink(const ShrinkOpts& o) {
  const isa::Isa& isa = isa::builtin_isa();
  const isa::NpuConfig npu = isa::load_npu_config(o.npu).config;
  const bundle::Program prog = bundle::read_program(isa, {.binary = o.program, .memmap = o.memmap, .ddr = o.ddr}, npu);
  if (!prog.memmap) throw Error("shrink: --memmap is required");
  regress::ShrinkProgram p{prog.instrs, *prog.memmap, prog.ddr_init};
  const std::string out = o.out.empty() ? std::filesystem::path(o.program).replace_extension("").string() + ".min" : o.out;
  sim::verify::Options sim;  // every candidate judged in this process, as `npuforge sim` would
  sim.rtl = o.rtl;
  sim.plant = parse_plant(o.plant);
  sim.max_errors = 1;
  const auto res = regress::shrink(p, regress::verify_oracle(isa, npu, sim), o.max_tests);
  regress::write_program(isa, res.program, out);
  fmt::print("shrink: {} -> {} instructions, {} -> {} buffers, {} simulations; still fails with [{}]\n",
             res.from_instrs, res.program.instrs.size(), res.from_buffers, res.program.map.buffers.size(),
             res.tests, regress::tag(res.kind));
  fmt::print("wrote {0}.s {0}.bin {0}.hex {0}.memmap.yaml {0}.ddr.bin\n", out);
  fmt::print("check: npuforge sim {0}.bin --memmap {0}.memmap.yaml --ddr {0}.ddr.bin{1}{2}\n", out, o.rtl ? " --rtl" : "",
             o.plant.empty() ? "" : " --plant " + o.plant);
  return kExitOk;
}

}  // namespace

void add_shrink_command(CLI::App& app, Runner& run) {
  auto opts = std::make_shared<ShrinkOpts>();
  CLI::App* sub = app.add_subcommand("shrink", "Reduce a failing program to a minimal one that fails the same way");
  sub->add_option("program", opts->program, "failing program (<name>.bin)")->required()->check(input_file("program"));
  sub->add_option("--memmap", opts->memmap, "its memory map")->required()->check(input_file("--memmap"));
  sub->add_option("--ddr", opts->ddr, "its initial DDR image")->check(input_file("--ddr"));
  sub->add_option("--npu", opts->npu, "NPU config (default: the built-in configs/npu/default.yaml)")->transform(config_file("--npu", ConfigKind::kNpu));
  sub->add_flag("--rtl", opts->rtl, "simulate with the Verilated RTL scratchpad");
  sub->add_option("--plant", opts->plant, "simulate with this planted model or RTL bug (see `npuforge plants`)");
  sub->add_option("-o,--out", opts->out, "output prefix (default <name>.min)");
  sub->add_option("--max-tests", opts->max_tests, "simulations at most (default 4000)");
  bind_runner(sub, opts, run, &run_shrink);
}

}  // namespace npuforge::tools
