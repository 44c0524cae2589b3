#include "isa/isa.h"

#include <algorithm>
#include <set>

#include <fmt/core.h>

#include "util/error.h"
#include "util/yaml_util.h"

namespace npuforge::isa {

std::string_view to_string(FieldKind k) {
  switch (k) {
    case FieldKind::Opcode: return "opcode";
    case FieldKind::Tokens: return "tokens";
    case FieldKind::SramAddr: return "sram_addr";
    case FieldKind::DdrAddr: return "ddr_addr";
    case FieldKind::Size: return "size";
    case FieldKind::Shape: return "shape";
    case FieldKind::Imm: return "imm";
    case FieldKind::Flag: return "flag";
    case FieldKind::Enum: return "enum";
  }
  return "?";
}

std::string_view to_string(Queue q) {
  switch (q) {
    case Queue::Load: return "load";
    case Queue::Compute: return "compute";
    case Queue::Store: return "store";
    case Queue::Control: return "control";
  }
  return "?";
}

std::string_view to_string(Access a) { return a == Access::Read ? "read" : "write"; }

std::optional<uint32_t> FieldSpec::value_of(std::string_view value_name) const {
  for (const auto& [n, code] : enum_values)
    if (n == value_name) return code;
  return std::nullopt;
}

std::optional<unsigned> InstrSpec::field_index(std::string_view name) const {
  for (unsigned i = 0; i < fields.size(); ++i)
    if (fields[i].name == name) return i;
  return std::nullopt;
}

unsigned InstrSpec::require_field(std::string_view name) const {
  if (auto i = field_index(name)) return *i;
  throw Error(fmt::format("instruction '{}' has no field '{}'", mnemonic, name));
}

const InstrSpec* Isa::by_opcode(uint32_t opcode) const {
  if (opcode >= by_opcode_.size() || by_opcode_[opcode] < 0) return nullptr;
  return &instrs_[static_cast<size_t>(by_opcode_[opcode])];
}

const InstrSpec* Isa::by_mnemonic(std::string_view mnemonic) const {
  for (const auto& s : instrs_)
    if (s.mnemonic == mnemonic) return &s;
  return nullptr;
}

const InstrSpec& Isa::require(std::string_view mnemonic) const {
  if (const auto* s = by_mnemonic(mnemonic)) return *s;
  throw Error(fmt::format("unknown instruction '{}'", mnemonic));
}

std::optional<size_t> Isa::index_of(const InstrSpec& spec) const {
  // Address arithmetic, not pointer subtraction: `spec` may point into another ISA's table,
  // and subtracting pointers into different arrays is undefined.
  const uintptr_t offset = reinterpret_cast<uintptr_t>(&spec) - reinterpret_cast<uintptr_t>(instrs_.data());
  const size_t index = offset / sizeof(InstrSpec);
  if (index >= instrs_.size() || offset % sizeof(InstrSpec) != 0) return std::nullopt;
  return index;
}

const FieldSpec& Isa::field(std::string_view mnemonic, std::string_view field_name) const {
  const InstrSpec& s = require(mnemonic);
  return s.fields[s.require_field(field_name)];
}

uint32_t Isa::enum_value(std::string_view mnemonic, std::string_view field_name, std::string_view value_name) const {
  const FieldSpec& f = field(mnemonic, field_name);
  if (const auto code = f.value_of(value_name)) return *code;
  std::string names;
  for (const auto& [n, code] : f.enum_values) names += fmt::format("{}{}", names.empty() ? "" : ", ", n);
  throw Error(fmt::format("ISA {}: {}.{} has no value '{}' (it has: {})", name_, mnemonic, field_name, value_name,
                          names.empty() ? "no named values" : names));
}

uint64_t Isa::addressable_bytes(Space space) const {
  const FieldKind kind = space == Space::Sram ? FieldKind::SramAddr : FieldKind::DdrAddr;
  uint64_t bytes = 0;
  for (const InstrSpec& s : instrs_)
    for (const FieldSpec& f : s.fields)
      if (f.kind == kind) {
        const uint64_t reach = static_cast<uint64_t>(f.max) + 1;
        bytes = bytes == 0 ? reach : std::min(bytes, reach);
      }
  return bytes;
}

// Builds and validates an Isa from its YAML; every error names the source line.
class IsaLoader {
 public:
  // `chain`: the files of the overlays being loaded, outermost first (a cycle is an error).
  explicit IsaLoader(std::string_view source, std::vector<std::filesystem::path> chain = {})
      : src_(source), chain_(std::move(chain)) {}

