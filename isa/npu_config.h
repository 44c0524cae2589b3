#pragma once
// The configurable reference NPU (configs/npu/*.yaml): scratchpad geometry and timing.
//
// One source of the defaults: configs/npu/default.yaml, embedded in the binary at build time
// (like the ISA). A default-constructed NpuConfig is that file; a config file may leave
// fields out, which then keep the built-in file's values. There are no C++ initialisers
// that could drift from the file.
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>

#include "util/types.h"

namespace npuforge::isa {

struct NpuConfig {
  // All 0 only inside the loader; every NpuConfig a caller sees comes from a YAML file.
  Bytes sram_bytes;                      // scratchpad capacity
  Bytes alignment;                       // allocation unit; every buffer starts on a multiple
  uint32_t sram_banks = 0;               // banks, interleaved every bank_width_bytes
  uint32_t bank_width_bytes = 0;         // bytes per bank row (one access per bank per cycle)
  Bytes ddr_bytes;                       // DDR size the programs may use
  uint32_t dma_bytes_per_cycle = 0;
  uint32_t dma_latency_cycles = 0;       // fixed cost of one DMA descriptor
  uint32_t mac_rows = 0;                 // MAC array: rows x cols int8 MACs per cycle
  uint32_t mac_cols = 0;
  uint32_t vector_bytes_per_cycle = 0;   // eltwise / pool / move / im2col throughput
  uint32_t compute_latency_cycles = 0;   // pipeline fill of the compute engine
  uint32_t dispatch_latency_cycles = 0;  // fetch + decode of one instruction
  // Deadlock watchdog of the SystemC model: no instruction retires for this many cycles
  // (beyond the expected duration of those in flight) -> a `deadlock` finding, run incomplete.
  uint32_t deadlock_cycles = 0;

  // The built-in reference NPU: configs/npu/default.yaml as embedded at build time.
  NpuConfig();

  // Fields the file leaves out keep the built-in values. Throw npuforge::Error naming the
  // file, the field and the allowed range.
  static NpuConfig load_file(const std::filesystem::path& path);
  static NpuConfig load_string(std::string_view yaml_text, std::string_view source_name);

  bool operator==(const NpuConfig&) const = default;

 private:
  struct Blank {};
  explicit NpuConfig(Blank) {}
  friend class NpuConfigLoader;
};

// One field of NpuConfig: its YAML key, allowed range and accessors. The table drives the
// loader and lets tests compare configs field by field.
struct NpuField {
  std::string_view key;
  int64_t min = 0, max = 0;
  uint64_t (*get)(const NpuConfig&) = nullptr;
  void (*set)(NpuConfig&, uint64_t) = nullptr;
};
std::span<const NpuField> npu_config_fields();

// The text of configs/npu/default.yaml as embedded at build time.
std::string_view builtin_npu_yaml();
inline constexpr std::string_view kBuiltinNpuSource = "configs/npu/default.yaml";

// What a command runs on: the file given with --npu, or the built-in default when `path`
// is empty. `text` is the YAML that was parsed (output headers hash it), `source` names it.
struct NpuConfigSource {
  NpuConfig config;
  std::string source;
  std::string text;
};
NpuConfigSource load_npu_config(const std::filesystem::path& path);

}  // namespace npuforge::isa
