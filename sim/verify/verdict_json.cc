#include "sim/verify/verdict_json.h"

#include <cstdint>
#include <limits>

#include <fmt/core.h>
#include <yaml-cpp/yaml.h>

#include "util/error.h"
#include "util/text.h"
#include "util/yaml_util.h"

namespace npuforge::sim::verify {
namespace {

using util::json_quote;

std::string finding_json(const Finding& f) {
  return fmt::format(
      "{{\"kind\": \"{}\", \"instr\": {}, \"mnemonic\": {}, \"symbol\": {}, \"space\": \"{}\", \"addr\": {}, "
      "\"bytes\": {}, \"other_instr\": {}, \"other_mnemonic\": {}, \"other_symbol\": {}, \"detail\": {}}}",
      to_string(f.kind), f.instr, json_quote(f.mnemonic), json_quote(f.symbol),
      f.space == isa::Space::Sram ? "sram" : "ddr", f.addr, f.bytes, f.other_instr, json_quote(f.other_mnemonic),
      json_quote(f.other_symbol), json_quote(f.detail));
}

std::string rtl_json(const sc_model::ScStats& st) {
  std::string messages;
  for (const auto& m : st.decoder_messages) messages += (messages.empty() ? "" : ", ") + json_quote(m);
  return fmt::format(
      "{{\"decoded_words\": {}, \"decoder_mismatches\": {}, \"sram_words\": {}, \"sram_bank_conflicts\": {}, "
      "\"compute_tiles\": {}, \"compute_cycles\": {}, \"monitor_errors\": {}, \"decoder_messages\": [{}]}}",
      st.decoded_words, st.decoder_mismatches, st.sram_words, st.sram_bank_conflicts, st.compute_tiles,
      st.compute_cycles, st.monitor_errors, messages);
}

// Reading: every field is required; errors name the source, the line and the field.
struct Reader {
  std::string_view source;

  YAML::Node field(const YAML::Node& map, const char* key) const {
    if (!map.IsMap()) throw Error(fmt::format("{}: expected a JSON object", util::where(source, map)));
    const YAML::Node n = map[key];
    if (!n) throw Error(fmt::format("{}: missing field '{}'", util::where(source, map), key));
    return n;
  }
  uint64_t u64(const YAML::Node& map, const char* key) const {
    return static_cast<uint64_t>(
        util::read_int(field(map, key), key, source, 0, std::numeric_limits<int64_t>::max()));
  }
  int64_t index(const YAML::Node& map, const char* key) const {  // an instruction index or -1
    return util::read_int(field(map, key), key, source, -1, std::numeric_limits<int64_t>::max());
  }
  std::string text(const YAML::Node& map, const char* key) const { return util::read_string(field(map, key), key, source); }
  bool flag(const YAML::Node& map, const char* key) const { return util::read_bool(field(map, key), key, source); }
  YAML::Node list(const YAML::Node& map, const char* key) const {
    const YAML::Node n = field(map, key);
    if (!n.IsSequence()) throw Error(fmt::format("{}: '{}' must be a list", util::where(source, n), key));
    return n;
  }

  FindingKind kind(const YAML::Node& node, std::string_view key) const {
    const std::string name = util::read_string(node, key, source);
    if (const auto k = finding_kind_named(name)) return *k;
    throw Error(fmt::format("{}: '{}': unknown finding kind '{}'", util::where(source, node), key, name));
  }

  Finding finding(const YAML::Node& n) const {
    Finding f;
    f.kind = kind(field(n, "kind"), "kind");
    f.instr = index(n, "instr");
    f.mnemonic = text(n, "mnemonic");
    f.symbol = text(n, "symbol");
    const std::string space = text(n, "space");
    if (space != "sram" && space != "ddr")
      throw Error(fmt::format("{}: 'space' must be sram or ddr, got '{}'", util::where(source, n), space));
    f.space = space == "sram" ? isa::Space::Sram : isa::Space::Ddr;
    f.addr = u64(n, "addr");
    f.bytes = u64(n, "bytes");
    f.other_instr = index(n, "other_instr");
    f.other_mnemonic = text(n, "other_mnemonic");
    f.other_symbol = text(n, "other_symbol");
    f.detail = text(n, "detail");
    return f;
  }

