// Entries for the instruction-set formats: assembly, binaries, the ISA YAML, NPU configs.
#include <string>
#include <string_view>

#include "allocator/place_symbols.h"
#include "fuzz/fuzz_targets.h"
#include "isa/assembler.h"
#include "isa/emit.h"
#include "isa/instruction.h"
#include "isa/npu_config.h"

namespace npuforge::fuzz {
namespace {

std::string_view as_text(std::span<const uint8_t> data) {
  return {reinterpret_cast<const char*>(data.data()), data.size()};
}

// A valid instruction must read back from its own disassembly.
void check_disasm_round_trip(const isa::Isa& isa, const isa::Instruction& instr) {
  if (!isa::validate(instr).empty()) return;
  const std::string text = isa::disassemble(instr);
  const isa::AsmProgram back = isa::assemble(isa, text, "<disassembly>");
  if (back.instrs.size() != 1 || !(back.instrs[0] == instr) || !back.symbol_refs.empty())
    throw InvariantBroken("disassembly does not assemble back: " + text);
}

}  // namespace

// `npuforge asm`: assemble, place the symbols with the allocator, encode.
void fuzz_asm(std::span<const uint8_t> data) {
  const isa::Isa& isa = isa::builtin_isa();
  isa::AsmProgram prog = isa::assemble(isa, as_text(data), "fuzz.s");
  if (!prog.symbol_refs.empty()) allocator::place_symbols(prog, isa::NpuConfig{});
  const auto bytes = isa::encode_program(isa, prog.instrs);
  if (isa::decode_program(isa, bytes, "<encoded>") != prog.instrs)
    throw InvariantBroken("encode/decode of an assembled program differs");
  for (const auto& instr : prog.instrs) check_disasm_round_trip(isa, instr);
}

// `npuforge disasm`: decode a binary, print every instruction.
void fuzz_disasm(std::span<const uint8_t> data) {
  const isa::Isa& isa = isa::builtin_isa();
  const auto program = isa::decode_program(isa, data, "fuzz.bin");
  for (const auto& instr : program) check_disasm_round_trip(isa, instr);
  isa::disassemble_program(program);
  isa::to_readmemh(isa, program);
}

// `--isa FILE` and `npuforge isa --sv/--markdown` on a team's edited ISA.
void fuzz_isa_yaml(std::span<const uint8_t> data) {
  const isa::Isa isa = isa::Isa::load_string(as_text(data), "fuzz_isa.yaml");
  isa::isa_markdown(isa);
  isa::isa_sv_package(isa);
  std::vector<uint8_t> word(isa.width_bytes());
  for (const auto& spec : isa.instructions()) {
    const isa::Instruction instr = isa::Instruction::make(spec);
    isa::validate(instr);
    isa::extents(instr);
    isa::encode(instr, word);
    if (!(isa::decode(isa, word, "<encoded>") == instr))
      throw InvariantBroken("encode/decode differs for " + spec.mnemonic);
    isa::disassemble(instr);
  }
}

void fuzz_npu_config(std::span<const uint8_t> data) {
  isa::NpuConfig::load_string(as_text(data), "fuzz_npu.yaml");
}

}  // namespace npuforge::fuzz
