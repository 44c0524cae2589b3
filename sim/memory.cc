#include "sim/memory.h"

#include <algorithm>
#include <cstring>

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

Sram::Sram(Bytes size) : data_(size.value, 0) {}

std::span<uint8_t> Sram::view(uint64_t addr, uint64_t bytes) {
  if (!inside(addr, bytes, size())) throw AccessError(isa::Space::Sram, addr, bytes, size());
  return {data_.data() + addr, bytes};
}

std::span<const uint8_t> Sram::view(uint64_t addr, uint64_t bytes) const {
  if (!inside(addr, bytes, size())) throw AccessError(isa::Space::Sram, addr, bytes, size());
  return {data_.data() + addr, bytes};
}

void Sram::read(uint64_t addr, std::span<uint8_t> out) const {
  auto v = view(addr, out.size());
  std::copy(v.begin(), v.end(), out.begin());
}

void Sram::write(uint64_t addr, std::span<const uint8_t> in) {
  auto v = view(addr, in.size());
  std::memmove(v.data(), in.data(), in.size());
}

Ddr::Ddr(Bytes size) : size_(size.value), pages_((size.value + kPageBytes - 1) / kPageBytes) {}

void Ddr::read(uint64_t addr, std::span<uint8_t> out) const {
  if (!inside(addr, out.size(), size_)) throw AccessError(isa::Space::Ddr, addr, out.size(), size_);
  uint64_t done = 0;
  while (done < out.size()) {
    const uint64_t a = addr + done;
    const uint64_t in_page = a % kPageBytes;
    const uint64_t n = std::min<uint64_t>(kPageBytes - in_page, out.size() - done);
    const auto& page = pages_[a / kPageBytes];
    if (page) {
      std::memcpy(out.data() + done, page.get() + in_page, n);
    } else {
      std::memset(out.data() + done, 0, n);
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
    auto& page = pages_[a / kPageBytes];
    if (!page) page = std::make_unique<uint8_t[]>(kPageBytes);  // value-initialised: zeros
    std::memmove(page.get() + in_page, in.data() + done, n);
    done += n;
  }
  if (!in.empty()) extent_ = std::max(extent_, addr + in.size());
}

void Ddr::load_image(std::span<const uint8_t> image) {
  for (auto& p : pages_) p.reset();
  extent_ = 0;
  write(0, image);
}

std::vector<uint8_t> Ddr::image() const {
  std::vector<uint8_t> out(extent_);
  read(0, out);
  return out;
}

DdrDiff compare_images(std::span<const uint8_t> expected, std::span<const uint8_t> actual) {
  // Every passing seed compares equal images: settle that with memcmp and a zero scan of the
  // longer one's tail, and count byte by byte only when something differs.
  const size_t common = std::min(expected.size(), actual.size());
  const auto longer = expected.size() > actual.size() ? expected : actual;
  if ((common == 0 || std::memcmp(expected.data(), actual.data(), common) == 0) &&
      std::all_of(longer.begin() + static_cast<std::ptrdiff_t>(common), longer.end(), [](uint8_t b) { return b == 0; }))
    return DdrDiff{};
  DdrDiff diff;
  const uint64_t n = std::max(expected.size(), actual.size());
  auto at = [](std::span<const uint8_t> s, uint64_t i) -> uint8_t { return i < s.size() ? s[i] : 0; };
  bool in_first_run = false;
  for (uint64_t i = 0; i < n; ++i) {
    if (at(expected, i) == at(actual, i)) {
      in_first_run = false;
      continue;
    }
    if (diff.total_differing == 0) {
      diff.addr = i;
      in_first_run = true;
    }
    if (in_first_run) ++diff.bytes;
    ++diff.total_differing;
  }
  return diff;
}

}  // namespace npuforge::sim
