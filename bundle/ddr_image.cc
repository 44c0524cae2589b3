#include "bundle/ddr_image.h"

#include <algorithm>
#include <cstring>

#include <fmt/core.h>

#include "util/file_io.h"

namespace npuforge::bundle {

std::vector<uint8_t> read_ddr_image(const std::filesystem::path& path) {
  return util::read_binary_file(path, "DDR image");
}

void write_ddr_image(const std::filesystem::path& path, std::span<const uint8_t> image) {
  util::write_file(path, image, "DDR image");
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

std::optional<DdrNeed> ddr_image_need(const MemMap& map) {
  std::optional<DdrNeed> need;
  for (const MemDdrBuffer& b : map.ddr_buffers) {
    const uint64_t end = b.offset.value + b.size.value;
    if (b.held_at_start() && (!need || end > need->bytes)) need = DdrNeed{end, &b};
  }
  return need;
}

std::string describe(const DdrNeed& need) {
  const MemDdrBuffer& t = *need.tensor;
  return fmt::format("{}{}tensor '{}' [0x{:x}, 0x{:x}): {} bytes", t.region, t.region.empty() ? "" : " ", t.name,
                     t.offset.value, need.bytes, need.bytes);
}

}  // namespace npuforge::bundle