  // The ISA file at `path`, which an overlay chain has reached through `chain`.
  static Isa load_file(const std::filesystem::path& path, std::vector<std::filesystem::path> chain) {
    const YAML::Node root = util::load_yaml_file(path);
    chain.push_back(std::filesystem::weakly_canonical(path));
    try {
      return IsaLoader(path.string(), std::move(chain)).load(root);
    } catch (const YAML::Exception& e) {  // e.g. a scalar where a list was expected
      throw Error(fmt::format("{}:{}: invalid ISA description: {}", path.string(), e.mark.line + 1, e.msg));
    }
  }

  Isa load(const YAML::Node& root) {
    if (root.IsMap() && root["base"]) return load_overlay(root);
    util::reject_unknown_keys(root, {"name", "version", "width", "queues", "common", "instructions"}, src_,
                        "the ISA file");
    Isa isa;
    isa.name_ = need(root, "name").as<std::string>();
    isa.version_ = static_cast<unsigned>(util::read_int(need(root, "version"), "version", src_, 0, 1 << 20));
    isa.width_bits_ = static_cast<unsigned>(util::read_int(need(root, "width"), "width", src_, 32, 1024));
    if (isa.width_bits_ % 32 != 0)
      throw Error(fmt::format("{}: 'width' = {} must be a multiple of 32 bits", util::where(src_, root["width"]),
                              isa.width_bits_));
    width_ = isa.width_bits_;
    load_queues(need(root, "queues"), isa);
    common_ = load_fields(need(root, "common"), "common");
    check_common(root["common"]);
    const YAML::Node list = need(root, "instructions");
    if (!list.IsSequence() || list.size() == 0)
      throw Error(fmt::format("{}: 'instructions' must be a non-empty list", util::where(src_, list)));
    for (const auto& node : list) isa.instrs_.push_back(load_instr(node, isa));
    index_opcodes(isa, list);
    return isa;
  }

 private:
  // The base ISA plus the overlay's instructions; a new name or opcode may not repeat one of
  // the base's (an encoding would be ambiguous).
  Isa load_overlay(const YAML::Node& root) {
    for (const char* inherited : {"width", "queues", "common"})
      if (root[inherited])
        throw Error(fmt::format("{}: an ISA overlay ('base:') takes '{}' from its base ISA; it may give only "
                                "name, version and instructions",
                                util::where(src_, root[inherited]), inherited));
    util::reject_unknown_keys(root, {"base", "name", "version", "instructions"}, src_, "an ISA overlay");
    Isa isa = load_base(root["base"]);
    if (root["name"]) isa.name_ = util::read_string(root["name"], "name", src_);
    if (root["version"])
      isa.version_ = static_cast<unsigned>(util::read_int(root["version"], "version", src_, 0, 1 << 20));
    width_ = isa.width_bits_;
    const std::vector<FieldSpec>& base_fields = isa.instrs_.front().fields;
    common_.assign(base_fields.begin(), base_fields.begin() + kSignalSlot + 1);
    base_count_ = isa.instrs_.size();
    const YAML::Node list = need(root, "instructions");
    if (!list.IsSequence() || list.size() == 0)
      throw Error(fmt::format("{}: an overlay's 'instructions' must be a non-empty list of the instructions it "
                              "adds",
                              util::where(src_, list)));
    for (const auto& node : list) isa.instrs_.push_back(load_instr(node, isa));
    index_opcodes(isa, list);
    return isa;
  }

  // `base: builtin`, or the path of an ISA file relative to this one's directory.
  Isa load_base(const YAML::Node& node) {
    const std::string base = util::read_string(node, "base", src_);
    if (base == "builtin") {
      base_src_ = "built-in isa/npu_isa.yaml";
      return builtin_isa();
    }
    std::filesystem::path path(base);
    if (path.is_relative()) path = std::filesystem::path(src_).parent_path() / path;
    if (std::find(chain_.begin(), chain_.end(), std::filesystem::weakly_canonical(path)) != chain_.end())
      throw Error(fmt::format("{}: base '{}' is an overlay that leads back here (a cycle)", util::where(src_, node),
                              base));
    if (!std::filesystem::is_regular_file(path))
      throw Error(fmt::format("{}: base '{}': no ISA file at {} (expected 'builtin' or the path of an ISA file, "
                              "relative to this one)",
                              util::where(src_, node), base, path.string()));
    base_src_ = path.string();
    return load_file(path, chain_);
  }

