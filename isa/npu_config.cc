#include "isa/npu_config.h"

#include <algorithm>
#include <type_traits>

#include <fmt/core.h>

#include "util/error.h"
#include "util/file_io.h"
#include "util/yaml_util.h"

namespace npuforge::isa {

// Reads a YAML node into a config, field by field, over a base config.
class NpuConfigLoader {
 public:
  static NpuConfig blank() { return NpuConfig(NpuConfig::Blank{}); }
  static NpuConfig parse(const YAML::Node& root, std::string_view src, NpuConfig base, bool require_all);
};

namespace {

template <auto Member>
uint64_t get_field(const NpuConfig& c) {
  if constexpr (std::is_same_v<std::remove_cvref_t<decltype(c.*Member)>, Bytes>) {
    return (c.*Member).value;
  } else {
    return c.*Member;
  }
}

template <auto Member>
void set_field(NpuConfig& c, uint64_t v) {
  if constexpr (std::is_same_v<std::remove_cvref_t<decltype(c.*Member)>, Bytes>) {
    (c.*Member).value = v;
  } else {
    c.*Member = static_cast<uint32_t>(v);
  }
}

template <auto Member>
constexpr NpuField field(std::string_view key, int64_t min, int64_t max) {
  return {key, min, max, &get_field<Member>, &set_field<Member>};
}

constexpr NpuField kFields[] = {
    field<&NpuConfig::sram_bytes>("sram_bytes", 1024, int64_t{1} << 24),  // addresses are 24-bit fields
    field<&NpuConfig::alignment>("alignment", 1, 4096),
    field<&NpuConfig::sram_banks>("sram_banks", 1, 64),
    field<&NpuConfig::bank_width_bytes>("bank_width_bytes", 1, 256),
    field<&NpuConfig::ddr_bytes>("ddr_bytes", 4096, int64_t{1} << 32),  // DDR addresses are 32-bit fields
    field<&NpuConfig::dma_bytes_per_cycle>("dma_bytes_per_cycle", 1, 4096),
    field<&NpuConfig::dma_latency_cycles>("dma_latency_cycles", 0, 100000),
    field<&NpuConfig::mac_rows>("mac_rows", 1, 1024),
    field<&NpuConfig::mac_cols>("mac_cols", 1, 1024),
    field<&NpuConfig::vector_bytes_per_cycle>("vector_bytes_per_cycle", 1, 4096),
    field<&NpuConfig::compute_latency_cycles>("compute_latency_cycles", 0, 100000),
    field<&NpuConfig::dispatch_latency_cycles>("dispatch_latency_cycles", 0, 100000),
    field<&NpuConfig::deadlock_cycles>("deadlock_cycles", 16, 1000000000),
};

// Fails to compile when a member is added to NpuConfig without a row in kFields above.
[[maybe_unused]] void every_member_has_a_row(const NpuConfig& c) {
  [[maybe_unused]] const auto& [a, b, c3, d, e, f, g, h, i, j, k, l, m] = c;
  static_assert(std::size(kFields) == 13, "one kFields row per NpuConfig member");
}

// Like util::reject_unknown_keys, over the keys of kFields.
void reject_unknown(const YAML::Node& root, std::string_view src) {
  util::require_map(root, src, "the NPU config");
  for (const auto& kv : root) {
    const std::string key = util::key_string(kv.first, src);
    if (std::any_of(std::begin(kFields), std::end(kFields), [&](const NpuField& f) { return f.key == key; })) continue;
    std::string list;
    for (const auto& f : kFields) list += fmt::format("{}{}", list.empty() ? "" : ", ", f.key);
    throw Error(fmt::format("{}: unknown key '{}' in the NPU config (expected one of: {})",
                            util::where(src, kv.first), key, list));
  }
}

// The scratchpad's bank geometry: the bank of a byte is (addr / bank_width_bytes) %
// sram_banks, which hardware (and the Verilated scratchpad) takes from address bits, so both
// are powers of two, and the SRAM is whole rows across all banks (no bank shorter than the
// others). A geometry that breaks this is refused here, naming the field, rather than
// simulated with a bank mapping no hardware has.
void check_geometry(const NpuConfig& c, const YAML::Node& root, std::string_view src) {
  auto at = [&](std::string_view key) { return util::where(src, root[std::string(key)]); };
  auto pow2 = [](uint64_t v) { return v != 0 && (v & (v - 1)) == 0; };
  if (!pow2(c.sram_banks))
    throw Error(fmt::format("{}: 'sram_banks' = {} must be a power of two (the bank is taken from address bits)",
                            at("sram_banks"), c.sram_banks));
  if (!pow2(c.bank_width_bytes))
    throw Error(fmt::format("{}: 'bank_width_bytes' = {} must be a power of two (the bank is taken from address bits)",
                            at("bank_width_bytes"), c.bank_width_bytes));
  const uint64_t row = uint64_t{c.sram_banks} * c.bank_width_bytes;
  if (c.sram_bytes.value % row != 0)
    throw Error(fmt::format("{}: 'sram_bytes' = {} must be a multiple of sram_banks x bank_width_bytes ({} x {} = {}): "
                            "every bank has the same number of rows",
                            at("sram_bytes"), c.sram_bytes.value, c.sram_banks, c.bank_width_bytes, row));
}

const NpuConfig& builtin() {
  // Immutable after construction (thread-safe static init): a constant, not state.
  static const NpuConfig config = NpuConfigLoader::parse(
      util::load_yaml_string(builtin_npu_yaml(), kBuiltinNpuSource), kBuiltinNpuSource,
      NpuConfigLoader::blank(), /*require_all=*/true);
  return config;
}

}  // namespace

NpuConfig NpuConfigLoader::parse(const YAML::Node& root, std::string_view src, NpuConfig c, bool require_all) {
  const bool empty = !root || root.IsNull();
  if (!empty) reject_unknown(root, src);
  for (const auto& f : kFields) {
    const YAML::Node node = empty ? YAML::Node() : root[std::string(f.key)];
    if (!empty && node) {
      f.set(c, static_cast<uint64_t>(util::read_int(node, f.key, src, f.min, f.max)));
    } else if (require_all) {
      throw Error(fmt::format("{}: the built-in NPU config has no '{}'", src, f.key));
    }
  }
  const uint64_t a = c.alignment.value;
  if ((a & (a - 1)) != 0)
    throw Error(fmt::format("{}: 'alignment' = {} must be a power of two", util::where(src, root["alignment"]), a));
  if (c.sram_bytes.value % a != 0)
    throw Error(fmt::format("{}: 'sram_bytes' = {} must be a multiple of 'alignment' ({})",
                            util::where(src, root["sram_bytes"]), c.sram_bytes.value, a));
  check_geometry(c, root, src);
  return c;
}

NpuConfig::NpuConfig() : NpuConfig(builtin()) {}

std::span<const NpuField> npu_config_fields() { return kFields; }

NpuConfig NpuConfig::load_string(std::string_view yaml_text, std::string_view source_name) {
  return NpuConfigLoader::parse(util::load_yaml_string(yaml_text, source_name), source_name, builtin(), false);
}

NpuConfig NpuConfig::load_file(const std::filesystem::path& path) {
  return NpuConfigLoader::parse(util::load_yaml_file(path), path.string(), builtin(), false);
}

NpuConfigSource load_npu_config(const std::filesystem::path& path) {
  if (path.empty()) return {builtin(), std::string(kBuiltinNpuSource), std::string(builtin_npu_yaml())};
  std::string text = util::read_file(path, "NPU config");
  NpuConfig config = NpuConfig::load_string(text, path.string());
  return {config, path.string(), std::move(text)};
}

}  // namespace npuforge::isa
