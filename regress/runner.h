#pragma once
// The regression runner: a pool of worker processes, a progress line, the reports and
// reproduction commands, optional shrinking of each failure.
//
// Two paths run a seed, with identical results (tests/regress/inproc_test.cc):
// - in-process (default): the runner, with the ISA and the profiles already loaded, forks
//   `-j` persistent workers (regress/worker_pool.h) that each take seeds one at a time over a
//   pipe: generate, sample coverage and simulate the program from memory (no exec, no files
//   read back). The files are written only for a failing seed or with --keep,
//   byte-identical to `npuforge gen`'s. Each seed simulates on a fresh SystemC kernel inside
//   the worker (sim::sc_model::restart_kernel), not on one elaboration reset between
//   programs: a program that deadlocks leaves the model's threads blocked mid-instruction,
//   and a reset would need every module to clear its state, or one seed's leftovers could
//   change the next one's cycles. A fresh kernel gives each seed the verdict of a fresh
//   process by construction, while the worker keeps its memory (a fork per seed spent a
//   third of the CPU in fork, page faults and clearing fresh pages). The runner knows the
//   one seed each worker is on, so a crash or hang costs exactly that seed; the worker is
//   replaced.
// - --isolate-seeds (the fallback, and the reference the test compares with): exec
//   `npuforge regress-worker` per seed, which writes the files and runs `npuforge sim` on them.
// Either way a child that crashes or times out is reported as an error with its repro line
// ([runner/killed] or [runner/timeout]) and no other seed's result is lost; a runner that
// is killed takes its workers with it, and `--resume` finishes its run (regress/journal.h).
//
// Output directory layout (see regress/results.h for the files a merge reads):
//   junit.xml  summary.json  coverage.json (merged)  failures.txt (one repro per line)
//   index.html (the report for a browser)  results.jsonl  shard.json  progress.txt
//   run.json  journal.jsonl  .lock (regress/journal.h)
//   seeds/<run>-<seed>.{s,bin,hex,memmap.yaml,ddr.bin,log,sim.log,result.json} (failures
//   only unless --keep)   coverage/<run>-<seed>.json (every seed)   shrunk/<run>-<seed>.*
#include <cstdio>
#include <string>
#include <vector>

#include "gen/profile.h"
#include "isa/npu_config.h"
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
  bool isolate_seeds = false;  // exec a regress-worker + `npuforge sim` per seed (the file path)
  uint64_t plant_kill = 0;     // test hook: the worker of this seed kills itself (SIGKILL)
  uint64_t plant_hang = 0;     // test hook: the worker of this seed hangs (until --timeout)
  bool resume = false;         // finish the interrupted run in `out` (options from its run.json)
  bool force = false;          // start over in an `out` that holds an interrupted run
};

struct RegressOutcome {
  std::vector<SeedResult> results;  // in job order
  Totals totals;
  Coverage coverage;
};

// Writes the reports of a finished run (junit.xml ... index.html, see regress/results.h).
void write_outcome(const std::string& out, const RegressOutcome& outcome);
// Removes the files of a finished run from its results directory (its per-seed files under
// seeds/ and coverage/, shrunk programs, reports, journal): a new run or a merge into the
// directory replaces it. A directory that holds no run is left as it is.
void clear_previous_run(const std::filesystem::path& out);

// Runs the jobs; progress and the summary go to `log` (a live line when it is a tty).
// Each seed's result is journalled as it finishes (regress/journal.h); with `resume` the
// seeds already in the journal are not run again. Throws npuforge::Error, naming the file
// and the seeds whose results were lost, when a result or a report cannot be written (a
// full disk), and when `out` holds an interrupted run and neither `resume` nor `force` is set.
RegressOutcome run_regression(const RegressOptions& options, std::FILE* log);

// What one worker does for one job; writes PREFIX.result.json and PREFIX.cov.json (and the
// generated files). Returns 0 pass, 1 finding, 2 error.
struct SeedInputs {
  gen::Profile profile;
  isa::NpuConfigSource npu;
};
struct WorkerOptions {
  Job job;
  std::string prefix;
  std::string exe;
  std::string coverage_path;  // default PREFIX.cov.json
  bool in_process = false;    // simulate here, write the program's files only on failure or `keep`
  bool keep = false;
  uint64_t plant_kill = 0;    // test hook: SIGKILL itself after generating this seed
  const SeedInputs* preloaded = nullptr;  // the job's profile and NPU config, else loaded here
  uint64_t plant_hang = 0;    // test hook: hang after generating this seed (until killed)
};
int run_worker(const WorkerOptions& options);

// The one-line reproduction of a job (re-runs that seed alone with identical settings).
std::string repro_command(const std::string& exe, const Job& job, const std::string& out);

}  // namespace npuforge::regress
