#include "regress/merge.h"

#include <algorithm>
#include <filesystem>
#include <map>

#include <fmt/core.h>

#include "regress/runner.h"
#include "util/error.h"
#include "util/file_io.h"

namespace npuforge::regress {
namespace fs = std::filesystem;
namespace {

struct ShardDir {
  fs::path dir;
  RunInfo info;
};

size_t count_lines(const fs::path& p) {
  if (!fs::exists(p)) return 0;
  const std::string text = util::read_file(p);
  return static_cast<size_t>(std::count(text.begin(), text.end(), '\n'));
}

std::string abs_path(const fs::path& p) { return fs::absolute(p).lexically_normal().string(); }

}  // namespace

MergeOutcome merge_shards(const MergeOptions& o) {
  MergeOutcome res;
  RegressReport& rep = res.report;
  std::map<unsigned, ShardDir> complete;  // by shard number
  std::map<unsigned, fs::path> seen;
  unsigned n = o.expect_shards;
  uint64_t list_jobs = 0;
  bool have_list_jobs = false;
  for (const auto& input : o.inputs) {
    const fs::path dir = input;
    const fs::path info_path = dir / "shard.json";
    if (!fs::exists(info_path)) {
      rep.problems.push_back(fmt::format("{}: no shard.json (not a results directory, or its shard never started)",
                                         dir.string()));
      continue;
    }
    const RunInfo info = parse_run_info(util::read_file(info_path, "shard info"), info_path.string());
    if (n == 0) n = info.shard.n;
    if (info.shard.n != n) {
      throw Error(fmt::format("{}: shard {}/{} does not belong to a run of {} shards", info_path.string(), info.shard.k,
                              info.shard.n, n));
    }
    if (have_list_jobs && info.list_jobs != list_jobs) {
      throw Error(fmt::format("{}: a list of {} jobs, the other shards ran a list of {}", info_path.string(),
                              info.list_jobs, list_jobs));
    }
    list_jobs = info.list_jobs;
    have_list_jobs = true;
    if (auto [it, fresh] = seen.emplace(info.shard.k, dir); !fresh) {
      throw Error(fmt::format("shard {}/{} given twice: {} and {}", info.shard.k, n, it->second.string(), dir.string()));
    }
    if (info.finished == 0 || !fs::exists(dir / "results.jsonl")) {
      rep.problems.push_back(fmt::format("shard {}/{} ({}) did not finish: {} of {} seeds done (its task failed or was killed)",
                                         info.shard.k, n, dir.string(), count_lines(dir / "progress.txt"), info.shard_jobs));
      continue;
    }
    complete.emplace(info.shard.k, ShardDir{dir, info});
  }
  if (n == 0) {
    std::string why;
    for (const auto& p : rep.problems) why += "\n  " + p;
    throw Error(fmt::format("merge: no shard results among the inputs (each needs a shard.json):{}", why));
  }
  for (unsigned k = 1; k <= n; ++k) {
    if (!complete.count(k)) res.missing.push_back(k);
    if (!seen.count(k)) rep.problems.push_back(fmt::format("shard {}/{}: no results directory (never started, or not given)", k, n));
  }
  // Results in list order; each remembers its shard for its coverage file.
  std::vector<std::pair<SeedResult, const ShardDir*>> all;
  double started = 0, finished = 0;
  for (const auto& [k, sd] : complete) {
    const fs::path path = sd.dir / "results.jsonl";
    auto results = parse_results(util::read_file(path, "results"), path.string());
    if (results.size() != sd.info.shard_jobs) {
      rep.problems.push_back(fmt::format("shard {}/{} ({}): {} results for {} jobs", k, n, sd.dir.string(),
                                         results.size(), sd.info.shard_jobs));
    }
    for (auto& r : results) all.emplace_back(std::move(r), &sd);
    started = started == 0 ? sd.info.started : std::min(started, sd.info.started);
    finished = std::max(finished, sd.info.finished);
  }
  std::sort(all.begin(), all.end(), [](const auto& a, const auto& b) { return a.first.job.index < b.first.job.index; });
  for (size_t i = 1; i < all.size(); ++i) {
    if (all[i].first.job.index == all[i - 1].first.job.index) {
      throw Error(fmt::format("merge: job {} ({}) is in two shards: {} and {}", all[i].first.job.index,
                              all[i].first.job.id(), all[i - 1].second->dir.string(), all[i].second->dir.string()));
    }
  }
  for (auto& [r, sd] : all) {
    // Reproduction into the merged directory, as a single run into it would have written.
    r.repro = repro_command(sd->info.exe, r.job, abs_path(fs::path(o.out) / "repro" / r.job.name()));
    const fs::path cov = sd->dir / "coverage" / (r.job.name() + ".json");
    if (fs::exists(cov)) rep.coverage.merge(Coverage::from_json(util::read_file(cov, "coverage"), cov.string()));
    rep.results.push_back(std::move(r));
  }
  rep.totals = count(rep.results);
  rep.totals.seconds = finished > started ? finished - started : 0;
  rep.totals.workers = static_cast<unsigned>(complete.size());
  rep.title = fmt::format("npuforge regression {} ({} shards)", o.out, n);
  clear_previous_run(o.out);
  fs::create_directories(o.out);
  write_reports(o.out, rep);
  return res;
}

}  // namespace npuforge::regress
