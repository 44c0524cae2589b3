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

// Both walks split [first, end) into a partly covered head block, the blocks covered
// whole, and a partly covered tail block: the whole ones go through their summaries alone,
// in a loop of their own (one block at a time with the bounds worked out for each cost
// twice as much). The last block, when padded, is never covered whole (end <= size_), so
// its padding stays 0.
void ShadowClocks::assign_part(size_t first, size_t end, Lanes v) {
  const size_t b = first / kBlock;
  Block& k = blocks_[b];
  if (k.state == State::Uniform) materialise(b);
  std::fill(units_.begin() + static_cast<ptrdiff_t>(first), units_.begin() + static_cast<ptrdiff_t>(end), v);
  k.state = State::Stale;
}

void ShadowClocks::assign_units(size_t first, size_t end, const Clock& c) {
  end = std::min(end, size_);
  if (first >= end) return;
  const Lanes v = lanes(c);
  const size_t head_end = std::min(end, (first / kBlock + 1) * kBlock);
  if (first % kBlock != 0 || head_end % kBlock != 0) {  // the head block, in part
    assign_part(first, head_end, v);
    first = head_end;
  }
  const size_t whole_end = end / kBlock * kBlock;
  for (; first < whole_end; first += kBlock) blocks_[first / kBlock] = {v, State::Uniform};
  if (first < end) assign_part(first, end, v);  // the tail block, in part
}

ShadowClocks::Lanes ShadowClocks::max_part(size_t first, size_t end) const {
  const Block& k = blocks_[first / kBlock];
  if (k.state == State::Uniform) return k.value;  // any part of it holds the same value
  Lanes m{};
  for (size_t u = first; u < end; ++u) m = max(m, units_[u]);
  return m;
}

ShadowClocks::Clock ShadowClocks::max_over_units(size_t first, size_t end) {
  end = std::min(end, size_);
  Lanes m{};
  if (first < end) {
    const size_t head_end = std::min(end, (first / kBlock + 1) * kBlock);
    if (first % kBlock != 0 || head_end % kBlock != 0) {  // the head block, in part
      m = max_part(first, head_end);
      first = head_end;
    }
    const size_t whole_end = end / kBlock * kBlock;
    for (; first < whole_end; first += kBlock) {
      Block& k = blocks_[first / kBlock];
      if (k.state == State::Stale) rescan(first / kBlock);
      m = max(m, k.value);
    }
    if (first < end) m = max(m, max_part(first, end));  // the tail block, in part
  }
  return {m[0], m[1], m[2]};
}

}  // namespace npuforge::gen
