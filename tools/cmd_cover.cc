// npuforge cover: merged functional coverage of a regression (covered/total per group,
// after how many seeds each group completed, and the holes).
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/core.h>

#include "util/error.h"
#include "util/file_io.h"
#include "regress/coverage.h"
#include "tools/command.h"

namespace npuforge::tools {
namespace {

struct CoverOpts {
  std::vector<std::string> inputs;
  std::string json;
};

// A results directory: its per-seed files (coverage/*.json) when present, else coverage.json.
std::vector<std::filesystem::path> files_of(const std::filesystem::path& in) {
  namespace fs = std::filesystem;
  if (!fs::is_directory(in)) return {in};
  std::vector<fs::path> out;
  if (fs::is_directory(in / "coverage")) {
    for (const auto& e : fs::directory_iterator(in / "coverage")) {
      if (e.path().extension() == ".json") out.push_back(e.path());
    }
  }
  // Seed order (natural sort on the number after the last '-') so "complete after" is exact.
  auto key = [](const fs::path& p) {
    const std::string s = p.stem().string();
    const size_t d = s.rfind('-');
    return std::make_pair(s.substr(0, d), d == std::string::npos ? 0 : std::stoull("0" + s.substr(d + 1)));
  };
  std::sort(out.begin(), out.end(), [&](auto& a, auto& b) { return key(a) < key(b); });
  if (out.empty() && fs::exists(in / "coverage.json")) out.push_back(in / "coverage.json");
  if (out.empty()) throw Error(fmt::format("{}: no coverage/*.json or coverage.json in it", in.string()));
  return out;
}

int run_cover(const CoverOpts& o) {
  regress::Coverage total;
  for (const auto& in : o.inputs) {
    for (const auto& f : files_of(in)) total.merge(regress::Coverage::from_json(util::read_file(f, "coverage file"), f.string()));
  }
  fmt::print("{}", total.report(true));
  if (!o.json.empty()) {
    util::write_file(o.json, total.to_json(), "coverage JSON");
  }
  return kExitOk;
}

}  // namespace

void add_cover_command(CLI::App& app, Runner& run) {
  auto opts = std::make_shared<CoverOpts>();
  CLI::App* sub = app.add_subcommand("cover", "Merged functional coverage of regression results, with the holes");
  sub->add_option("inputs", opts->inputs, "results directories or coverage JSON files")->required()->check(CLI::ExistingPath);
  sub->add_option("--json", opts->json, "also write the merged coverage here");
  bind_runner(sub, opts, run, &run_cover);
}

}  // namespace npuforge::tools
