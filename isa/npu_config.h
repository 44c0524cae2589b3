#pragma once
// The configurable reference NPU (configs/npu/*.yaml): scratchpad geometry and timing.
#include <cstdint>
#include <filesystem>
#include <string_view>

#include "util/types.h"

namespace npuforge::isa {

struct NpuConfig {
  Bytes sram_bytes{512 * 1024};     // scratchpad capacity
  Bytes alignment{64};              // allocation unit; every buffer starts on a multiple
  uint32_t sram_banks = 8;          // banks, interleaved every bank_width_bytes
  uint32_t bank_width_bytes = 16;   // bytes per bank row (one access per bank per cycle)
  Bytes ddr_bytes{64ull << 20};     // DDR size the programs may use
  uint32_t dma_bytes_per_cycle = 32;
  uint32_t dma_latency_cycles = 50;  // fixed cost of one DMA descriptor
  uint32_t mac_rows = 16;           // MAC array: rows x cols int8 MACs per cycle
  uint32_t mac_cols = 16;
  uint32_t vector_bytes_per_cycle = 32;  // eltwise / pool / move / im2col throughput
  uint32_t compute_latency_cycles = 8;   // pipeline fill of the compute engine
  uint32_t dispatch_latency_cycles = 1;  // fetch + decode of one instruction

  // Throws npuforge::Error naming the file, the field and the allowed range.
  static NpuConfig load_file(const std::filesystem::path& path);
  static NpuConfig load_string(std::string_view yaml_text, std::string_view source_name);
};

}  // namespace npuforge::isa
