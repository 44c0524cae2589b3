#include "bundle/ddr_image.h"

#include <algorithm>
#include <cstring>
#include <map>

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

namespace {

// DDR bytes written so far, as disjoint [begin, end) ranges keyed by begin.
class WrittenRanges {
 public:
  void add(uint64_t begin, uint64_t end) {
    auto it = ranges_.upper_bound(begin);
    if (it != ranges_.begin() && std::prev(it)->second >= begin) {
      --it;
      begin = it->first;
      end = std::max(end, it->second);
      it = ranges_.erase(it);
    }
    while (it != ranges_.end() && it->first <= end) {
      end = std::max(end, it->second);
      it = ranges_.erase(it);
    }
    ranges_.emplace(begin, end);
  }
  // One past the last byte of [begin, end) that is not written (begin when all are).
  uint64_t unwritten_end(uint64_t begin, uint64_t end) const {
    while (end > begin) {
      auto it = ranges_.upper_bound(end - 1);
      if (it == ranges_.begin() || std::prev(it)->second < end) return end;
      end = std::prev(it)->first;
    }
    return begin;
  }

 private:
  std::map<uint64_t, uint64_t> ranges_;
};

}  // namespace

std::optional<DdrNeed> ddr_image_need(std::span<const isa::Instruction> instrs) {
  std::optional<DdrNeed> need;
  WrittenRanges written;
  for (size_t i = 0; i < instrs.size(); ++i) {
    const isa::ExtentList ext = isa::extents(instrs[i]);
    for (const isa::Extent& e : ext) {
      if (e.bytes == 0 || e.space != isa::Space::Ddr || e.access != isa::Access::Read) continue;
      const uint64_t end = written.unwritten_end(e.addr, e.addr + e.bytes);
      if (end > e.addr && (!need || end > need->bytes)) need = DdrNeed{end, nullptr, i, e.addr};
    }
    for (const isa::Extent& e : ext)
      if (e.bytes != 0 && e.space == isa::Space::Ddr && e.access == isa::Access::Write) written.add(e.addr, e.addr + e.bytes);
  }
  return need;
}

std::optional<DdrNeed> ddr_image_need(const MemMap* map, std::span<const isa::Instruction> instrs) {
  std::optional<DdrNeed> need = map ? ddr_image_need(*map) : std::nullopt;
  const std::optional<DdrNeed> reads = ddr_image_need(instrs);
  if (reads && (!need || reads->bytes > need->bytes)) need = reads;
  return need;
}

std::string describe(const DdrNeed& need, std::span<const isa::Instruction> instrs) {
  if (!need.tensor) {
    const std::string_view op = need.instruction < instrs.size() ? std::string_view(instrs[need.instruction].spec->mnemonic) : "?";
    return fmt::format("instruction {} ({}) reads DDR [0x{:x}, 0x{:x}) before the program writes it", need.instruction,
                       op, need.read_begin, need.bytes);
  }
  const MemDdrBuffer& t = *need.tensor;
  return fmt::format("{}{}tensor '{}' [0x{:x}, 0x{:x}): {} bytes", t.region, t.region.empty() ? "" : " ", t.name,
                     t.offset.value, need.bytes, need.bytes);
}

}  // namespace npuforge::bundle
