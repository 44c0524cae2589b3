#pragma once
// Writes a model::Graph as the project's YAML graph (model/yaml_import.h reads it back), with
// every constant in a .npy file: how a compiled model's CPU steps are stored in OUT/, runnable
// without the original model file (the front half's clean-up changed the nodes anyway).
// Attributes are written with explicit kinds ({ints: [...]}, {float: 0.5}, ...) so that
// reading gives back the same types; floats with every digit they need.
#include <filesystem>
#include <string>

#include "model/ir.h"

namespace npuforge::compiler {

// Writes `yaml_path` and the constants as <const_dir>/c<k>.npy, `const_dir` relative to the
// YAML file's directory (created as needed). `comment` heads the file. Throws npuforge::Error
// naming a file that cannot be written.
void write_graph_yaml(const model::Graph& graph, const std::filesystem::path& yaml_path,
                      const std::filesystem::path& const_dir, const std::string& comment);

}  // namespace npuforge::compiler
