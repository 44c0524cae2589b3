#pragma once
// Binding command-line files to a graph's inputs and outputs: `--input x.npy` (in order) or
// `--input name=x.npy`, and the same for outputs. Shared by every command that runs a model
// (the reference interpreter today; compiled models later).
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "model/interpreter.h"

namespace npuforge::model {

// Maps each spec to one of `names`. "NAME=PATH" binds NAME when NAME is one of `names`;
// any other spec is a path for the next name not yet bound, in order. `option` ("--input")
// names the option in errors: an unknown or twice-bound name, more files than names.
std::map<std::string, std::filesystem::path> bind_files(const std::vector<std::string>& names,
                                                        const std::vector<std::string>& specs,
                                                        std::string_view option);

// Reads every graph input from its .npy file; an input left without a file is an error.
TensorMap read_inputs(const std::vector<std::string>& input_names, const std::vector<std::string>& specs);

}  // namespace npuforge::model
