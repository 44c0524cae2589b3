// npuforge cover: merged functional coverage of a regression (covered/total per group,
// after how many seeds each group completed, and the holes).
#include <algorithm>
#include <filesystem>
#include <optional>

#include <fmt/core.h>

#include "util/error.h"
#include "util/file_io.h"
#include "regress/coverage.h"
#include "regress/journal.h"
#include "regress/results.h"
#include "tools/command.h"
#include "tools/input_file.h"

namespace npuforge::tools {
namespace {

struct CoverOpts {
  std::vector<std::string> inputs;
  std::string json;
};

// The seeds of the run in DIR, in list order: its results, or for an interrupted run the
// journal's; none when DIR holds neither.
std::optional<std::vector<regress::SeedResult>> seeds_of_run(const std::filesystem::path& dir) {
  namespace fs = std::filesystem;
  if (fs::exists(dir / "results.jsonl"))
    return regress::parse_results(util::read_file(dir / "results.jsonl", "results"), (dir / "results.jsonl").string());
  if (!fs::exists(dir / "run.json")) return std::nullopt;
  auto seeds = regress::read_journal(dir / "journal.jsonl").results;
  std::sort(seeds.begin(), seeds.end(), [](const auto& a, const auto& b) { return a.job.index < b.job.index; });
  return seeds;
}

// A results directory: the per-seed coverage files of its own run's seeds (never others
// left in coverage/), in list order so "complete after" is exact; a merged directory (no
// per-seed files) or one without a seed list: its coverage.json.
std::vector<std::filesystem::path> files_of(const std::filesystem::path& in) {
  namespace fs = std::filesystem;
  if (!fs::is_directory(in)) return {in};
  const auto seeds = seeds_of_run(in);
  if (seeds && fs::is_directory(in / "coverage")) {
    std::vector<fs::path> out;
    for (const auto& r : *seeds) {
      const fs::path p = in / "coverage" / (r.job.name() + ".json");
      if (fs::exists(p)) out.push_back(p);
    }
    return out;
  }
  if (fs::exists(in / "coverage.json")) return {in / "coverage.json"};
  throw Error(fmt::format("{}: not a results directory (no results.jsonl, run.json or coverage.json in it)", in.string()));
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
  sub->add_option("inputs", opts->inputs, "results directories or coverage JSON files")->required()->check(input_path("inputs"));
  sub->add_option("--json", opts->json, "also write the merged coverage here");
  bind_runner(sub, opts, run, &run_cover);
}

}  // namespace npuforge::tools
