#pragma once
// Synthetic plan problems for benchmarks and tests, deterministic in (n, seed).
#include <cstddef>
#include <cstdint>

#include "planner/plan_problem.h"

namespace npuforge::planner {

// n buffers with starts uniform in [0, n), lifetimes of 1-100 steps and sizes of 64 B-16 KiB
// (multiples of 64, alignment 64): a narrow, uniform load.
PlanProblem random_intervals_problem(size_t n, uint64_t seed);

// n buffers shaped like a compiler's trace of a long graph, in blocks of about 1,000 buffers
// over 500 steps each: most buffers short-lived and small (1-8 steps, 64 B-256 KiB), some
// medium (up to 200 steps, 4 KiB-4 MiB), and 2% long-lived and large (skip connections and
// saved activations: alive for up to 40 blocks, 256 KiB-16 MiB). Sizes are log-uniform,
// multiples of 64, alignment 64. About 450 buffers are live at a time, whatever n.
PlanProblem trace_like_problem(size_t n, uint64_t seed);

}  // namespace npuforge::planner