  // " (the base ISA's)" when instruction `index` comes from an overlay's base.
  std::string from_base(size_t index) const {
    return index < base_count_ ? fmt::format(" (defined by the base ISA, {})", base_src_) : "";
  }

  YAML::Node need(const YAML::Node& map, std::string_view key) {
    const YAML::Node n = map[std::string(key)];
    if (!n) throw Error(fmt::format("{}: missing key '{}'", util::where(src_, map), key));
    return n;
  }

  void load_queues(const YAML::Node& q, Isa& isa) {
    const std::vector<std::string> expected = {"load", "compute", "store"};
    if (!q.IsSequence() || q.as<std::vector<std::string>>() != expected)
      throw Error(fmt::format("{}: 'queues' must be [load, compute, store] (token bit order)", util::where(src_, q)));
    isa.queue_names_ = expected;
  }

  void check_common(const YAML::Node& node) {
    const bool ok = common_.size() == 3 && common_[kOpcodeSlot].kind == FieldKind::Opcode &&
                    common_[kWaitSlot].name == "wait" && common_[kWaitSlot].kind == FieldKind::Tokens &&
                    common_[kSignalSlot].name == "signal" && common_[kSignalSlot].kind == FieldKind::Tokens;
    if (!ok)
      throw Error(fmt::format("{}: 'common' must list exactly: an opcode field, then 'wait' and 'signal' "
                              "token fields",
                              util::where(src_, node)));
    for (unsigned s : {kWaitSlot, kSignalSlot})
      if (common_[s].width != 3)
        throw Error(fmt::format("{}: token field '{}' must be 3 bits wide (one per queue)", util::where(src_, node),
                                common_[s].name));
  }

  static FieldKind parse_kind(const std::string& k, const std::string& where_text) {
    for (auto kind : {FieldKind::Opcode, FieldKind::Tokens, FieldKind::SramAddr, FieldKind::DdrAddr,
                      FieldKind::Size, FieldKind::Shape, FieldKind::Imm, FieldKind::Flag, FieldKind::Enum})
      if (to_string(kind) == k) return kind;
    throw Error(fmt::format("{}: unknown field kind '{}' (expected opcode, tokens, sram_addr, ddr_addr, "
                            "size, shape, imm, flag or enum)",
                            where_text, k));
  }

  FieldSpec load_field(const YAML::Node& n) {
    util::reject_unknown_keys(n, {"name", "bits", "kind", "min", "max", "default", "signed", "values", "doc"}, src_,
                        "a field");
    FieldSpec f;
    f.name = util::read_string(need(n, "name"), "name", src_);
    const std::string w = util::where(src_, n);
    const YAML::Node bits = need(n, "bits");
    if (!bits.IsSequence() || bits.size() != 2)
      throw Error(fmt::format("{}: field '{}': 'bits' must be [msb, lsb]", w, f.name));
    const int64_t msb = util::read_int(bits[0], "bits", src_, 0, 4095);
    const int64_t lsb = util::read_int(bits[1], "bits", src_, 0, 4095);
    if (msb < lsb) throw Error(fmt::format("{}: field '{}': bits [{}, {}] must be [msb, lsb] with msb >= lsb", w, f.name, msb, lsb));
    if (msb >= width_)
      throw Error(fmt::format("{}: field '{}': bits [{}, {}] exceed the instruction width of {} bits", w, f.name,
                              msb, lsb, width_));
    f.lsb = static_cast<unsigned>(lsb);
    f.width = static_cast<unsigned>(msb - lsb + 1);
    if (f.width > 32) throw Error(fmt::format("{}: field '{}' is {} bits wide; at most 32 are supported", w, f.name, f.width));
    f.kind = parse_kind(util::read_string(need(n, "kind"), "kind", src_), w);
    if (f.kind == FieldKind::Flag && f.width != 1)
      throw Error(fmt::format("{}: flag field '{}' must be 1 bit wide", w, f.name));
    if (n["signed"]) f.is_signed = util::read_bool(n["signed"], "signed", src_);
    const int64_t lo = f.is_signed ? -(int64_t{1} << (f.width - 1)) : 0;
    const int64_t hi = f.is_signed ? (int64_t{1} << (f.width - 1)) - 1 : (int64_t{1} << f.width) - 1;
    f.min = n["min"] ? util::read_int(n["min"], "min", src_, lo, hi) : lo;
    f.max = n["max"] ? util::read_int(n["max"], "max", src_, f.min, hi) : hi;
    if (n["values"]) load_enum(n["values"], f, w);
    else if (f.kind == FieldKind::Enum) throw Error(fmt::format("{}: enum field '{}' needs 'values'", w, f.name));
    if (n["default"]) f.default_value = util::read_int(n["default"], "default", src_, f.min, f.max);
    if (n["doc"]) f.doc = util::read_string(n["doc"], "doc", src_);
    return f;
  }

