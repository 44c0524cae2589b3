#include "isa/npu_config.h"

#include <fmt/core.h>

#include "util/error.h"
#include "util/yaml_util.h"

namespace npuforge::isa {
namespace {

NpuConfig from_yaml(const YAML::Node& root, std::string_view src) {
  NpuConfig c;
  if (!root || root.IsNull()) return c;
  util::reject_unknown_keys(root,
                      {"sram_bytes", "alignment", "sram_banks", "bank_width_bytes", "ddr_bytes",
                       "dma_bytes_per_cycle", "dma_latency_cycles", "mac_rows", "mac_cols",
                       "vector_bytes_per_cycle", "compute_latency_cycles", "dispatch_latency_cycles"},
                      src, "the NPU config");
  auto u32 = [&](const char* key, uint32_t& out, int64_t lo, int64_t hi) {
    if (root[key]) out = static_cast<uint32_t>(util::read_int(root[key], key, src, lo, hi));
  };
  auto bytes = [&](const char* key, Bytes& out, int64_t lo, int64_t hi) {
    if (root[key]) out = Bytes{static_cast<uint64_t>(util::read_int(root[key], key, src, lo, hi))};
  };
  bytes("sram_bytes", c.sram_bytes, 1024, int64_t{1} << 24);  // addresses are 24-bit fields
  bytes("alignment", c.alignment, 1, 4096);
  u32("sram_banks", c.sram_banks, 1, 64);
  u32("bank_width_bytes", c.bank_width_bytes, 1, 256);
  bytes("ddr_bytes", c.ddr_bytes, 4096, int64_t{1} << 32);     // DDR addresses are 32-bit fields
  u32("dma_bytes_per_cycle", c.dma_bytes_per_cycle, 1, 4096);
  u32("dma_latency_cycles", c.dma_latency_cycles, 0, 100000);
  u32("mac_rows", c.mac_rows, 1, 1024);
  u32("mac_cols", c.mac_cols, 1, 1024);
  u32("vector_bytes_per_cycle", c.vector_bytes_per_cycle, 1, 4096);
  u32("compute_latency_cycles", c.compute_latency_cycles, 0, 100000);
  u32("dispatch_latency_cycles", c.dispatch_latency_cycles, 0, 100000);
  const uint64_t a = c.alignment.value;
  if ((a & (a - 1)) != 0)
    throw Error(fmt::format("{}: 'alignment' = {} must be a power of two", util::where(src, root["alignment"]), a));
  if (c.sram_bytes.value % a != 0)
    throw Error(fmt::format("{}: 'sram_bytes' = {} must be a multiple of 'alignment' ({})",
                            util::where(src, root["sram_bytes"]), c.sram_bytes.value, a));
  return c;
}

}  // namespace

NpuConfig NpuConfig::load_string(std::string_view yaml_text, std::string_view source_name) {
  return from_yaml(util::load_yaml_string(yaml_text, source_name), source_name);
}

NpuConfig NpuConfig::load_file(const std::filesystem::path& path) {
  return from_yaml(util::load_yaml_file(path), path.string());
}

}  // namespace npuforge::isa
