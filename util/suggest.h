#pragma once
// "Did you mean ...": the known names closest to a mistyped one, for error messages about an
// unknown key, subcommand, attribute or shipped config name.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace npuforge::util {

// Levenshtein distance (insertions, deletions, substitutions) between two words, with a
// swap of two neighbouring letters counting as one edit ("kernal" -> "kernel" is 1).
size_t edit_distance(std::string_view a, std::string_view b);

// The candidates close enough to `word` to be what was meant (at most a third of its letters
// changed, at least one allowed; a candidate that starts with `word` counts too), nearest
// first, then in the candidates' order; at most `limit`.
std::vector<std::string> closest_names(std::string_view word, const std::vector<std::string>& candidates,
                                       size_t limit = 3);

// "did you mean 'a'?" / "did you mean 'a' or 'b'?", or "" when nothing is close.
std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace npuforge::util
