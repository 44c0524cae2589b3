#pragma once
// A loaded program bundle: the decoded instructions, the memory map, the initial DDR image
// and the NPU it runs on. What `npuforge sim` and every backend take as input.
//
// DDR image file format (<name>.ddr.bin, also what --out-ddr writes and --expect-ddr reads):
// header-less raw bytes. Byte i of the file is DDR address i; the file's length is the
// initialised size, and every DDR byte beyond it reads as zero. Two images are equal when
// they are equal after padding the shorter one with zeros (sim::compare_images).
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "allocator/memmap.h"
#include "isa/instruction.h"
#include "isa/npu_config.h"

namespace npuforge::sim {

struct Program {
  std::string name;  // for messages (the .bin file's stem, or a test's name)
  const isa::Isa* isa = nullptr;
  std::vector<isa::Instruction> instrs;
  // Absent: the shadow-memory and overlap checkers have no buffers to check against.
  std::optional<allocator::MemMap> memmap;
  std::vector<uint8_t> ddr_init;  // initial DDR contents from address 0
  isa::NpuConfig config;

  // Loads the files; throws npuforge::Error naming the file on bad input. An empty
  // `memmap_path` / `ddr_path` means none (no memory map / all-zero DDR).
  static Program load(const isa::Isa& isa, const std::filesystem::path& bin_path,
                      const std::filesystem::path& memmap_path,
                      const std::filesystem::path& ddr_path, const isa::NpuConfig& config);

  // Checks that the pieces agree (memory-map SRAM size and alignment vs config, DDR image
  // vs ddr_bytes, memory-map instruction count vs program length); empty when they do, else
  // a message.
  std::string validate() const;
};

std::vector<uint8_t> read_ddr_image(const std::filesystem::path& path);
void write_ddr_image(const std::filesystem::path& path, const std::vector<uint8_t>& image);

}  // namespace npuforge::sim
