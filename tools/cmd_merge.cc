// npuforge merge: the shards of one regression list (regress --shard K/N, run anywhere) back
// into one results directory: JUnit, summary, coverage, failures with repro lines, index.html.
#include <fmt/core.h>

#include "regress/merge.h"
#include "tools/command.h"

namespace npuforge::tools {
namespace {

struct MergeOpts {
  regress::MergeOptions m;
};

int run_merge(const MergeOpts& o) {
  using namespace regress;
  const MergeOutcome res = merge_shards(o.m);
  const RegressReport& rep = res.report;
  fmt::print("{}", summary_table(rep.results, rep.totals));
  fmt::print("{}", rep.coverage.report(false));
  for (const auto& r : rep.results) {
    if (r.status == Status::Pass) continue;
    fmt::print("{} {} {}\n  reproduce: {}\n", to_string(r.status), r.job.id(), r.finding, r.repro);
  }
  for (const auto& p : rep.problems) fmt::print(stderr, "npuforge merge: {}\n", p);
  fmt::print("reports: {0}/junit.xml {0}/summary.json {0}/coverage.json {0}/failures.txt {0}/index.html\n", o.m.out);
  const bool ok = rep.problems.empty() && rep.totals.fail + rep.totals.error == 0;
  return ok ? kExitOk : kExitFinding;
}

}  // namespace

void add_merge_command(CLI::App& app, Runner& run) {
  auto opts = std::make_shared<MergeOpts>();
  CLI::App* sub = app.add_subcommand(
      "merge", "Merge the shard results of one regression (regress --shard K/N) into one report; "
               "exit 1 on a failing seed or a missing shard");
  sub->add_option("shards", opts->m.inputs, "shard results directories (e.g. DIR/shard-*)")->required();
  sub->add_option("-o,--out", opts->m.out, "merged results directory")->required();
  sub->add_option("--shards", opts->m.expect_shards, "expected number of shards N (default: as the shards say)");
  bind_runner(sub, opts, run, &run_merge);
}

}  // namespace npuforge::tools
