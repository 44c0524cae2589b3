#pragma once
// A program bundle in memory: the decoded instructions, the memory map, the initial DDR image
// and the NPU it runs on. What the generator produces (gen::GeneratedProgram::bundle), what
// bundle::read_program loads from files (bundle/files.h) and what the simulator and its
// backends take as input.
#include <optional>
#include <string>
#include <vector>

#include "bundle/memmap.h"
#include "isa/instruction.h"
#include "isa/npu_config.h"

namespace npuforge::bundle {

struct Program {
  std::string name;  // for messages (the .bin file's stem, or a test's name)
  const isa::Isa* isa = nullptr;
  std::vector<isa::Instruction> instrs;
  // Absent: the shadow-memory and overlap checkers have no buffers to check against.
  std::optional<MemMap> memmap;
  std::vector<uint8_t> ddr_init;  // initial DDR contents from address 0 (bundle/ddr_image.h)
  isa::NpuConfig config;

  // Checks that the pieces agree (memory-map SRAM size and alignment vs config, DDR image vs
  // ddr_bytes and vs the DDR tensors the memory map needs, memory-map instruction count vs
  // program length); empty when they do, else a message.
  std::string validate() const;
};

}  // namespace npuforge::bundle
