#pragma once
// A results directory on disk. Besides the reports (junit.xml, summary.json, coverage.json,
// failures.txt, index.html) it holds what a later merge needs:
//   shard.json     which slice of which list this is, written when the run starts (so an
//                  interrupted shard can still be named), completed when it ends
//   results.jsonl  one JSON object per seed with every field of SeedResult, in job order
//   progress.txt   one line per finished seed ("run:seed status"), appended as seeds finish
//   coverage/<run>-<seed>.json  per-seed coverage (merged in list order: "complete after N")
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "regress/coverage.h"
#include "regress/jobs.h"
#include "regress/report.h"

namespace npuforge::regress {

struct RunInfo {
  Shard shard;              // 1/1 for an unsharded run
  uint64_t list_jobs = 0;   // jobs in the whole list (all shards)
  uint64_t shard_jobs = 0;  // jobs in this slice
  std::string exe;          // the npuforge binary that ran it (repro lines name it)
  double started = 0;       // Unix time in seconds
  double finished = 0;      // 0 while running
};
std::string run_info_json(const RunInfo& info);
// Throws npuforge::Error naming `source` on malformed input.
RunInfo parse_run_info(std::string_view text, std::string_view source);

// One line, no newline.
std::string result_json(const SeedResult& r);
std::string results_jsonl(const std::vector<SeedResult>& results);
// Throws npuforge::Error naming `source` and the line on malformed input.
std::vector<SeedResult> parse_results(std::string_view text, std::string_view source);

// Everything the reports show.
struct RegressReport {
  std::vector<SeedResult> results;    // in list order
  Totals totals;
  Coverage coverage;
  std::vector<std::string> problems;  // shards missing or incomplete: shown in every report
  std::string title = "npuforge regression";
};

// Writes junit.xml, summary.json, coverage.json, failures.txt, results.jsonl and index.html.
void write_reports(const std::filesystem::path& out, const RegressReport& report);

// Seconds since the Unix epoch (wall clock, for runs that span machines).
double unix_now();

}  // namespace npuforge::regress
