// Directed sequences: short LOAD/STORE patterns aimed at the allocator's corners, mixed
// into the random stream (profile `directed.rate`). They go through the same symbol,
// token and OOM machinery as everything else, so they stay correct by construction.
#include <vector>

#include "gen/builder.h"

namespace npuforge::gen {
namespace {

// Emits the buffer's pending consumers (STOREs) until it dies.
void retire(Builder& b, uint32_t id) {
  if (id == kNone) return;
  while (b.syms_[id].live) b.store_of(id, true);
}

// A size from the body of the load distribution, without corner bins.
uint64_t body_size(Builder& b) {
  SizeDist d = b.p_.load_sizes;
  d.unit = d.largest_free = d.whole_sram = d.odd = 0;
  return b.sample_size(d);
}

}  // namespace

void Builder::directed() {
  double total = 0;
  for (double w : p_.directed) total += w;
  double u = static_cast<double>(rng_.next() >> 11) * 0x1.0p-53 * total;
  unsigned k = 0;
  // Extremes, the last sequence, is only drawn when it has a weight: without one the draw
  // stops where it did before extremes existed, rounding included (the goldens stay).
  const unsigned count = p_.directed[static_cast<unsigned>(Directed::Extremes)] > 0 ? kNumDirected : kNumDirected - 1;
  while (k + 1 < count && (u -= p_.directed[k]) >= 0) ++k;
  const auto n = static_cast<unsigned>(rng_.range(p_.directed_count.min, p_.directed_count.max));
  ++sum_.directed;
  switch (static_cast<Directed>(k)) {
    case Directed::Checkerboard: {  // fill, then free every other buffer
      const uint64_t size = body_size(*this);
      std::vector<uint32_t> ids;
      for (unsigned i = 0; i < n; ++i) ids.push_back(load_fresh(size, i % 2 == 0 ? 1 : sample_refs(), false));
      for (unsigned i = 0; i < n; i += 2) retire(*this, ids[i]);
      break;
    }
    case Directed::ExactFit: {  // free a buffer, then ask for exactly its size again
      const uint64_t size = body_size(*this);
      retire(*this, load_fresh(size, 1, false));
      load_fresh(size, sample_refs(), false);
      break;
    }
    case Directed::MergeBoth: {  // free both neighbours, then the middle: one merge with both
      const uint64_t s1 = body_size(*this), s2 = body_size(*this), s3 = body_size(*this);
      const uint32_t a = load_fresh(s1, 1, false), b = load_fresh(s2, 1, false), c = load_fresh(s3, 1, false);
      retire(*this, a);
      retire(*this, c);
      retire(*this, b);
      load_fresh(s1 + s2 + s3, sample_refs(), false);
      break;
    }
    case Directed::FillLastByte: {  // take the largest free node until no byte is left
      for (unsigned i = 0; i < n; ++i) {
        const uint64_t lf = table_.allocator().stats().largest_free.value;
        if (lf == 0 || load_fresh(std::min(lf, max_len_), sample_refs(), false) == kNone) break;
      }
      break;
    }
    case Directed::TinyBuffers:  // many buffers of one unit or less
      for (unsigned i = 0; i < 4 * n; ++i) {
        const uint32_t refs = sample_refs();  // drawn before the size, as GCC did (see load_sampled)
        load_fresh(1 + rng_.below(align_), refs, false);
      }
      break;
    case Directed::Extremes: extremes(n); break;
  }
}

}  // namespace npuforge::gen
