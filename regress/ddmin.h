#pragma once
// Delta debugging (Zeller and Hildebrandt's ddmin): the smallest subset of a failing input
// that still fails, 1-minimal (removing any single remaining item makes it pass).
#include <cstddef>
#include <functional>
#include <vector>

namespace npuforge::regress {

struct DdminStats {
  size_t tests = 0;  // predicate calls
  size_t cache_hits = 0;
};

// `fails(subset)` must be true for `items` itself (not re-checked). Subsets keep the items'
// order. Stops early (returning the best so far) after `max_tests` predicate calls.
std::vector<size_t> ddmin(std::vector<size_t> items,
                          const std::function<bool(const std::vector<size_t>&)>& fails,
                          DdminStats* stats = nullptr, size_t max_tests = 100000);

}  // namespace npuforge::regress
