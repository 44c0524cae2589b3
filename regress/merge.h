#pragma once
// Merging the shards of one regression list (each run with --shard K/N, anywhere) back into
// one results directory: one JUnit file and summary in list order, coverage merged seed by
// seed in list order (so "complete after N seeds" is what one run would have said), failures
// with reproduction lines, and the HTML report. A shard that is missing or did not finish is
// never dropped silently: it is named in `problems`, in every report, and makes the merge fail.
#include <string>
#include <vector>

#include "regress/results.h"

namespace npuforge::regress {

struct MergeOptions {
  std::vector<std::string> inputs;  // shard results directories
  std::string out;                  // where the merged reports go (may be the shards' parent)
  unsigned expect_shards = 0;       // N; 0: as the shards' shard.json say
};

struct MergeOutcome {
  RegressReport report;
  std::vector<unsigned> missing;  // shard numbers (1-based) without complete results
};

// Reads the shards and writes the merged reports to options.out. Throws npuforge::Error when
// the inputs cannot belong together (different lists or shard counts, a shard given twice,
// malformed files); missing or unfinished shards are reported in the outcome instead.
MergeOutcome merge_shards(const MergeOptions& options);

}  // namespace npuforge::regress
