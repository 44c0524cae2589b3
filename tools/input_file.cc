#include "tools/input_file.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fmt/core.h>

#include "util/error.h"
#include "util/suggest.h"

namespace npuforge::tools {
namespace fs = std::filesystem;
namespace {

const char* kind_folder(ConfigKind kind) {
  switch (kind) {
    case ConfigKind::kProfile: return "gen";
    case ConfigKind::kNpu: return "npu";
    case ConfigKind::kRegressList: return "regress";
  }
  return "";
}

const char* kind_noun(ConfigKind kind) {
  switch (kind) {
    case ConfigKind::kProfile: return "profile";
    case ConfigKind::kNpu: return "NPU config";
    case ConfigKind::kRegressList: return "regression list";
  }
  return "";
}

// Empty when `path` is a file this process can read, else why not.
std::string unreadable(const std::string& path, bool directory_ok) {
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (!fs::exists(st)) return "no such file";
  if (fs::is_directory(st) && !directory_ok) return "is a directory, not a file";
  if (::access(path.c_str(), R_OK) != 0) return fmt::format("cannot be read: {}", std::strerror(errno));
  return {};
}

// A name without a folder or an extension: what a user types for a shipped configuration.
bool bare_name(const std::string& s) {
  return !s.empty() && s.find('/') == std::string::npos && fs::path(s).extension().empty();
}

std::vector<fs::path> config_dirs(ConfigKind kind) {
  std::vector<fs::path> dirs;
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) dirs.push_back(exe.parent_path().parent_path() / "share" / "npuforge" / "configs" / kind_folder(kind));
  dirs.push_back(fs::path(NPUFORGE_SOURCE_CONFIGS) / kind_folder(kind));
  return dirs;
}

std::string check_config(std::string& value, const std::string& option, ConfigKind kind) {
  const std::string why = unreadable(value, false);
  if (why.empty()) return {};
  std::error_code ec;
  if (!fs::exists(value, ec) && bare_name(value)) {
    for (const fs::path& dir : config_dirs(kind)) {
      const fs::path p = dir / (value + ".yaml");
      if (unreadable(p.string(), false).empty()) {
        value = p.string();
        return {};
      }
    }
    const std::vector<std::string> names = shipped_config_names(kind);
    const fs::path dir = shipped_config_dir(kind);
    std::string list;
    for (const auto& n : names) list += fmt::format("{}{}", list.empty() ? "" : ", ", n);
    const std::string hint = util::did_you_mean(value, names);
    throw Error(fmt::format("{}: no such file, and not the name of a shipped {} ({}){}{} (shipped: {}{})", value,
                            kind_noun(kind), option, hint.empty() ? "" : "; ", hint,
                            list.empty() ? "none found" : list,
                            dir.empty() ? std::string() : fmt::format(", in {}", dir.string())));
  }
  throw Error(fmt::format("{}: {} ({})", value, why, option));
}

}  // namespace

CLI::Validator input_file(std::string option) {
  return CLI::Validator(
      [option](std::string& value) -> std::string {
        if (const std::string why = unreadable(value, false); !why.empty())
          throw Error(fmt::format("{}: {} ({})", value, why, option));
        return {};
      },
      "FILE");
}

CLI::Validator input_path(std::string option) {
  return CLI::Validator(
      [option](std::string& value) -> std::string {
        if (const std::string why = unreadable(value, true); !why.empty())
          throw Error(fmt::format("{}: {} ({})", value, why, option));
        return {};
      },
      "PATH");
}

CLI::Validator config_file(std::string option, ConfigKind kind) {
  return CLI::Validator([option, kind](std::string& value) { return check_config(value, option, kind); },
                        fmt::format("FILE|NAME (a shipped {}: configs/{}/NAME.yaml)", kind_noun(kind), kind_folder(kind)));
}

fs::path shipped_config_dir(ConfigKind kind) {
  for (const fs::path& dir : config_dirs(kind)) {
    std::error_code ec;
    if (fs::is_directory(dir, ec)) return dir.lexically_normal();
  }
  return {};
}

std::vector<std::string> shipped_config_names(ConfigKind kind) {
  std::vector<std::string> names;
  const fs::path dir = shipped_config_dir(kind);
  std::error_code ec;
  if (dir.empty()) return names;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.path().extension() == ".yaml") names.push_back(e.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace npuforge::tools
