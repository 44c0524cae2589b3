#include "sim/program.h"

#include <fstream>
#include <iterator>

#include <fmt/core.h>

#include "util/error.h"
#include "util/file_io.h"

namespace npuforge::sim {

std::vector<uint8_t> read_ddr_image(const std::filesystem::path& path) {
  return util::read_binary_file(path, "DDR image");
}

void write_ddr_image(const std::filesystem::path& path, const std::vector<uint8_t>& image) {
  util::write_file(path, image, "DDR image");
}

Program Program::load(const isa::Isa& isa, const std::filesystem::path& bin_path,
                      const std::filesystem::path& memmap_path,
                      const std::filesystem::path& ddr_path, const isa::NpuConfig& config) {
  Program p;
  p.name = bin_path.stem().string();
  p.isa = &isa;
  p.config = config;
  const auto bytes = util::read_binary_file(bin_path, "program binary");
  p.instrs = isa::decode_program(isa, bytes, bin_path.string());
  if (!memmap_path.empty()) p.memmap = allocator::MemMap::load_file(memmap_path);
  if (!ddr_path.empty()) p.ddr_init = read_ddr_image(ddr_path);
  if (auto err = p.validate(); !err.empty()) throw Error(err);
  return p;
}

std::string Program::validate() const {
  if (ddr_init.size() > config.ddr_bytes.value) {
    return fmt::format("{}: DDR image of {} bytes exceeds ddr_bytes {} of the NPU config", name,
                       ddr_init.size(), config.ddr_bytes.value);
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

}  // namespace npuforge::sim
