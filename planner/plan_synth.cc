#include "planner/plan_synth.h"

#include <string>

#include "util/rng.h"

namespace npuforge::planner {
namespace {

// Log-uniform in [lo, hi] (powers of two), rounded up to a multiple of 64.
uint64_t log_uniform_size(Rng& rng, int lo_log2, int hi_log2) {
  const int e = int(rng.range(lo_log2, hi_log2 - 1));
  const uint64_t v = uint64_t(rng.range(int64_t(1) << e, (int64_t(2) << e) - 1));
  return (v + 63) / 64 * 64;
}

}  // namespace

PlanProblem random_intervals_problem(size_t n, uint64_t seed) {
  Rng rng(seed);
  PlanProblem p;
  p.buffers.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    const int64_t t = rng.range(0, int64_t(n) - 1);
    p.buffers.push_back({std::to_string(i), {t, t + rng.range(1, 100)},
                         Bytes{64 * uint64_t(rng.range(1, 256))}, Bytes{64}, {}});
  }
  return p;
}

PlanProblem trace_like_problem(size_t n, uint64_t seed) {
  constexpr int64_t kBlockBuffers = 1000, kBlockSteps = 500, kLongBlocks = 40;
  Rng rng(seed);
  PlanProblem p;
  p.buffers.reserve(n);
  const int64_t blocks = (int64_t(n) + kBlockBuffers - 1) / kBlockBuffers;
  const int64_t horizon = blocks * kBlockSteps + kBlockSteps;
  for (size_t i = 0; i < n; ++i) {
    // Buffers are produced in program order: the k-th of a block starts near step k / 2.
    const int64_t block = int64_t(i) / kBlockBuffers;
    const int64_t start = block * kBlockSteps + (int64_t(i) % kBlockBuffers) * kBlockSteps / kBlockBuffers +
                          rng.range(0, 3);
    int64_t length;
    uint64_t size;
    const uint64_t kind = rng.below(100);
    if (kind < 2) {  // long-lived: a saved activation or a skip connection
      length = rng.range(kBlockSteps, kLongBlocks * kBlockSteps);
      size = log_uniform_size(rng, 18, 24);
    } else if (kind < 20) {
      length = rng.range(8, 200);
      size = log_uniform_size(rng, 12, 22);
    } else {
      length = rng.range(1, 8);
      size = log_uniform_size(rng, 6, 18);
    }
    p.buffers.push_back({std::to_string(i), {start, std::min(horizon, start + length)},
                         Bytes{size}, Bytes{64}, {}});
  }
  return p;
}

}  // namespace npuforge::planner
