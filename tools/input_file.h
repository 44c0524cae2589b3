#pragma once
// Checks of the files a subcommand reads, made while the command line is parsed. A file that
// does not exist or cannot be read is bad input (exit 1, like a malformed one), not a usage
// error: the check throws npuforge::Error, which main() reports with exit code 1 (CLI11's own
// ExistingFile check would make it a usage error, exit 2).
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

namespace npuforge::tools {

// A readable regular file. `option` names it in the message ("--memmap", "program").
CLI::Validator input_file(std::string option);
// A readable file or directory (`cover` takes results directories and coverage files).
CLI::Validator input_path(std::string option);

// The shipped configurations: profiles (`gen`), NPU configs (`npu`) and regression lists
// (`regress`), each `configs/<kind>/NAME.yaml`.
enum class ConfigKind { kProfile, kNpu, kRegressList };

// Like input_file, and a bare name of a shipped configuration ("default", "near-full") stands
// for its file, looked up in the installed share/npuforge/configs beside the executable, then
// in the source tree the executable was built from. Give it with CLI::Option::transform (not
// check), so that the option's value becomes the file's path.
CLI::Validator config_file(std::string option, ConfigKind kind);

// Where the shipped configurations of `kind` live: the first folder of the search order
// above that exists (empty when none does).
std::filesystem::path shipped_config_dir(ConfigKind kind);
// The names of the shipped configurations of `kind` ("default", "extremes", ...), sorted.
std::vector<std::string> shipped_config_names(ConfigKind kind);

}  // namespace npuforge::tools
