#include "model/bindings.h"

#include <algorithm>

#include <fmt/core.h>

#include "model/npy.h"
#include "util/error.h"

namespace npuforge::model {

std::map<std::string, std::filesystem::path> bind_files(const std::vector<std::string>& names,
                                                        const std::vector<std::string>& specs,
                                                        std::string_view option) {
  std::map<std::string, std::filesystem::path> bound;
  std::vector<std::string> positional;
  for (const std::string& spec : specs) {
    const size_t eq = spec.find('=');
    const std::string name = eq == std::string::npos ? std::string() : spec.substr(0, eq);
    if (!name.empty() && std::find(names.begin(), names.end(), name) != names.end()) {
      if (!bound.emplace(name, spec.substr(eq + 1)).second)
        throw Error(fmt::format("{} {}: '{}' is given twice", option, spec, name));
      continue;
    }
    positional.push_back(spec);
  }
  size_t next = 0;
  for (const std::string& path : positional) {
    while (next < names.size() && bound.count(names[next])) ++next;
    if (next == names.size()) {
      std::string list;
      for (const std::string& n : names) list += fmt::format("{}'{}'", list.empty() ? "" : ", ", n);
      throw Error(fmt::format("{} {}: no model {} left to bind it to (the model's: {})", option, path,
                              option == "--input" ? "input" : "output", list.empty() ? "none" : list));
    }
    bound.emplace(names[next++], path);
  }
  return bound;
}

TensorMap read_inputs(const std::vector<std::string>& input_names, const std::vector<std::string>& specs) {
  TensorMap inputs;
  for (const auto& [name, path] : bind_files(input_names, specs, "--input")) inputs.emplace(name, read_npy(path));
  for (const std::string& name : input_names)
    if (!inputs.count(name)) throw Error(fmt::format("no --input given for model input '{}'", name));
  return inputs;
}

}  // namespace npuforge::model
