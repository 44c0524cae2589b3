#include <fmt/core.h>

#include "isa/assembler.h"

namespace npuforge::isa {
namespace {

std::string tokens_text(uint32_t mask) {
  static const char* kNames[] = {"load", "compute", "store"};  // token bit order of the ISA
  std::string out;
  for (unsigned b = 0; b < kNumQueues; ++b)
    if (mask >> b & 1u) out += fmt::format("{}{}", out.empty() ? "" : "+", kNames[b]);
  return out.empty() ? "none" : out;
}

std::string value_text(const Instruction& in, unsigned slot) {
  const FieldSpec& f = in.spec->fields[slot];
  if (f.kind == FieldKind::Tokens) return tokens_text(in.raw[slot]);
  for (const auto& [name, code] : f.enum_values)
    if (code == in.raw[slot]) return name;
  if (f.kind == FieldKind::DdrAddr) return fmt::format("ddr:{:#x}", in.raw[slot]);
  if (f.kind == FieldKind::SramAddr) return fmt::format("{:#x}", in.raw[slot]);
  return std::to_string(in.value(slot));
}

}  // namespace

std::string disassemble(const Instruction& in) {
  const InstrSpec& s = *in.spec;
  std::string out = s.mnemonic;
  bool first = true;
  auto add = [&](const std::string& text) {
    out += first ? " " : ", ";
    out += text;
    first = false;
  };
  for (unsigned i = 0; i < s.fields.size(); ++i)
    if (s.fields[i].is_positional()) add(value_text(in, i));
  // Keyword fields in table order, the token fields (slots 1 and 2) last: they read as
  // "then synchronise", after what the instruction does.
  for (unsigned k = 3; k < s.fields.size() + 2; ++k) {
    const unsigned i = k < s.fields.size() ? k : k - s.fields.size() + 1;
    const FieldSpec& f = s.fields[i];
    if (f.is_positional()) continue;
    if (f.default_value && in.value(i) == *f.default_value) continue;
    if (f.kind == FieldKind::Flag && in.raw[i] == 1) add(f.name);
    else add(fmt::format("{}={}", f.name, value_text(in, i)));
  }
  return out;
}

std::string disassemble_program(std::span<const Instruction> program) {
  std::string out;
  for (const auto& in : program) {
    out += disassemble(in);
    out += '\n';
  }
  return out;
}

}  // namespace npuforge::isa
