#include "sim/memory.h"

#include <algorithm>
#include <cstring>
#include <new>
#include <vector>

#include <fmt/core.h>

namespace npuforge::sim {
namespace {

std::string access_message(isa::Space space, uint64_t addr, uint64_t bytes, uint64_t size) {
  return fmt::format("{} access [{:#x}, {:#x}) ({} bytes) outside the {} bytes of {}",
                     space == isa::Space::Sram ? "sram" : "ddr", addr, addr + bytes, bytes, size,
                     space == isa::Space::Sram ? "scratchpad" : "DDR");
}

// Overflow-safe "[addr, addr + bytes) inside [0, size)".
bool inside(uint64_t addr, uint64_t bytes, uint64_t size) {
  return addr <= size && bytes <= size - addr;
}

}  // namespace

AccessError::AccessError(isa::Space space_, uint64_t addr_, uint64_t bytes_, uint64_t size_)
    : Error(access_message(space_, addr_, bytes_, size_)),
      space(space_), addr(addr_), bytes(bytes_), size(size_) {}

Sram::Sram(Bytes size) : size_(size.value), data_(static_cast<uint8_t*>(std::calloc(std::max<uint64_t>(size.value, 1), 1))) {
  if (!data_) throw std::bad_alloc();
}

std::span<uint8_t> Sram::view(uint64_t addr, uint64_t bytes) {
  if (!inside(addr, bytes, size())) throw AccessError(isa::Space::Sram, addr, bytes, size());
  return {data_.get() + addr, bytes};
}

std::span<const uint8_t> Sram::view(uint64_t addr, uint64_t bytes) const {
  if (!inside(addr, bytes, size())) throw AccessError(isa::Space::Sram, addr, bytes, size());
  return {data_.get() + addr, bytes};
}

void Sram::read(uint64_t addr, std::span<uint8_t> out) const {
  auto v = view(addr, out.size());
  std::copy(v.begin(), v.end(), out.begin());
}

void Sram::write(uint64_t addr, std::span<const uint8_t> in) {
  auto v = view(addr, in.size());
  std::memmove(v.data(), in.data(), in.size());
}

Ddr::Ddr(Bytes size) : size_(size.value) {}  // pages_ grows with the highest page written

void Ddr::read_unwritten(uint64_t addr, std::span<uint8_t> out) const {
  const uint64_t from_base = addr < base_.size() ? std::min<uint64_t>(out.size(), base_.size() - addr) : 0;
  if (from_base > 0) std::memcpy(out.data(), base_.data() + addr, from_base);
  std::memset(out.data() + from_base, 0, out.size() - from_base);
}

void Ddr::read(uint64_t addr, std::span<uint8_t> out) const {
  if (!inside(addr, out.size(), size_)) throw AccessError(isa::Space::Ddr, addr, out.size(), size_);
  uint64_t done = 0;
  while (done < out.size()) {
    const uint64_t a = addr + done;
    const uint64_t in_page = a % kPageBytes;
    const uint64_t n = std::min<uint64_t>(kPageBytes - in_page, out.size() - done);
    const uint8_t* page = this->page(a);
    if (page) {
      std::memcpy(out.data() + done, page + in_page, n);
    } else {
      read_unwritten(a, out.subspan(done, n));
    }
    done += n;
  }
}

void Ddr::write(uint64_t addr, std::span<const uint8_t> in) {
  if (!inside(addr, in.size(), size_)) throw AccessError(isa::Space::Ddr, addr, in.size(), size_);
  uint64_t done = 0;
  while (done < in.size()) {
    const uint64_t a = addr + done;
    const uint64_t in_page = a % kPageBytes;
    const uint64_t n = std::min<uint64_t>(kPageBytes - in_page, in.size() - done);
    if (a / kPageBytes >= pages_.size()) pages_.resize(a / kPageBytes + 1);
    auto& page = pages_[a / kPageBytes];
    if (!page) {  // first write: the page starts as what it read until now
      page = std::make_unique_for_overwrite<uint8_t[]>(kPageBytes);
      read_unwritten(a - in_page, {page.get(), kPageBytes});
    }
    std::memmove(page.get() + in_page, in.data() + done, n);
    done += n;
  }
  if (!in.empty()) extent_ = std::max(extent_, addr + in.size());
}

void Ddr::load_image(std::span<const uint8_t> image) {
  if (!inside(0, image.size(), size_)) throw AccessError(isa::Space::Ddr, 0, image.size(), size_);
  pages_.clear();
  base_ = image;
  extent_ = image.size();
}

std::vector<uint8_t> Ddr::image() const {
  std::vector<uint8_t> out(extent_);
  read(0, out);
  return out;
}

uint8_t Ddr::at(uint64_t addr) const {
  if (addr >= size_) return 0;
  uint8_t b = 0;
  read(addr, {&b, 1});
  return b;
}

bool Ddr::same_as(std::span<const uint8_t> actual) const {
  const uint64_t n = std::max<uint64_t>(extent_, actual.size());
  if (n > size_) return false;  // `actual` holds bytes this memory cannot: not equal unless zeros
  for (uint64_t a = 0; a < n;) {
    const uint64_t len = std::min<uint64_t>(kPageBytes - a % kPageBytes, n - a);
    const uint8_t* page = this->page(a);
    // This memory's bytes [a, a + len): a written page, else the loaded image, else zeros.
    const uint8_t* mine = page ? page + a % kPageBytes : nullptr;
    uint64_t from_mine = page ? len : (a < base_.size() ? std::min<uint64_t>(len, base_.size() - a) : 0);
    if (!page && from_mine > 0) mine = base_.data() + a;
    const uint64_t from_actual = a < actual.size() ? std::min<uint64_t>(len, actual.size() - a) : 0;
    const uint64_t both = std::min(from_mine, from_actual);
    if (both > 0 && std::memcmp(mine, actual.data() + a, both) != 0) return false;
    // Past one side's end that side reads as zero.
    for (uint64_t k = both; k < from_mine; ++k) if (mine[k] != 0) return false;
    for (uint64_t k = both; k < from_actual; ++k) if (actual[a + k] != 0) return false;
    a += len;
  }
  return true;
}

bool Ddr::same_as(const Ddr& actual) const {
  if (base_.data() != actual.base_.data() || base_.size() != actual.base_.size() || size_ != actual.size_)
    return same_as(actual.image());
  // A page neither side wrote reads from the same image on both: equal. Past size() both
  // read as zero (nothing is written there), so whole pages compare.
  std::vector<uint8_t> mine(kPageBytes), theirs(kPageBytes);
  const size_t pages = std::max(pages_.size(), actual.pages_.size());
  for (size_t p = 0; p < pages; ++p) {
    const uint64_t a = p * kPageBytes;
    const uint8_t* x = page(a);
    const uint8_t* y = actual.page(a);
    if (!x && !y) continue;
    if (!x) read_unwritten(a, mine), x = mine.data();
    if (!y) actual.read_unwritten(a, theirs), y = theirs.data();
    if (std::memcmp(x, y, kPageBytes) != 0) return false;
  }
  return true;
}

bundle::DdrDiff compare_images(const Ddr& expected, std::span<const uint8_t> actual) {
  if (expected.same_as(actual)) return bundle::DdrDiff{};
  return bundle::compare_images(expected.image(), actual);  // a failing seed: count byte by byte
}

bundle::DdrDiff compare_images(const Ddr& expected, const Ddr& actual) {
  if (expected.same_as(actual)) return bundle::DdrDiff{};
  return bundle::compare_images(expected.image(), actual.image());  // a failing seed: count byte by byte
}

}  // namespace npuforge::sim
