// `npuforge asm` and `npuforge disasm`: text <-> fixed-width binary (and $readmemh hex).
#include <fmt/core.h>

#include "allocator/place_symbols.h"
#include "isa/assembler.h"
#include "tools/command.h"
#include "tools/input_file.h"
#include "tools/io_util.h"

namespace npuforge::tools {
namespace {

struct AsmOptions {
  std::string input;
  std::string output;
  std::string hex;
  std::string isa_file;
  std::string memmap;
  std::string npu;  // empty: the built-in configs/npu/default.yaml
  std::string policy = "first-fit";
};

struct DisasmOptions {
  std::string input;
  std::string isa_file;
  bool addresses = false;
};

isa::Isa load_isa(const std::string& path) {
  return path.empty() ? isa::builtin_isa() : isa::Isa::load_file(path);
}

int run_asm(const AsmOptions& o) {
  const isa::Isa isa = load_isa(o.isa_file);
  isa::AsmProgram prog = isa::assemble(isa, read_text(o.input), o.input);
  if (!prog.symbol_refs.empty() || !o.memmap.empty()) {
    // Symbols without .equ are placed by the SRAM allocator in program order.
    allocator::PlaceOptions place;
    place.policy = allocator::parse_policy(o.policy);
    place.header = fmt::format("npuforge asm {}; policy: {}", o.input, o.policy);
    const auto map = allocator::place_symbols(prog, isa::load_npu_config(o.npu).config, place);
    if (!o.memmap.empty()) map.save_file(o.memmap);
    fmt::print("{}: placed {} symbols with {}\n", o.input, map.buffers.size(), o.policy);
  }
  util::write_file(o.output, isa::encode_program(isa, prog.instrs));
  if (!o.hex.empty()) util::write_file(o.hex, isa::to_readmemh(isa, prog.instrs, fmt::format("assembled from {}", o.input)));
  fmt::print("{}: {} instructions, {} bytes -> {}\n", o.input, prog.instrs.size(),
             prog.instrs.size() * isa.width_bytes(), o.output);
  return kExitOk;
}

int run_disasm(const DisasmOptions& o) {
  const isa::Isa isa = load_isa(o.isa_file);
  const auto program = isa::decode_program(isa, read_binary(o.input), o.input);
  for (size_t i = 0; i < program.size(); ++i) {
    if (o.addresses) fmt::print("{:6}: ", i);
    fmt::print("{}\n", isa::disassemble(program[i]));
  }
  return kExitOk;
}

}  // namespace

void add_asm_command(CLI::App& app, Runner& run) {
  auto opts = std::make_shared<AsmOptions>();
  auto* sub = app.add_subcommand("asm", "Assemble a program into a binary (and a $readmemh hex file)");
  sub->add_option("input", opts->input, "Assembly source (.s)")->required()->check(input_file("input"));
  sub->add_option("-o,--output", opts->output, "Binary output (.bin)")->required();
  sub->add_option("--hex", opts->hex, "Also write a $readmemh hex file");
  sub->add_option("--memmap", opts->memmap, "Write the memory map of the symbols placed by the allocator");
  sub->add_option("--npu", opts->npu,
                  "NPU config giving the SRAM size and alignment for placing symbols (default: the built-in "
                  "configs/npu/default.yaml)")
      ->transform(config_file("--npu", ConfigKind::kNpu));
  sub->add_option("--policy", opts->policy, "Allocator policy for symbols: first-fit, best-fit, next-fit");
  sub->add_option("--isa", opts->isa_file, "Use this ISA YAML instead of the built-in one")->check(input_file("--isa"));
  bind_runner(sub, opts, run, &run_asm);
}

void add_disasm_command(CLI::App& app, Runner& run) {
  auto opts = std::make_shared<DisasmOptions>();
  auto* sub = app.add_subcommand("disasm", "Disassemble a binary into assembly text");
  sub->add_option("input", opts->input, "Binary program (.bin)")->required()->check(input_file("input"));
  sub->add_flag("--index", opts->addresses, "Prefix each line with its instruction index");
  sub->add_option("--isa", opts->isa_file, "Use this ISA YAML instead of the built-in one")->check(input_file("--isa"));
  bind_runner(sub, opts, run, &run_disasm);
}

}  // namespace npuforge::tools
