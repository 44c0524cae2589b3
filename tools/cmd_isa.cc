// `npuforge isa`: the instruction set reference, from the same table the encoder uses.
#include <fmt/core.h>

#include "isa/emit.h"
#include "isa/isa.h"
#include "tools/command.h"
#include "tools/input_file.h"

namespace npuforge::tools {
namespace {

struct IsaOptions {
  bool markdown = false;
  bool sv = false;
  bool yaml = false;
  std::string isa_file;
};

int run_isa(const IsaOptions& o) {
  const isa::Isa isa = o.isa_file.empty() ? isa::builtin_isa() : isa::Isa::load_file(o.isa_file);
  if (o.markdown) fmt::print("{}", isa::isa_markdown(isa));
  else if (o.sv) fmt::print("{}", isa::isa_sv_package(isa));
  else if (o.yaml) fmt::print("{}", isa::builtin_isa_yaml());
  else {
    fmt::print("{} v{}: {} instructions, {} bits each\n", isa.name(), isa.version(), isa.instructions().size(),
               isa.width_bits());
    for (const auto& s : isa.instructions())
      fmt::print("  {:#04x}  {:8} {:8} {} fields, {} operands\n", s.opcode, s.mnemonic, isa::to_string(s.queue),
                 s.fields.size(), s.operands.size());
  }
  return kExitOk;
}

}  // namespace

void add_isa_command(CLI::App& app, Runner& run) {
  auto opts = std::make_shared<IsaOptions>();
  auto* sub = app.add_subcommand("isa", "Print the instruction set (summary, markdown reference, SV package)");
  auto* md = sub->add_flag("--markdown", opts->markdown, "Print the markdown reference (docs/isa.md)");
  auto* sv = sub->add_flag("--sv", opts->sv, "Print the SystemVerilog package npu_isa_pkg");
  auto* ym = sub->add_flag("--yaml", opts->yaml, "Print the built-in npu_isa.yaml");
  md->excludes(sv)->excludes(ym);
  sv->excludes(ym);
  sub->add_option("--isa", opts->isa_file, "Use this ISA YAML instead of the built-in one")->check(input_file("--isa"));
  bind_runner(sub, opts, run, &run_isa);
}

}  // namespace npuforge::tools
