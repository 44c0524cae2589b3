#include "regress/ddmin.h"

#include <algorithm>
#include <set>

namespace npuforge::regress {
namespace {

std::vector<std::vector<size_t>> split(const std::vector<size_t>& items, size_t n) {
  std::vector<std::vector<size_t>> chunks;
  size_t start = 0;
  for (size_t i = 0; i < n; ++i) {
    const size_t end = start + (items.size() - start) / (n - i);
    chunks.emplace_back(items.begin() + start, items.begin() + end);
    start = end;
  }
  return chunks;
}

}  // namespace

std::vector<size_t> ddmin(std::vector<size_t> items,
                          const std::function<bool(const std::vector<size_t>&)>& fails,
                          DdminStats* stats, size_t max_tests) {
  DdminStats local;
  DdminStats& st = stats ? *stats : local;
  std::set<std::vector<size_t>> passed;  // subsets known not to fail
  auto test = [&](const std::vector<size_t>& s) {
    if (passed.count(s)) {
      ++st.cache_hits;
      return false;
    }
    ++st.tests;
    if (fails(s)) return true;
    passed.insert(s);
    return false;
  };
  size_t n = 2;
  while (items.size() >= 2 && st.tests < max_tests) {
    n = std::min(n, items.size());
    const auto chunks = split(items, n);
    bool reduced = false;
    for (const auto& c : chunks) {  // a chunk alone still fails
      if (test(c)) {
        items = c;
        n = 2;
        reduced = true;
        break;
      }
    }
    if (!reduced && n > 2) {
      for (size_t i = 0; i < chunks.size() && !reduced; ++i) {  // drop one chunk
        std::vector<size_t> rest;
        for (size_t j = 0; j < chunks.size(); ++j) {
          if (j != i) rest.insert(rest.end(), chunks[j].begin(), chunks[j].end());
        }
        if (test(rest)) {
          items = std::move(rest);
          n = std::max<size_t>(n - 1, 2);
          reduced = true;
        }
      }
    }
    if (reduced) continue;
    if (n >= items.size()) break;
    n = std::min(items.size(), 2 * n);
  }
  return items;
}

}  // namespace npuforge::regress
