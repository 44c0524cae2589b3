#pragma once
// The NPU's two memories as plain byte stores: the scratchpad (flat, `sram_bytes` long) and
// DDR (sparse: 4 KiB pages allocated on first write, untouched bytes read as zero).
//
// Every access is bounds-checked: an access outside the memory throws AccessError (an
// npuforge::Error), which executors turn into a checker finding instead of undefined
// behaviour. Addresses are byte addresses; [addr, addr + bytes) is half-open.
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "util/error.h"
#include "isa/instruction.h"
#include "isa/npu_config.h"
#include "util/types.h"

namespace npuforge::sim {

// An access outside a memory. The message names the space, the range and the size.
class AccessError : public Error {
 public:
  AccessError(isa::Space space, uint64_t addr, uint64_t bytes, uint64_t size);
  isa::Space space;
  uint64_t addr;
  uint64_t bytes;
  uint64_t size;  // the memory's size in bytes
};

class Sram {
 public:
  explicit Sram(Bytes size);
  uint64_t size() const { return data_.size(); }
  // Direct views of [addr, addr + bytes); throw AccessError when out of range.
  std::span<uint8_t> view(uint64_t addr, uint64_t bytes);
  std::span<const uint8_t> view(uint64_t addr, uint64_t bytes) const;
  void read(uint64_t addr, std::span<uint8_t> out) const;
  void write(uint64_t addr, std::span<const uint8_t> in);
  const std::vector<uint8_t>& contents() const { return data_; }

 private:
  std::vector<uint8_t> data_;
};

class Ddr {
 public:
  static constexpr uint64_t kPageBytes = 4096;
  explicit Ddr(Bytes size);
  uint64_t size() const { return size_; }
  // Throw AccessError when [addr, addr + out.size()) is outside [0, size()).
  void read(uint64_t addr, std::span<uint8_t> out) const;
  void write(uint64_t addr, std::span<const uint8_t> in);
  // Replaces the contents by `image` at address 0 (the rest reads as zero).
  void load_image(std::span<const uint8_t> image);
  // [0, extent()): the bytes from address 0 up to the highest byte ever written or loaded.
  uint64_t extent() const { return extent_; }
  std::vector<uint8_t> image() const;

 private:
  uint64_t size_;
  uint64_t extent_ = 0;
  std::vector<std::unique_ptr<uint8_t[]>> pages_;  // index = addr / kPageBytes; null = zeros
};

// The state one executor mutates: scratchpad plus DDR, sized from the NPU config.
struct Memory {
  explicit Memory(const isa::NpuConfig& config) : sram(config.sram_bytes), ddr(config.ddr_bytes) {}
  Sram sram;
  Ddr ddr;
};

// Compares two DDR images as memories: a missing tail counts as zeros. Returns the first
// differing range [addr, addr + bytes) (the run of consecutive differing bytes), or
// bytes == 0 when they are equal.
struct DdrDiff {
  uint64_t addr = 0;
  uint64_t bytes = 0;
  uint64_t total_differing = 0;  // bytes that differ anywhere
};
DdrDiff compare_images(std::span<const uint8_t> expected, std::span<const uint8_t> actual);

}  // namespace npuforge::sim