  void load_enum(const YAML::Node& values, FieldSpec& f, const std::string& w) {
    util::require_map(values, src_, "'values'");
    for (const auto& kv : values) {
      const auto v = util::read_int(kv.second, kv.first.as<std::string>(), src_, f.min, f.max);
      f.enum_values.emplace_back(kv.first.as<std::string>(), static_cast<uint32_t>(v));
    }
    if (f.enum_values.empty()) throw Error(fmt::format("{}: field '{}' has empty 'values'", w, f.name));
  }

  std::vector<FieldSpec> load_fields(const YAML::Node& list, std::string_view owner) {
    if (!list.IsSequence()) throw Error(fmt::format("{}: fields of '{}' must be a list", util::where(src_, list), owner));
    std::vector<FieldSpec> out;
    for (const auto& n : list) out.push_back(load_field(n));
    return out;
  }

  // No two fields may share a bit or a name: an encoding would silently lose one.
  void check_layout(const InstrSpec& s, const YAML::Node& node) {
    if (s.fields.size() > kMaxFields)
      throw Error(fmt::format("{}: instruction '{}' has {} fields; at most {} are supported", util::where(src_, node),
                              s.mnemonic, s.fields.size(), kMaxFields));
    for (size_t i = 0; i < s.fields.size(); ++i)
      for (size_t j = i + 1; j < s.fields.size(); ++j) {
        const auto &a = s.fields[i], &b = s.fields[j];
        if (a.name == b.name)
          throw Error(fmt::format("{}: instruction '{}' has two fields named '{}'", util::where(src_, node), s.mnemonic, a.name));
        if (a.lsb <= b.msb() && b.lsb <= a.msb())
          throw Error(fmt::format("{}: instruction '{}': fields '{}' [{}, {}] and '{}' [{}, {}] overlap",
                                  util::where(src_, node), s.mnemonic, a.name, a.msb(), a.lsb, b.name, b.msb(), b.lsb));
      }
  }

  Queue parse_queue(const YAML::Node& n) {
    const std::string q = util::read_string(n, "queue", src_);
    for (auto v : {Queue::Load, Queue::Compute, Queue::Store, Queue::Control})
      if (to_string(v) == q) return v;
    throw Error(fmt::format("{}: unknown queue '{}' (expected load, compute, store or control)", util::where(src_, n), q));
  }

  InstrSpec load_instr(const YAML::Node& n, const Isa& isa) {
    util::reject_unknown_keys(n, {"name", "opcode", "queue", "doc", "fields", "operands", "constraints"}, src_,
                        "an instruction");
    InstrSpec s;
    s.mnemonic = util::read_string(need(n, "name"), "name", src_);
    if (const InstrSpec* other = isa.by_mnemonic(s.mnemonic))
      throw Error(fmt::format("{}: instruction '{}' is defined twice{}", util::where(src_, n), s.mnemonic,
                              from_base(*isa.index_of(*other))));
    s.opcode = static_cast<uint32_t>(
        util::read_int(need(n, "opcode"), "opcode", src_, 0, (int64_t{1} << common_[kOpcodeSlot].width) - 1));
    s.queue = parse_queue(need(n, "queue"));
    if (n["doc"]) s.doc = util::read_string(n["doc"], "doc", src_);
    s.fields = common_;
    if (n["fields"]) {
      auto own = load_fields(n["fields"], s.mnemonic);
      s.fields.insert(s.fields.end(), own.begin(), own.end());
    }
    check_layout(s, n);
    for (unsigned i = 0; i < s.fields.size(); ++i) {
      const FieldSpec& f = s.fields[i];
      const uint32_t mask = f.width >= 32 ? ~0u : (1u << f.width) - 1;
      if (f.default_value) s.initial_raw[i] = static_cast<uint32_t>(*f.default_value) & mask;
    }
    s.initial_raw[kOpcodeSlot] = s.opcode;
    plan_encoding(s);
    plan_disassembly(s);
    const auto resolver = [&s](std::string_view name) -> std::optional<Expr::FieldRef> {
      const auto slot = s.field_index(name);
      if (!slot) return std::nullopt;
      return Expr::FieldRef{*slot, s.fields[*slot].is_signed ? s.fields[*slot].width : 0};
    };
    if (n["operands"]) load_operands(n["operands"], s, resolver);
    for (unsigned i = 0; i < s.operands.size(); ++i) s.operands_of_field[s.operands[i].field] |= uint8_t(1u << i);
    if (n["constraints"]) {
      for (const auto& c : n["constraints"])
        s.constraints.push_back(Expr::compile(util::read_string(c, "constraints", src_), resolver, util::where(src_, c)));
    }
    return s;
  }

