#include "gen/shadow.h"

#include <fmt/core.h>

#include <algorithm>
#include <bit>

#include "util/error.h"

namespace npuforge::gen {
namespace {

void max_into(ShadowClocks::Clock& m, const ShadowClocks::Clock& c) {
  for (unsigned p = 0; p < m.size(); ++p) m[p] = std::max(m[p], c[p]);
}

}  // namespace

ShadowClocks::ShadowClocks(size_t units, uint64_t unit_bytes)
    : shift_(static_cast<unsigned>(std::countr_zero(unit_bytes))),
      units_(units),
      blocks_((units + kBlock - 1) / kBlock) {
  if (!std::has_single_bit(unit_bytes))
    throw Error(fmt::format("generator: alignment {} is not a power of two", unit_bytes));
}

size_t ShadowClocks::block_end(size_t b) const { return std::min(units_.size(), (b + 1) * kBlock); }

void ShadowClocks::materialise(size_t b) {
  Block& k = blocks_[b];
  std::fill(units_.begin() + static_cast<ptrdiff_t>(b * kBlock), units_.begin() + static_cast<ptrdiff_t>(block_end(b)),
            k.value);
  k.state = State::Exact;
}

void ShadowClocks::rescan(size_t b) {
  Clock m{};
  for (size_t u = b * kBlock, e = block_end(b); u < e; ++u) max_into(m, units_[u]);
  blocks_[b] = {m, State::Exact};
}

// Both walks go block by block over [first, end): `hi` ends the block's part of the range,
// and a part that starts and ends on the block's bounds covers it whole.
void ShadowClocks::assign_units(size_t first, size_t end, const Clock& c) {
  end = std::min(end, units_.size());
  while (first < end) {
    const size_t b = first / kBlock, hi = std::min(end, (b + 1) * kBlock);
    Block& k = blocks_[b];
    if (first % kBlock == 0 && hi == block_end(b)) {  // the whole block: its summary says it all
      k = {c, State::Uniform};
    } else {
      if (k.state == State::Uniform) materialise(b);
      std::fill(units_.begin() + static_cast<ptrdiff_t>(first), units_.begin() + static_cast<ptrdiff_t>(hi), c);
      k.state = State::Stale;
    }
    first = hi;
  }
}

ShadowClocks::Clock ShadowClocks::max_over_units(size_t first, size_t end) {
  end = std::min(end, units_.size());
  uint32_t m0 = 0, m1 = 0, m2 = 0;  // in registers, not an array in memory
  const auto take = [&](const Clock& c) {
    m0 = std::max(m0, c[0]);
    m1 = std::max(m1, c[1]);
    m2 = std::max(m2, c[2]);
  };
  while (first < end) {
    const size_t b = first / kBlock, hi = std::min(end, (b + 1) * kBlock);
    Block& k = blocks_[b];
    if (k.state == State::Uniform) {  // any part of it holds the same value
      take(k.value);
    } else if (first % kBlock == 0 && hi == block_end(b)) {
      if (k.state == State::Stale) rescan(b);
      take(k.value);
    } else {
      for (size_t u = first; u < hi; ++u) take(units_[u]);
    }
    first = hi;
  }
  return {m0, m1, m2};
}

}  // namespace npuforge::gen
