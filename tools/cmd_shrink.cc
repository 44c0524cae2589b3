// npuforge shrink: delta-debug a failing program down to the few instructions and buffers
// that still make the same checker fail with the same kind of finding.
#include <filesystem>

#include <fmt/core.h>

#include "bundle/files.h"
#include "util/error.h"
#include "isa/npu_config.h"
#include "regress/proc.h"
#include "regress/shrink.h"
#include "tools/command.h"

namespace npuforge::tools {
namespace {

struct ShrinkOpts {
  std::string program, memmap, ddr, npu, out;
  bool rtl = false;
  size_t max_tests = 4000;
};

int run_shrink(const ShrinkOpts& o) {
  namespace fs = std::filesystem;
  const isa::Isa& isa = isa::builtin_isa();
  const isa::NpuConfig npu = isa::load_npu_config(o.npu).config;
  const bundle::Program prog = bundle::read_program(isa, {.binary = o.program, .memmap = o.memmap, .ddr = o.ddr}, npu);
  if (!prog.memmap) throw Error("shrink: --memmap is required");
  regress::ShrinkProgram p{prog.instrs, *prog.memmap, prog.ddr_init};
  const fs::path stem = fs::path(o.program).replace_extension("");
  const std::string out = o.out.empty() ? stem.string() + ".min" : o.out;
  const fs::path work = fs::path(out + ".work");
  const auto res = regress::shrink(p, regress::sim_oracle(regress::self_exe(), isa, work, o.rtl, o.npu), o.max_tests);
  regress::write_program(isa, res.program, out);
  fs::remove_all(work);
  fmt::print("shrink: {} -> {} instructions, {} -> {} buffers, {} simulations; still fails with [{}]\n",
             res.from_instrs, res.program.instrs.size(), res.from_buffers, res.program.map.buffers.size(),
             res.tests, res.kind);
  fmt::print("wrote {0}.s {0}.bin {0}.hex {0}.memmap.yaml {0}.ddr.bin\n", out);
  fmt::print("check: npuforge sim {0}.bin --memmap {0}.memmap.yaml --ddr {0}.ddr.bin{1}\n", out, o.rtl ? " --rtl" : "");
  return kExitOk;
}

}  // namespace

void add_shrink_command(CLI::App& app, Runner& run) {
  auto opts = std::make_shared<ShrinkOpts>();
  CLI::App* sub = app.add_subcommand("shrink", "Reduce a failing program to a minimal one that fails the same way");
  sub->add_option("program", opts->program, "failing program (<name>.bin)")->required()->check(CLI::ExistingFile);
  sub->add_option("--memmap", opts->memmap, "its memory map")->required()->check(CLI::ExistingFile);
  sub->add_option("--ddr", opts->ddr, "its initial DDR image")->check(CLI::ExistingFile);
  sub->add_option("--npu", opts->npu, "NPU config (default: the built-in configs/npu/default.yaml)")->check(CLI::ExistingFile);
  sub->add_flag("--rtl", opts->rtl, "simulate with the Verilated RTL scratchpad");
  sub->add_option("-o,--out", opts->out, "output prefix (default <name>.min)");
  sub->add_option("--max-tests", opts->max_tests, "simulations at most (default 4000)");
  bind_runner(sub, opts, run, &run_shrink);
}

}  // namespace npuforge::tools
