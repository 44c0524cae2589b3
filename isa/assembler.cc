#include "isa/assembler.h"

#include <cctype>

#include <fmt/core.h>

#include "util/error.h"

namespace npuforge::isa {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::string_view strip_comment(std::string_view line) {
  size_t cut = line.size();
  for (std::string_view mark : {";", "#", "//"}) cut = std::min(cut, line.find(mark));
  return line.substr(0, cut);
}

bool is_ident(std::string_view s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_' || s[0] == '.')) return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '@')) return false;
  return true;
}

std::optional<int64_t> parse_number(std::string_view s) {
  s = trim(s);
  if (s.empty()) return std::nullopt;
  const std::string text(s);
  size_t used = 0;
  try {
    const int64_t v = std::stoll(text, &used, 0);
    if (used == text.size()) return v;
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

// One line being assembled; knows its position for error messages.
class LineParser {
 public:
  LineParser(const Isa& isa, AsmProgram& prog, std::string_view source, int line_no, std::string_view line)
      : isa_(isa), prog_(prog), source_(source), line_no_(line_no), line_(line) {}

  void parse() {
    std::string_view rest = strip_comment(line_);
    // Labels: "name:" at the start, possibly followed by an instruction.
    const size_t colon = rest.find(':');
    if (colon != std::string_view::npos && is_ident(trim(rest.substr(0, colon)))) {
      const std::string label(trim(rest.substr(0, colon)));
      if (prog_.labels.count(label)) fail(rest, fmt::format("label '{}' is defined twice", label));
      prog_.labels[label] = prog_.instrs.size();
      rest = rest.substr(colon + 1);
    }
    rest = trim(rest);
    if (rest.empty()) return;
    const size_t sp = rest.find_first_of(" \t");
    const std::string_view head = rest.substr(0, sp);
    const std::string_view args = sp == std::string_view::npos ? std::string_view{} : rest.substr(sp);
    if (head == ".equ") return equ(args);
    instruction(head, args);
  }

 private:
  [[noreturn]] void fail(std::string_view at, const std::string& what) const {
    const auto col = at.data() >= line_.data() && at.data() <= line_.data() + line_.size()
                         ? static_cast<size_t>(at.data() - line_.data()) + 1
                         : size_t{1};
    throw Error(fmt::format("{}:{}:{}: {}", source_, line_no_, col, what));
  }

  std::vector<std::string_view> split_args(std::string_view args) const {
    std::vector<std::string_view> out;
    if (trim(args).empty()) return out;
    size_t start = 0;
    for (size_t i = 0; i <= args.size(); ++i) {
      if (i == args.size() || args[i] == ',') {
        std::string_view a = trim(args.substr(start, i - start));
        if (a.empty()) fail(args.substr(start), "empty operand between commas");
        out.push_back(a);
        start = i + 1;
      }
    }
    return out;
  }

  void equ(std::string_view args) {
    const auto parts = split_args(args);
    if (parts.size() != 2) fail(args, ".equ expects: .equ %symbol, address");
    std::string_view name = parts[0];
    if (!name.empty() && name[0] == '%') name.remove_prefix(1);
    if (!is_ident(name)) fail(parts[0], fmt::format("bad symbol name '{}'", parts[0]));
    const auto v = parse_number(parts[1]);
    if (!v || *v < 0 || *v > 0xffffffffll) fail(parts[1], fmt::format("bad address '{}'", parts[1]));
    prog_.equates[std::string(name)] = static_cast<uint32_t>(*v);
  }

  void instruction(std::string_view mnemonic, std::string_view args) {
    const InstrSpec* spec = isa_.by_mnemonic(mnemonic);
    if (!spec) {
      std::string known;
      for (const auto& s : isa_.instructions()) known += fmt::format("{}{}", known.empty() ? "" : " ", s.mnemonic);
      fail(mnemonic, fmt::format("unknown mnemonic '{}' (known: {})", mnemonic, known));
    }
    Instruction in = Instruction::make(*spec);
    std::vector<bool> given(spec->fields.size(), false);
    given[kOpcodeSlot] = true;
    std::vector<unsigned> positional;
    for (unsigned i = 0; i < spec->fields.size(); ++i)
      if (spec->fields[i].is_positional()) positional.push_back(i);
    size_t next_pos = 0;
    for (std::string_view a : split_args(args)) {
      const size_t eq = a.find('=');
      unsigned slot = 0;
      std::string_view value = a;
      if (eq != std::string_view::npos) {
        const std::string_view key = trim(a.substr(0, eq));
        const auto idx = spec->field_index(key);
        if (!idx || *idx == kOpcodeSlot) fail(a, unknown_field(*spec, key));
        slot = *idx;
        value = trim(a.substr(eq + 1));
      } else if (const auto idx = spec->field_index(a); idx && spec->fields[*idx].kind == FieldKind::Flag) {
        slot = *idx;
        value = "1";
      } else {
        if (next_pos >= positional.size())
          fail(a, fmt::format("'{}' takes {} positional operand(s); '{}' is one too many (use key=value for other fields)",
                              spec->mnemonic, positional.size(), a));
        slot = positional[next_pos++];
      }
      if (given[slot]) fail(a, fmt::format("field '{}' is given twice", spec->fields[slot].name));
      given[slot] = true;
      set_field(in, slot, value);
    }
    for (unsigned i = 0; i < spec->fields.size(); ++i)
      if (!given[i] && !spec->fields[i].default_value)
        fail(line_.substr(line_.size()), fmt::format("'{}' is missing operand '{}' ({})", spec->mnemonic,
                                                      spec->fields[i].name, to_string(spec->fields[i].kind)));
    if (auto err = validate(in); !err.empty()) fail(mnemonic, err);
    prog_.instrs.push_back(in);
    prog_.lines.push_back(line_no_);
  }

  static std::string unknown_field(const InstrSpec& s, std::string_view key) {
    std::string names;
    for (size_t i = 1; i < s.fields.size(); ++i) names += fmt::format("{}{}", i > 1 ? ", " : "", s.fields[i].name);
    return fmt::format("'{}' has no field '{}' (fields: {})", s.mnemonic, key, names);
  }

  void set_field(Instruction& in, unsigned slot, std::string_view value) {
    const FieldSpec& f = in.spec->fields[slot];
    if (f.kind == FieldKind::Tokens) return in.set(slot, parse_tokens(value));
    if (!f.enum_values.empty()) {
      for (const auto& [name, code] : f.enum_values)
        if (name == value) return in.set(slot, code);
    }
    if (f.is_address()) {
      if (value.substr(0, 4) == "ddr:" || value.substr(0, 5) == "sram:") value = value.substr(value.find(':') + 1);
      if (!value.empty() && value[0] == '%') return symbol(in, slot, value);
    }
    const auto v = parse_number(value);
    if (!v) fail(value, expected(f, value));
    if (*v < f.min || *v > f.max)
      fail(value, fmt::format("field '{}' = {} is out of range [{}, {}]", f.name, value, f.min, f.max));
    in.set_value(slot, *v);
  }

  static std::string expected(const FieldSpec& f, std::string_view value) {
    std::string names;
    for (const auto& [name, code] : f.enum_values) names += fmt::format("{}{}", names.empty() ? "" : ", ", name);
    if (!names.empty()) return fmt::format("field '{}': '{}' is not one of: {}", f.name, value, names);
    if (f.is_address()) return fmt::format("field '{}': expected an address or %symbol, got '{}'", f.name, value);
    return fmt::format("field '{}': expected a number, got '{}'", f.name, value);
  }

  uint32_t parse_tokens(std::string_view value) {
    if (value == "none" || value == "0") return 0;
    uint32_t mask = 0;
    size_t start = 0;
    for (size_t i = 0; i <= value.size(); ++i) {
      if (i < value.size() && value[i] != '+' && value[i] != '|') continue;
      const std::string_view q = trim(value.substr(start, i - start));
      const auto& names = isa_.queue_names();
      unsigned bit = 0;
      while (bit < names.size() && names[bit] != q) ++bit;
      if (bit == names.size()) fail(q, fmt::format("unknown queue '{}' (expected load, compute, store or none)", q));
      mask |= 1u << bit;
      start = i + 1;
    }
    return mask;
  }

  void symbol(Instruction& in, unsigned slot, std::string_view value) {
    std::string_view name = value.substr(1);
    int64_t offset = 0;
    if (const size_t plus = name.find('+'); plus != std::string_view::npos) {
      const auto off = parse_number(name.substr(plus + 1));
      if (!off || *off < 0 || *off > 0xffffffffll) fail(value, fmt::format("bad symbol offset in '{}'", value));
      offset = *off;
      name = trim(name.substr(0, plus));
    }
    if (!is_ident(name)) fail(value, fmt::format("bad symbol name '{}'", value));
    const auto it = prog_.equates.find(std::string(name));
    if (it != prog_.equates.end()) {
      const FieldSpec& f = in.spec->fields[slot];
      const int64_t addr = int64_t{it->second} + offset;
      if (addr < f.min || addr > f.max)
        fail(value, fmt::format("field '{}' = {} = {:#x} is out of range [{:#x}, {:#x}]", f.name, value, addr,
                                f.min, f.max));
      return in.set_value(slot, addr);
    }
    prog_.symbol_refs.push_back({prog_.instrs.size(), slot, std::string(name), offset});
  }

  const Isa& isa_;
  AsmProgram& prog_;
  std::string_view source_;
  int line_no_;
  std::string_view line_;
};

}  // namespace

AsmProgram assemble(const Isa& isa, std::string_view text, std::string_view source_name) {
  AsmProgram prog;
  int line_no = 0;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    LineParser(isa, prog, source_name, ++line_no, line).parse();
    if (end == text.size()) break;
    start = end + 1;
  }
  return prog;
}

void resolve_symbols(AsmProgram& program, const std::map<std::string, uint32_t>& addresses) {
  for (const SymbolRef& ref : program.symbol_refs) {
    const auto it = addresses.find(ref.symbol);
    if (it == addresses.end())
      throw Error(fmt::format("instruction {}: symbol '%{}' has no address (define it with .equ or let the "
                              "allocator place it)",
                              ref.instr, ref.symbol));
    const FieldSpec& f = program.instrs[ref.instr].spec->fields[ref.field];
    const int64_t addr = static_cast<int64_t>(it->second) + ref.offset;
    if (addr < f.min || addr > f.max)
      throw Error(fmt::format("instruction {}: '%{}+{}' = {:#x} does not fit field '{}' [{:#x}, {:#x}]", ref.instr,
                              ref.symbol, ref.offset, addr, f.name, f.min, f.max));
    program.instrs[ref.instr].set_value(ref.field, addr);
  }
  program.symbol_refs.clear();
}

}  // namespace npuforge::isa
