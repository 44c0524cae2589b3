// `npuforge demo`: the built-in default job until the generator and simulator take over:
// assemble a sample program, encode it, decode and disassemble it again, and summarise.
#include <fmt/core.h>

#include "isa/assembler.h"
#include "tools/command.h"
#include "tools/input_file.h"
#include "tools/io_util.h"

namespace npuforge::tools {
namespace {

struct DemoOptions {
  std::string sample = "configs/samples/conv_block.s";
};

int run_demo(const DemoOptions& o) {
  const isa::Isa& isa = isa::builtin_isa();
  const isa::AsmProgram prog = isa::assemble(isa, read_text(o.sample), o.sample);
  const auto binary = isa::encode_program(isa, prog.instrs);
  const auto decoded = isa::decode_program(isa, binary, "encoded sample");
  const std::string text = isa::disassemble_program(decoded);
  const auto again = isa::assemble(isa, text, "disassembly");
  const bool round_trip = decoded == prog.instrs && again.instrs == prog.instrs;
  uint64_t sram_read = 0, sram_written = 0;
  for (const auto& in : decoded)
    for (const auto& e : isa::extents(in))
      if (e.space == isa::Space::Sram) (e.access == isa::Access::Read ? sram_read : sram_written) += e.bytes;
  fmt::print("{}\n{}", o.sample, text);
  fmt::print("summary: {} instructions, {} bytes encoded ({} bits each), {} labels, SRAM bytes read {} written {}, "
             "round trip {}\n",
             prog.instrs.size(), binary.size(), isa.width_bits(), prog.labels.size(), sram_read, sram_written,
             round_trip ? "exact" : "MISMATCH");
  return round_trip ? kExitOk : kExitFinding;
}

}  // namespace

void add_demo_command(CLI::App& app, Runner& run) {
  auto opts = std::make_shared<DemoOptions>();
  auto* sub = app.add_subcommand("demo", "Assemble, encode, decode and disassemble a sample program");
  sub->add_option("--sample", opts->sample, "Assembly file to use")->check(input_file("--sample"));
  bind_runner(sub, opts, run, &run_demo);
}

}  // namespace npuforge::tools
