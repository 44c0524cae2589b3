#pragma once
// The project's own model graph format (YAML), for hand-written test graphs and for users
// without ONNX. It describes the same IR as an ONNX model: inputs, outputs, constants
// (inline values, seeded random or constant fills, or .npy files relative to the YAML file)
// and nodes with ONNX op types and attributes. README.md, "Model graphs (YAML)", documents
// it; configs/models/ holds examples. Errors name the file, the line and the key.
#include <filesystem>
#include <string_view>

#include "model/ir.h"

namespace npuforge::model {

Graph import_yaml_file(const std::filesystem::path& path);
// `source` names the text in errors; `base_dir` resolves relative .npy paths.
Graph import_yaml_string(std::string_view text, std::string_view source, const std::filesystem::path& base_dir);

}  // namespace npuforge::model
