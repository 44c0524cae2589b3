#include "util/file_io.h"
#include "util/yaml_util.h"

#include <fstream>
#include <sstream>

#include <fmt/core.h>

#include "util/error.h"
#include "util/suggest.h"

namespace npuforge::util {

YAML::Node load_yaml_string(std::string_view text, std::string_view source_name) {
  try {
    return YAML::Load(std::string(text));
  } catch (const YAML::Exception& e) {
    throw Error(fmt::format("{}:{}:{}: malformed YAML: {}", source_name, e.mark.line + 1,
                            e.mark.column + 1, e.msg));
  }
}

YAML::Node load_yaml_file(const std::filesystem::path& path) {
  return load_yaml_string(read_file(path), path.string());
}

std::string where(std::string_view source, const YAML::Node& node) {
  const YAML::Mark m = node.Mark();
  if (m.is_null()) return std::string(source);
  return fmt::format("{}:{}", source, m.line + 1);
}

std::string where_column(std::string_view source, const YAML::Node& node) {
  const YAML::Mark m = node.Mark();
  if (m.is_null()) return std::string(source);
  return fmt::format("{}:{}:{}", source, m.line + 1, m.column + 1);
}

void require_map(const YAML::Node& map, std::string_view source, std::string_view what) {
  if (!map.IsMap()) throw Error(fmt::format("{}: {} must be a mapping of key: value", where(source, map), what));
}

std::string key_string(const YAML::Node& key, std::string_view source) {
  if (!key.IsScalar())
    throw Error(fmt::format("{}: a key must be a plain name, not a list or map", where_column(source, key)));
  return key.Scalar();
}

void reject_unknown_keys(const YAML::Node& map, std::initializer_list<std::string_view> allowed,
                         std::string_view source, std::string_view what) {
  require_map(map, source, what);
  for (const auto& kv : map) {
    const std::string key = key_string(kv.first, source);
    bool known = false;
    for (auto a : allowed) known = known || a == key;
    if (known) continue;
    std::string list;
    std::vector<std::string> names;
    for (auto a : allowed) {
      list += fmt::format("{}{}", list.empty() ? "" : ", ", a);
      names.emplace_back(a);
    }
    const std::string hint = did_you_mean(key, names);
    throw Error(fmt::format("{}: unknown key '{}' in {}{}{} (expected one of: {})", where(source, kv.first), key,
                            what, hint.empty() ? "" : "; ", hint, list));
  }
}

static std::string scalar_of(const YAML::Node& node, std::string_view key, std::string_view source,
                             std::string_view expected) {
  if (!node.IsScalar())
    throw Error(fmt::format("{}: '{}' must be {}", where(source, node), key, expected));
  return node.Scalar();
}

int64_t read_int(const YAML::Node& node, std::string_view key, std::string_view source, int64_t min,
                 int64_t max) {
  const std::string text = scalar_of(node, key, source, "an integer");
  size_t used = 0;
  int64_t v = 0;
  try {
    v = std::stoll(text, &used, 0);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || text.empty())
    throw Error(fmt::format("{}: '{}' must be an integer, got '{}'", where(source, node), key, text));
  if (v < min || v > max)
    throw Error(fmt::format("{}: '{}' = {} is out of range [{}, {}]", where(source, node), key, v, min, max));
  return v;
}

double read_double(const YAML::Node& node, std::string_view key, std::string_view source, double min,
                   double max) {
  const std::string text = scalar_of(node, key, source, "a number");
  size_t used = 0;
  double v = 0;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || text.empty())
    throw Error(fmt::format("{}: '{}' must be a number, got '{}'", where(source, node), key, text));
  if (!(v >= min && v <= max))
    throw Error(fmt::format("{}: '{}' = {} is out of range [{}, {}]", where(source, node), key, text, min, max));
  return v;
}

std::string read_string(const YAML::Node& node, std::string_view key, std::string_view source) {
  return scalar_of(node, key, source, "a string");
}

bool read_bool(const YAML::Node& node, std::string_view key, std::string_view source) {
  const std::string text = scalar_of(node, key, source, "true or false");
  if (text == "true" || text == "1") return true;
  if (text == "false" || text == "0") return false;
  throw Error(fmt::format("{}: '{}' must be true or false, got '{}'", where(source, node), key, text));
}

uint64_t fnv1a64(std::string_view text) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : text) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

}  // namespace npuforge::util
