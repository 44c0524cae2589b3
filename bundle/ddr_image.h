#pragma once
// The DDR image of a program bundle (PREFIX.ddr.bin; also what `npuforge sim --out-ddr` writes
// and --expect-ddr reads): header-less raw bytes. Byte i of the file is DDR address i; the
// file's length is the initialised size, and every DDR byte beyond it reads as zero. Two
// images are equal when they are equal after padding the shorter one with zeros
// (compare_images).
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "bundle/memmap.h"
#include "isa/instruction.h"

namespace npuforge::bundle {

// Throw npuforge::Error naming the file when it cannot be read or written.
std::vector<uint8_t> read_ddr_image(const std::filesystem::path& path);
void write_ddr_image(const std::filesystem::path& path, std::span<const uint8_t> image);

// Compares two DDR images as memories: a missing tail counts as zeros. Returns the first
// differing range [addr, addr + bytes) (the run of consecutive differing bytes), or
// bytes == 0 when they are equal.
struct DdrDiff {
  uint64_t addr = 0;
  uint64_t bytes = 0;
  uint64_t total_differing = 0;  // bytes that differ anywhere
};
DdrDiff compare_images(std::span<const uint8_t> expected, std::span<const uint8_t> actual);

// The bytes a program's DDR image must hold, the larger of two needs. (1) Up to the end of the
// last DDR tensor of the memory map that holds its bytes before the program runs
// (MemDdrBuffer::held_at_start: the model's inputs, tensors earlier segments made; compiled
// programs list them, generated ones list no DDR tensors). (2) Up to the last DDR byte an
// instruction reads before an earlier instruction (in program order) wrote it: what any
// program, generated or written by hand, takes from the image. A shorter image would hand
// the program zeros there, which the golden model would agree with: a run that checks nothing.
struct DdrNeed {
  uint64_t bytes = 0;
  const MemDdrBuffer* tensor = nullptr;  // the tensor ending there, or else
  size_t instruction = 0;                // the instruction whose read ends there
  uint64_t read_begin = 0;               // and where that read starts
};
std::optional<DdrNeed> ddr_image_need(const MemMap& map);
std::optional<DdrNeed> ddr_image_need(std::span<const isa::Instruction> instrs);
// Both: the memory map's (when there is one) and the instructions'.
std::optional<DdrNeed> ddr_image_need(const MemMap* map, std::span<const isa::Instruction> instrs);
// "input tensor 'x' [0x1000, 0x2000): 8192 bytes" or
// "instruction 12 (load) reads DDR [0x100, 0x200) before the program writes it"
std::string describe(const DdrNeed& need, std::span<const isa::Instruction> instrs = {});

}  // namespace npuforge::bundle
