#pragma once
// The regression runner: a pool of worker processes (`npuforge regress-worker`, one per
// seed: generate in-process, sample coverage, then `npuforge sim` in its own process since
// SystemC elaborates once per process), a progress line, the reports and reproduction
// commands, optional shrinking of each failure.
//
// Output directory layout (see regress/results.h for the files a merge reads):
//   junit.xml  summary.json  coverage.json (merged)  failures.txt (one repro per line)
//   index.html (the report for a browser)  results.jsonl  shard.json  progress.txt
//   seeds/<run>-<seed>.{s,bin,hex,memmap.yaml,ddr.bin,log,sim.log,result.json} (failures
//   only unless --keep)   coverage/<run>-<seed>.json (every seed)   shrunk/<run>-<seed>.*
#include <cstdio>
#include <string>
#include <vector>

#include "regress/coverage.h"
#include "regress/jobs.h"
#include "regress/report.h"

namespace npuforge::regress {

struct RegressOptions {
  std::vector<Job> jobs;
  std::string out = "results";
  unsigned workers = 1;
  bool shrink = false;
  size_t shrink_max = 3;  // failures to shrink at most (each takes many simulations)
  bool keep = false;      // keep the files of passing seeds
  double timeout_s = 600; // per seed
  std::string exe;        // the npuforge binary (default: this one)
  Shard shard;            // which slice of the list `jobs` is (recorded for merge)
  uint64_t list_jobs = 0; // jobs in the whole list; 0: jobs.size()
};

struct RegressOutcome {
  std::vector<SeedResult> results;  // in job order
  Totals totals;
  Coverage coverage;
};

// Writes the reports of a finished run (junit.xml ... index.html, see regress/results.h).
void write_outcome(const std::string& out, const RegressOutcome& outcome);

// Runs the jobs; progress and the summary go to `log` (a live line when it is a tty).
RegressOutcome run_regression(const RegressOptions& options, std::FILE* log);

// What one worker does for one job; writes PREFIX.result.json and PREFIX.cov.json (and the
// generated files). Returns 0 pass, 1 finding, 2 error.
struct WorkerOptions {
  Job job;
  std::string prefix;
  std::string exe;
  std::string coverage_path;  // default PREFIX.cov.json
};
int run_worker(const WorkerOptions& options);

// The one-line reproduction of a job (re-runs that seed alone with identical settings).
std::string repro_command(const std::string& exe, const Job& job, const std::string& out);

}  // namespace npuforge::regress
