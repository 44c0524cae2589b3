#pragma once
// Per-seed results and the reports built from them: results/junit.xml (one testcase per
// seed, the failure message is the first checker finding) and results/summary.json.
#include <cstdint>
#include <string>
#include <vector>

#include "regress/jobs.h"
#include "regress/seed_kind.h"

namespace npuforge::regress {

enum class Status : uint8_t {
  Pass,   // generated, simulated, no finding
  Fail,   // a checker finding (or the simulator exited 1 with FAIL)
  Error,  // the tools themselves failed: bad input, crash, timeout
};
std::string_view to_string(Status s);

struct SeedResult {
  Job job;
  Status status = Status::Pass;
  std::string finding;  // first finding line, "[checker/Kind] ..." (or the error text)
  SeedKind kind;        // why it did not pass (its tag, "checker/kind", is what the reports show)
  uint64_t findings = 0;
  uint64_t instructions = 0;
  uint64_t buffers = 0, peak_sram = 0, sram_bytes = 0;  // from the generator
  uint64_t cycles = 0;                                  // from the simulator
  double seconds = 0;
  std::string prefix;   // where its files are (kept for failures)
  std::string repro;    // one-line shell command reproducing this seed
  std::string shrunk;   // the shrunk program's .s, when --shrink ran
};

struct Totals {
  uint64_t pass = 0, fail = 0, error = 0;
  double seconds = 0;  // wall time of the regression
  unsigned workers = 1;
};
Totals count(const std::vector<SeedResult>& results);

// JUnit XML: one <testsuite> per run name, one <testcase name="seed N"> per seed. Each of
// `problems` (a shard missing from a merge) becomes an <error> in a suite "merge", so that no
// lost shard passes unnoticed.
std::string junit_xml(const std::vector<SeedResult>& results, const Totals& totals,
                      const std::vector<std::string>& problems = {});
std::string summary_json(const std::vector<SeedResult>& results, const Totals& totals,
                         const std::vector<std::string>& problems = {});
// A fixed-width table: per run, seeds / pass / fail / error / seeds per second.
std::string summary_table(const std::vector<SeedResult>& results, const Totals& totals);
// One row per seed: status, instructions, buffers, peak SRAM, cycles, findings, first finding.
std::string seed_table(const std::vector<SeedResult>& results);

}  // namespace npuforge::regress
