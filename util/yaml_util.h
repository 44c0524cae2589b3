#pragma once
// Reading YAML with errors that name the file, the line and the key, shared by every loader
// (ISA, NPU config, profiles, memory maps, plans).
#include <cstdint>
#include <filesystem>
#include <initializer_list>
#include <string>
#include <string_view>

#include <yaml-cpp/yaml.h>

namespace npuforge::util {

// Parses a file or a string; a syntax error becomes npuforge::Error "source:line:col: ...".
YAML::Node load_yaml_file(const std::filesystem::path& path);
YAML::Node load_yaml_string(std::string_view text, std::string_view source_name);

// "source:line" of a node (or just "source" when the node has no position).
std::string where(std::string_view source, const YAML::Node& node);
// "source:line:column", for formats whose entries share a line (flow-style lists).
std::string where_column(std::string_view source, const YAML::Node& node);

// The text of a mapping key; a key that is itself a list or map (`? [a]: 1`, `{[a]: 1}`) is an
// error naming the line, never a yaml-cpp conversion exception.
std::string key_string(const YAML::Node& key, std::string_view source);
// Throws when `map` is not a map or holds a key outside `allowed`, naming the key.
void require_map(const YAML::Node& map, std::string_view source, std::string_view what);
void reject_unknown_keys(const YAML::Node& map, std::initializer_list<std::string_view> allowed,
                         std::string_view source, std::string_view what);

// Integer in [min, max] (decimal or 0x hex); errors name the key, the line and the range.
int64_t read_int(const YAML::Node& node, std::string_view key, std::string_view source,
                 int64_t min, int64_t max);
double read_double(const YAML::Node& node, std::string_view key, std::string_view source,
                   double min, double max);
std::string read_string(const YAML::Node& node, std::string_view key, std::string_view source);
bool read_bool(const YAML::Node& node, std::string_view key, std::string_view source);

// 64-bit FNV-1a of a text, for the profile/config hashes written into output headers.
uint64_t fnv1a64(std::string_view text);

}  // namespace npuforge::util
