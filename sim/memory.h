#pragma once
// The NPU's two memories as plain byte stores: the scratchpad (flat, `sram_bytes` long) and
// DDR (sparse: 4 KiB pages allocated on first write; an untouched byte reads from the loaded
// image, or as zero past it).
//
// Every access is bounds-checked: an access outside the memory throws AccessError (an
// npuforge::Error), which executors turn into a checker finding instead of undefined
// behaviour. Addresses are byte addresses; [addr, addr + bytes) is half-open.
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "bundle/ddr_image.h"
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
  uint64_t size() const { return size_; }
  // Direct views of [addr, addr + bytes); throw AccessError when out of range.
  std::span<uint8_t> view(uint64_t addr, uint64_t bytes);
  std::span<const uint8_t> view(uint64_t addr, uint64_t bytes) const;
  void read(uint64_t addr, std::span<uint8_t> out) const;
  void write(uint64_t addr, std::span<const uint8_t> in);
  std::span<const uint8_t> contents() const { return {data_.get(), size_}; }

 private:
  struct Free {
    void operator()(uint8_t* p) const { std::free(p); }
  };
  uint64_t size_;
  // calloc, not a zero-filled vector: a large scratchpad comes as untouched zero pages, so a
  // run faults in only the pages it uses (the zero fill faulted in all 128 pages of a
  // regression seed's 512 KiB, in the backend and again in the golden model).
  std::unique_ptr<uint8_t[], Free> data_;
};

class Ddr {
 public:
  static constexpr uint64_t kPageBytes = 4096;
  explicit Ddr(Bytes size);
  uint64_t size() const { return size_; }
  // Throw AccessError when [addr, addr + out.size()) is outside [0, size()).
  void read(uint64_t addr, std::span<uint8_t> out) const;
  void write(uint64_t addr, std::span<const uint8_t> in);
  // Replaces the contents by `image` at address 0 (the rest reads as zero). The image is
  // referenced, not copied (a page is copied when first written): it must outlive this Ddr,
  // as a bundle::Program's ddr_init does for every executor of that program. A regression seed's
  // DDR image is megabytes of which a run writes a few pages: copying it into pages cost a
  // page fault per 4 KiB in every executor.
  void load_image(std::span<const uint8_t> image);
  // [0, extent()): the bytes from address 0 up to the highest byte ever written or loaded.
  uint64_t extent() const { return extent_; }
  std::vector<uint8_t> image() const;
  uint8_t at(uint64_t addr) const;  // the byte at `addr` (zero past size())
  // True when image() and `actual` are equal as memories (a missing tail counts as zeros),
  // found page by page without building the image.
  bool same_as(std::span<const uint8_t> actual) const;
  // The same against another memory; when both loaded the same image (the backend's and the
  // golden model's DDR of one program), only the pages either of them wrote are compared.
  bool same_as(const Ddr& actual) const;

 private:
  uint64_t size_;
  uint64_t extent_ = 0;
  std::span<const uint8_t> base_;                  // the loaded image (not owned)
  std::vector<std::unique_ptr<uint8_t[]>> pages_;  // index = addr / kPageBytes; null = base_ or zeros
  // The written page holding `addr`, or null.
  const uint8_t* page(uint64_t addr) const {
    const uint64_t p = addr / kPageBytes;
    return p < pages_.size() ? pages_[p].get() : nullptr;
  }
  // Bytes of pages never written: base_'s, then zeros.
  void read_unwritten(uint64_t addr, std::span<uint8_t> out) const;
};

// The state one executor mutates: scratchpad plus DDR, sized from the NPU config.
struct Memory {
  explicit Memory(const isa::NpuConfig& config) : sram(config.sram_bytes), ddr(config.ddr_bytes) {}
  Sram sram;
  Ddr ddr;
};

// bundle::compare_images(expected.image(), actual) without building the image (a passing
// seed compares page by page against `expected`'s written pages and its loaded image).
bundle::DdrDiff compare_images(const Ddr& expected, std::span<const uint8_t> actual);
bundle::DdrDiff compare_images(const Ddr& expected, const Ddr& actual);

}  // namespace npuforge::sim
