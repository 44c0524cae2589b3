#include <algorithm>
#include <array>
#include <cstdint>
#include <iterator>

#include <fmt/format.h>

#include "isa/assembler.h"
#include "util/error.h"
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

LineDisassembler::LineDisassembler(const Isa& isa) : first_(isa.instructions().data()) {
  size_t longest_tokens = 0;
  for (uint32_t mask = 0; mask < tokens_.size(); ++mask) {
    append_tokens(tokens_[mask], mask);
    longest_tokens = std::max(longest_tokens, tokens_[mask].size());
  }
  // Numbers print a uint32 raw value (in hex with "ddr:0x") or its sign extension: 11 bytes
  // at most; 24 leaves room.
  constexpr size_t kLongestNumber = 24;
  for (const InstrSpec& s : isa.instructions()) {
    Plan plan;
    plan.begin = static_cast<uint32_t>(steps_.size());
    size_t line = s.mnemonic.size();
    auto add = [&](unsigned slot, bool keyword) {
      const FieldSpec& f = s.fields[slot];
      Step step{.field = &f, .slot = slot, .keyword = keyword};
      step.text = f.kind == FieldKind::Tokens                            ? Text::Tokens
                  : !f.enum_values.empty()                               ? Text::Enum
                  : f.kind == FieldKind::DdrAddr                         ? Text::DdrHex
                  : f.kind == FieldKind::SramAddr                        ? Text::Hex
                                                                         : Text::Decimal;
      step.flag = f.kind == FieldKind::Flag;
      step.has_default = keyword && f.default_value.has_value();
      step.default_value = f.default_value.value_or(0);
      step.is_signed = f.is_signed;
      step.width = f.width;
      size_t value = std::max(kLongestNumber, longest_tokens);
      for (const auto& e : f.enum_values) value = std::max(value, e.first.size());
      line += 2 + f.name.size() + 1 + value;  // ", name=value"
      steps_.push_back(step);
    };
    // The order of append_disassembly: positional fields, keyword fields from slot 3, then
    // the token fields.
    for (unsigned i = 0; i < s.fields.size(); ++i)
      if (s.fields[i].is_positional()) add(i, false);
    for (unsigned k = 3; k < s.fields.size() + 2; ++k) {
      const unsigned i = k < s.fields.size() ? k : k - static_cast<unsigned>(s.fields.size()) + 1;
      if (!s.fields[i].is_positional()) add(i, true);
    }
    plan.end = static_cast<uint32_t>(steps_.size());
    plans_.push_back(plan);
    max_line_bytes_ = std::max(max_line_bytes_, line);
  }
}

inline char* LineDisassembler::write_value(const Step& s, const Instruction& in, char* out) const {
  const uint32_t raw = in.raw[s.slot];
  switch (s.text) {
    case Text::Tokens:
      return util::write_text(out, tokens_[raw & (tokens_.size() - 1)]);
    case Text::Enum:
      for (const auto& [name, code] : s.field->enum_values)
        if (code == raw) return util::write_text(out, name);
      if (!s.field->is_address()) return util::write_signed_dec(out, value_of(s, in.raw[s.slot]));
      if (s.field->kind == FieldKind::DdrAddr) out = util::write_text(out, "ddr:");
      return util::write_hex(util::write_text(out, "0x"), raw);
    case Text::DdrHex:
      out = util::write_text(out, "ddr:");
      [[fallthrough]];
    case Text::Hex:
      return util::write_hex(util::write_text(out, "0x"), raw);
    case Text::Decimal:
      return util::write_signed_dec(out, value_of(s, in.raw[s.slot]));
  }
  return out;
}

char* LineDisassembler::write(const Instruction& in, char* out) const {
  // Address arithmetic, not pointer subtraction: `in.spec` may point into another ISA's table.
  const uintptr_t offset = reinterpret_cast<uintptr_t>(in.spec) - reinterpret_cast<uintptr_t>(first_);
  const size_t index = offset / sizeof(InstrSpec);
  if (index >= plans_.size() || offset % sizeof(InstrSpec) != 0)
    throw Error(fmt::format("disassembler: '{}' is not an instruction of this ISA", in.spec->mnemonic));
  out = util::write_text(out, in.spec->mnemonic);
  bool first = true;
  const Plan& plan = plans_[index];
  for (uint32_t k = plan.begin; k < plan.end; ++k) {
    const Step& s = steps_[k];
    if (s.has_default && value_of(s, in.raw[s.slot]) == s.default_value) continue;
    out = util::write_text(out, first ? " " : ", ");
    first = false;
    if (s.keyword) {
      out = util::write_text(out, s.field->name);
      if (s.flag && in.raw[s.slot] == 1) continue;
      *out++ = '=';
    }
    out = write_value(s, in, out);
  }
  return out;
}

}  // namespace npuforge::isa
