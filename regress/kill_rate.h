#pragma once
// npuforge kill-rate: every planted bug (util/plant.h) against the regression. Each plant runs
// over the runs of a regression list (the nightly profiles), seed after seed, through the
// regression runner (one worker process per seed, so a plant that crashes or hangs a worker
// is caught as `crash` / `timeout`), and stops at its first catching seed.
//
// Plants that live in RTL run on the list's `rtl: true` runs (or, if it has none, on its TLM
// runs with --rtl); every other plant on the TLM runs. A catch counts only when the same job
// without the plant passes (else the row says `baseline-fails` and the plant is not killed).
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "regress/jobs.h"
#include "regress/report.h"
#include "regress/seed_kind.h"
#include "util/plant.h"

namespace npuforge::regress {

struct KillRateOptions {
  std::vector<Job> runs;         // one job per list run; seeds come from `seeds`
  std::vector<uint64_t> seeds;   // tried in this order
  std::vector<Plant> plants;     // empty: the whole catalogue
  unsigned workers = 1;
  double timeout_s = 300;        // per seed
  std::string out = "results/kill-rate";
  std::string exe;               // the npuforge binary (default: this one)
};

// How a plant's first catching seed failed, as the table shows it.
enum class Catch : uint8_t {
  None,           // not caught
  Finding,        // the seed failed with a finding (or the allocator's invariant): PlantOutcome::kind
  Fail,           // the seed failed without a finding ("fail")
  Timeout,        // the worker ran past --timeout ("timeout")
  Crash,          // the worker or the simulator died of a signal ("crash")
  GenError,       // the generator threw ("gen-error")
  Error,          // any other error of the tools ("error")
  BaselineFails,  // not counted: the same job fails without the plant ("baseline-fails")
};
std::string_view to_string(Catch c);  // the names above; "" for None and Finding
// How a seed with `status` and `kind` (from its worker, regress/seed_kind.h) caught a plant.
Catch catch_of(Status status, const SeedKind& kind);

struct PlantOutcome {
  Plant plant;
  bool killed = false;
  uint64_t seed = 0;         // first catching seed
  std::string run;           // the run it was caught in
  Catch how = Catch::None;   // how that seed failed
  SeedKind kind;             // ... and its kind (Catch::Finding: the finding's)
  std::string finding;       // the first finding line
  uint64_t seeds_to_catch = 0;  // seeds tried up to and including the catching one
  uint64_t jobs = 0;            // seeds x runs simulated
};

// The jobs of `runs` that a plant runs on (seed unset), as described above.
std::vector<Job> runs_for_plant(const std::vector<Job>& runs, Plant plant);

// The table's "kind" column: the finding's tag ("hazard/hazard") or to_string(how).
std::string kind_column(const PlantOutcome& outcome);

std::vector<PlantOutcome> run_kill_rate(const KillRateOptions& options, std::FILE* log);

// One row per plant, then "killed K/N (P%), median seeds to catch M".
std::string kill_rate_table(const std::vector<PlantOutcome>& outcomes);

// Median of seeds_to_catch over the killed plants (0 when none).
double median_seeds_to_catch(const std::vector<PlantOutcome>& outcomes);

}  // namespace npuforge::regress
