#include "util/suggest.h"

#include <algorithm>
#include <utility>

#include <fmt/core.h>

namespace npuforge::util {

size_t edit_distance(std::string_view a, std::string_view b) {
  // Optimal string alignment: three rows of the dynamic programme.
  std::vector<size_t> before(b.size() + 1), prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t subst = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, subst});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) cur[j] = std::min(cur[j], before[j - 2] + 1);
    }
    std::swap(before, prev);
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::vector<std::string> closest_names(std::string_view word, const std::vector<std::string>& candidates,
                                       size_t limit) {
  const size_t allowed = std::max<size_t>(1, word.size() / 3);
  std::vector<std::pair<size_t, size_t>> hits;  // (distance, position in candidates)
  for (size_t i = 0; i < candidates.size(); ++i) {
    const std::string& c = candidates[i];
    if (c == word) continue;
    size_t d = edit_distance(word, c);
    if (word.size() >= 2 && c.starts_with(word)) d = std::min(d, allowed);
    if (d <= allowed) hits.emplace_back(d, i);
  }
  std::stable_sort(hits.begin(), hits.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  std::vector<std::string> out;
  for (const auto& [d, i] : hits) {
    if (out.size() == limit) break;
    if (std::find(out.begin(), out.end(), candidates[i]) == out.end()) out.push_back(candidates[i]);
  }
  return out;
}

std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates) {
  const std::vector<std::string> close = closest_names(word, candidates);
  if (close.empty()) return {};
  std::string s = "did you mean ";
  for (size_t i = 0; i < close.size(); ++i) {
    if (i > 0) s += i + 1 == close.size() ? " or " : ", ";
    s += fmt::format("'{}'", close[i]);
  }
  return s + "?";
}

}  // namespace npuforge::util
