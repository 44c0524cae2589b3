#include "gen/shadow.h"

#include <fmt/core.h>

#include <algorithm>
#include <bit>

#include "util/error.h"

namespace npuforge::gen {

ShadowClocks::ShadowClocks(size_t units, uint64_t unit_bytes)
    : shift_(static_cast<unsigned>(std::countr_zero(unit_bytes))),
      size_(units),
      units_((units + kBlock - 1) / kBlock * kBlock),
      blocks_((units + kBlock - 1) / kBlock) {
  if (!std::has_single_bit(unit_bytes))
    throw Error(fmt::format("generator: alignment {} is not a power of two", unit_bytes));
}

void ShadowClocks::materialise(size_t b) {
  Block& k = blocks_[b];
  std::fill_n(units_.begin() + static_cast<ptrdiff_t>(b * kBlock), kBlock, k.value);
  k.state = State::Exact;
}

void ShadowClocks::rescan(size_t b) {
  Lanes m{};
  for (size_t u = b * kBlock, e = u + kBlock; u < e; ++u) m = max(m, units_[u]);  // padding is 0
  blocks_[b] = {m, State::Exact};
}

// Both walks go block by block over [first, end): `hi` ends the block's part of the range,
// and a part that starts and ends on the block's bounds covers it whole. The last block,
// when padded, is never covered whole (end <= size_), so its padding stays 0.
void ShadowClocks::assign_units(size_t first, size_t end, const Clock& c) {
  end = std::min(end, size_);
  const Lanes v = lanes(c);
  while (first < end) {
    const size_t b = first / kBlock, hi = std::min(end, (b + 1) * kBlock);
    Block& k = blocks_[b];
    if (first % kBlock == 0 && hi % kBlock == 0) {  // the whole block: its summary says it all
      k = {v, State::Uniform};
    } else {
      if (k.state == State::Uniform) materialise(b);
      std::fill(units_.begin() + static_cast<ptrdiff_t>(first), units_.begin() + static_cast<ptrdiff_t>(hi), v);
      k.state = State::Stale;
    }
    first = hi;
  }
}

ShadowClocks::Clock ShadowClocks::max_over_units(size_t first, size_t end) {
  end = std::min(end, size_);
  Lanes m{};
  while (first < end) {
    const size_t b = first / kBlock, hi = std::min(end, (b + 1) * kBlock);
    Block& k = blocks_[b];
    if (k.state == State::Uniform) {  // any part of it holds the same value
      m = max(m, k.value);
    } else if (first % kBlock == 0 && hi % kBlock == 0) {
      if (k.state == State::Stale) rescan(b);
      m = max(m, k.value);
    } else {
      for (size_t u = first; u < hi; ++u) m = max(m, units_[u]);
    }
    first = hi;
  }
  return {m[0], m[1], m[2]};
}

}  // namespace npuforge::gen
