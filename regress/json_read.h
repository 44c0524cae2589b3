#pragma once
// Reading the runner's own JSON files (results.jsonl, journal.jsonl, run.json) through yaml-cpp
// (JSON is YAML's flow style), with errors that name the file and line of the bad entry.
#include <string>
#include <string_view>

#include <fmt/core.h>
#include <yaml-cpp/yaml.h>

#include "regress/jobs.h"
#include "util/error.h"

namespace npuforge::regress {

// One JSON object; bad syntax or another kind of value is an Error naming `source`.
inline YAML::Node parse_json_object(std::string_view text, std::string_view source) {
  YAML::Node n;
  try {
    n = YAML::Load(std::string(text));
  } catch (const YAML::Exception& e) {
    throw Error(fmt::format("{}: not valid JSON: {}", source, e.msg));
  }
  if (!n.IsMap()) throw Error(fmt::format("{}: expected a JSON object", source));
  return n;
}

// A required field of such an object, converted to T; missing or mistyped names the key.
template <typename T>
T json_field(const YAML::Node& n, const char* key, std::string_view source) {
  const YAML::Node v = n[key];
  if (!v) throw Error(fmt::format("{}: missing field '{}'", source, key));
  try {
    return v.as<T>();
  } catch (const YAML::Exception&) {
    throw Error(fmt::format("{}: bad value for '{}'", source, key));
  }
}

// The fields of a Job (index, run, seed, profile, npu, length, rtl, plant) of such an object:
// results.jsonl lines and run.json's job list share them. Defined in results.cc.
Job read_job_fields(const YAML::Node& n, std::string_view source);

}  // namespace npuforge::regress
