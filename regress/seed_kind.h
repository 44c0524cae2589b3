#pragma once
// Why a seed did not pass, as a value: the kind of the simulator's first finding, or a cause
// outside the checkers (the generator threw, the worker died, ...). The worker decides it
// (regress/worker.cc) and writes it into PREFIX.result.json by name; the runner and kill-rate
// read it back as this value, never by looking for words in a finding's text.
//
// The reports (results.jsonl, summary.json, junit.xml) show its tag: "checker/kind" of a
// finding ("hazard/hazard"), "allocator/invariant", "runner/killed", "runner/timeout",
// "runner/bad-result", and "" for the causes that have no tag of their own.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "sim/checkers.h"

namespace npuforge::sim::verify {
struct Verdict;
}

namespace npuforge::regress {

enum class Cause : uint8_t {
  None,            // passed
  Finding,         // a checker's finding: SeedKind::finding says which
  NoFinding,       // failed without a finding (the run stopped early, or the RTL decoder disagreed)
  Allocator,       // the allocator's own consistency check failed
  Generate,        // the generator threw
  Simulator,       // the simulator refused the program or threw (or `npuforge sim` exited so)
  SimulatorCrash,  // the `npuforge sim` child died of a signal (--isolate-seeds)
  WorkerKilled,    // the worker died of a signal and left no result
  WorkerExited,    // the worker exited and left no result
  Timeout,         // the worker ran past --timeout and was killed
  BadResult,       // the worker's result file could not be read
};
std::string_view to_string(Cause cause);  // "finding", "no-finding", "generate", ...
// The cause whose to_string is `name` exactly; nullopt when none is.
std::optional<Cause> cause_named(std::string_view name);

struct SeedKind {
  Cause cause = Cause::None;
  sim::FindingKind finding = sim::FindingKind::Hazard;  // with Cause::Finding only
  bool operator==(const SeedKind& o) const { return cause == o.cause && (cause != Cause::Finding || finding == o.finding); }
};
inline SeedKind finding_kind(sim::FindingKind k) { return {Cause::Finding, k}; }

// The tag the reports show (see above).
std::string tag(const SeedKind& kind);
// The kind a report's tag stands for, for reading results back (merge, --resume): a tag is
// exact for findings and the runner's causes; "" reads as `untagged` (the caller's cause for
// its status). Nullopt for a tag no kind has.
std::optional<SeedKind> kind_of_tag(std::string_view tag, Cause untagged);

// The kind as the fields of a JSON object (a worker's PREFIX.result.json):
// "cause": "finding", "finding_kind": "hazard" (finding_kind is "" for other causes).
std::string kind_json_fields(const SeedKind& kind);
// The kind those fields name; throws npuforge::Error naming `source` for a name no cause or
// finding kind has.
SeedKind parse_kind_fields(std::string_view cause, std::string_view finding, std::string_view source);

// A verdict's kind: its first finding's, NoFinding when it fails without one, None on a pass.
SeedKind kind_of(const sim::verify::Verdict& verdict);

}  // namespace npuforge::regress
