#include "bundle/program.h"

#include <fmt/core.h>

#include "bundle/ddr_image.h"

namespace npuforge::bundle {

std::string Program::validate() const {
  if (ddr_init.size() > config.ddr_bytes.value) {
    return fmt::format("{}: DDR image of {} bytes exceeds ddr_bytes {} of the NPU config", name,
                       ddr_init.size(), config.ddr_bytes.value);
  }
  if (const std::optional<DdrNeed> need = ddr_image_need(memmap ? &*memmap : nullptr, instrs);
      need && need->bytes > ddr_init.size()) {
    return fmt::format("{}: DDR image of {} bytes is shorter than {} needs: {}", name, ddr_init.size(),
                       need->tensor ? "its memory map" : "the program", describe(*need, instrs));
  }
  if (!memmap) return {};
  if (memmap->sram_bytes.value != 0 && memmap->sram_bytes != config.sram_bytes) {
    return fmt::format("{}: memory map is for sram_bytes {}, the NPU config has {}", name,
                       memmap->sram_bytes.value, config.sram_bytes.value);
  }
  // Buffers placed for another allocation unit may straddle what this NPU treats as one.
  if (memmap->alignment != config.alignment) {
    return fmt::format("{}: memory map is for alignment {}, the NPU config has {}", name,
                       memmap->alignment.value, config.alignment.value);
  }
  if (memmap->instructions != 0 && memmap->instructions != static_cast<int64_t>(instrs.size())) {
    return fmt::format("{}: memory map is for {} instructions, the program has {}", name,
                       memmap->instructions, instrs.size());
  }
  return {};
}

}  // namespace npuforge::bundle