  void load_operands(const YAML::Node& list, InstrSpec& s, const Expr::FieldResolver& resolver) {
    for (const auto& n : list) {
      util::reject_unknown_keys(n, {"field", "access", "bytes"}, src_, "an operand");
      const std::string w = util::where(src_, n);
      const std::string field = util::read_string(need(n, "field"), "field", src_);
      const auto slot = s.field_index(field);
      if (!slot || !s.fields[*slot].is_address())
        throw Error(fmt::format("{}: operand field '{}' of '{}' must be an sram_addr or ddr_addr field", w, field,
                                s.mnemonic));
      OperandSpec op;
      op.field = *slot;
      op.space = s.fields[*slot].kind == FieldKind::SramAddr ? Space::Sram : Space::Ddr;
      const std::string access = util::read_string(need(n, "access"), "access", src_);
      if (access != "read" && access != "write")
        throw Error(fmt::format("{}: operand access '{}' must be read or write", w, access));
      op.access = access == "read" ? Access::Read : Access::Write;
      op.bytes = Expr::compile(util::read_string(need(n, "bytes"), "bytes", src_), resolver, w);
      s.operands.push_back(std::move(op));
    }
    if (s.operands.size() > kMaxOperands)
      throw Error(fmt::format("{}: instruction '{}' has more than {} operands", util::where(src_, list), s.mnemonic,
                              kMaxOperands));
  }

  // `list` holds the instructions from base_count_ on (an overlay's base is valid already).
  void index_opcodes(Isa& isa, const YAML::Node& list) {
    isa.by_opcode_.assign(size_t{1} << common_[kOpcodeSlot].width, -1);
    for (size_t i = 0; i < isa.instrs_.size(); ++i) {
      auto& slot = isa.by_opcode_[isa.instrs_[i].opcode];
      if (slot >= 0) {
        const auto other = static_cast<size_t>(slot);
        throw Error(fmt::format("{}: instructions '{}'{} and '{}' share opcode {:#x}",
                                util::where(src_, list[i - base_count_]), isa.instrs_[other].mnemonic,
                                from_base(other), isa.instrs_[i].mnemonic, isa.instrs_[i].opcode));
      }
      slot = static_cast<int16_t>(i);
    }
  }

  std::string src_;
  std::vector<std::filesystem::path> chain_;
  unsigned width_ = 0;
  std::vector<FieldSpec> common_;
  size_t base_count_ = 0;  // an overlay's: the instructions of its base
  std::string base_src_;
};

Isa Isa::load_string(std::string_view yaml_text, std::string_view source_name) {
  const YAML::Node root = util::load_yaml_string(yaml_text, source_name);
  try {
    return IsaLoader(source_name).load(root);
  } catch (const YAML::Exception& e) {  // e.g. a scalar where a list was expected
    throw Error(fmt::format("{}:{}: invalid ISA description: {}", source_name, e.mark.line + 1, e.msg));
  }
}

Isa Isa::load_file(const std::filesystem::path& path) { return IsaLoader::load_file(path, {}); }

const Isa& builtin_isa() {
  // Immutable after construction (thread-safe static init): a constant table, not state.
  static const Isa isa = Isa::load_string(builtin_isa_yaml(), "isa/npu_isa.yaml");
  return isa;
}

}  // namespace npuforge::isa
