#include <array>
#include <iterator>

#include <fmt/format.h>

#include "isa/assembler.h"
#include "util/text.h"

namespace npuforge::isa {
namespace {

// Appends, not returns: `npuforge gen` disassembles millions of instructions, and a string
// per operand was most of its time.
void append_tokens(std::string& out, uint32_t mask) {
  static const char* kNames[] = {"load", "compute", "store"};  // token bit order of the ISA
  bool any = false;
  for (unsigned b = 0; b < kNumQueues; ++b) {
    if (!(mask >> b & 1u)) continue;
    if (any) out += '+';
    out += kNames[b];
    any = true;
  }
  if (!any) out += "none";
}

void append_value(std::string& out, const Instruction& in, unsigned slot) {
  const FieldSpec& f = in.spec->fields[slot];
  if (f.kind == FieldKind::Tokens) return append_tokens(out, in.raw[slot]);
  for (const auto& [name, code] : f.enum_values)
    if (code == in.raw[slot]) {
      out += name;
      return;
    }
  if (f.kind == FieldKind::DdrAddr || f.kind == FieldKind::SramAddr) {
    if (f.kind == FieldKind::DdrAddr) out += "ddr:";
    std::array<char, 16> buf;
    out += "0x";
    out += util::hex_digits(in.raw[slot], buf);
  } else {
    const fmt::format_int v(in.value(slot));
    out.append(v.data(), v.size());
  }
}

}  // namespace

std::string disassemble(const Instruction& in) {
  std::string out;
  out.reserve(96);
  append_disassembly(out, in);
  return out;
}

void append_disassembly(std::string& out, const Instruction& in) {
  const InstrSpec& s = *in.spec;
  out += s.mnemonic;
  bool first = true;
  auto separator = [&] {
    out += first ? " " : ", ";
    first = false;
  };
  for (unsigned i = 0; i < s.fields.size(); ++i) {
    if (!s.fields[i].is_positional()) continue;
    separator();
    append_value(out, in, i);
  }
  // Keyword fields in table order, the token fields (slots 1 and 2) last: they read as
  // "then synchronise", after what the instruction does.
  for (unsigned k = 3; k < s.fields.size() + 2; ++k) {
    const unsigned i = k < s.fields.size() ? k : k - s.fields.size() + 1;
    const FieldSpec& f = s.fields[i];
    if (f.is_positional()) continue;
    if (f.default_value && in.value(i) == *f.default_value) continue;
    separator();
    out += f.name;
    if (f.kind == FieldKind::Flag && in.raw[i] == 1) continue;
    out += '=';
    append_value(out, in, i);
  }
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