  sc_model::ScStats rtl(const YAML::Node& n) const {
    sc_model::ScStats st;
    st.decoded_words = u64(n, "decoded_words");
    st.decoder_mismatches = u64(n, "decoder_mismatches");
    st.sram_words = u64(n, "sram_words");
    st.sram_bank_conflicts = u64(n, "sram_bank_conflicts");
    st.compute_tiles = u64(n, "compute_tiles");
    st.compute_cycles = u64(n, "compute_cycles");
    st.monitor_errors = u64(n, "monitor_errors");
    for (const YAML::Node& m : list(n, "decoder_messages"))
      st.decoder_messages.push_back(util::read_string(m, "decoder_messages", source));
    return st;
  }
};

}  // namespace

std::string to_json(const Verdict& v) {
  std::string busy, by_kind, kept;
  for (unsigned q = 0; q < isa::kNumQueues; ++q)
    busy += fmt::format("{}\"{}\": {}", q ? ", " : "", isa::to_string(static_cast<isa::Queue>(q)), v.busy_cycles[q]);
  for (size_t k = 0; k < kNumFindingKinds; ++k)
    if (v.by_kind[k])
      by_kind += fmt::format("{}\"{}\": {}", by_kind.empty() ? "" : ", ", to_string(static_cast<FindingKind>(k)),
                             v.by_kind[k]);
  for (const Finding& f : v.kept) kept += (kept.empty() ? "" : ", ") + finding_json(f);
  return fmt::format(
      "{{\"program\": {}, \"pass\": {}, \"completed\": {}, \"backend\": {}, \"program_instructions\": {}, "
      "\"instructions\": {}, \"cycles\": {}, \"busy_cycles\": {{{}}}, \"findings\": {}, \"by_kind\": {{{}}}, "
      "\"first_finding\": {}, \"kept\": [{}]{}}}\n",
      json_quote(v.program), v.pass, v.completed, json_quote(v.backend), v.program_instructions, v.instructions,
      v.cycles, busy, v.findings, by_kind, json_quote(v.first() ? format(*v.first()) : ""), kept,
      v.rtl ? ", \"rtl\": " + rtl_json(*v.rtl) : "");
}

Verdict parse_json(std::string_view text, std::string_view source) {
  const YAML::Node n = util::load_yaml_string(text, source);
  const Reader r{source};
  Verdict v;
  v.program = r.text(n, "program");
  v.pass = r.flag(n, "pass");
  v.completed = r.flag(n, "completed");
  v.backend = r.text(n, "backend");
  v.program_instructions = r.u64(n, "program_instructions");
  v.instructions = r.u64(n, "instructions");
  v.cycles = r.u64(n, "cycles");
  const YAML::Node busy = r.field(n, "busy_cycles");
  for (unsigned q = 0; q < isa::kNumQueues; ++q)
    v.busy_cycles[q] = r.u64(busy, std::string(isa::to_string(static_cast<isa::Queue>(q))).c_str());
  v.findings = r.u64(n, "findings");
  const YAML::Node by_kind = r.field(n, "by_kind");
  if (!by_kind.IsMap()) throw Error(fmt::format("{}: 'by_kind' must be an object", util::where(source, by_kind)));
  for (const auto& kv : by_kind) {
    const FindingKind k = r.kind(kv.first, "by_kind");
    v.by_kind[static_cast<size_t>(k)] = static_cast<uint64_t>(
        util::read_int(kv.second, to_string(k), source, 0, std::numeric_limits<int64_t>::max()));
  }
  for (const YAML::Node& f : r.list(n, "kept")) v.kept.push_back(r.finding(f));
  if (n["rtl"]) v.rtl = r.rtl(n["rtl"]);
  if (v.pass != pass_rule(v))
    throw Error(fmt::format("{}: 'pass' is {} but the counts say {}", source, v.pass, pass_rule(v)));
  return v;
}

}  // namespace npuforge::sim::verify
