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

void ShadowClocks::assign_units(size_t first, size_t end, const Clock& c) {
  end = std::min(end, units_.size());
  for (size_t b = first / kBlock; first < end && b * kBlock < end; ++b) {
    const size_t lo = std::max(first, b * kBlock), hi = std::min(end, block_end(b));
    Block& k = blocks_[b];
    if (lo == b * kBlock && hi == block_end(b)) {  // the whole block: its summary says it all
      k = {c, State::Uniform};
      continue;
    }
    if (k.state == State::Uniform) materialise(b);
    std::fill(units_.begin() + static_cast<ptrdiff_t>(lo), units_.begin() + static_cast<ptrdiff_t>(hi), c);
    k.state = State::Stale;
  }
}

ShadowClocks::Clock ShadowClocks::max_over_units(size_t first, size_t end) {
  end = std::min(end, units_.size());
  Clock m{};
  for (size_t b = first / kBlock; first < end && b * kBlock < end; ++b) {
    const size_t lo = std::max(first, b * kBlock), hi = std::min(end, block_end(b));
    Block& k = blocks_[b];
    if (k.state == State::Uniform) {  // any part of it holds the same value
      max_into(m, k.value);
      continue;
    }
    if (lo == b * kBlock && hi == block_end(b)) {
      if (k.state == State::Stale) rescan(b);
      max_into(m, k.value);
      continue;
    }
    for (size_t u = lo; u < hi; ++u) max_into(m, units_[u]);
  }
  return m;
}

}  // namespace npuforge::gen
