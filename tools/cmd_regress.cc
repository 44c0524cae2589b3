// npuforge regress: many seeds in parallel worker processes, JUnit/JSON reports, coverage,
// reproduction commands and optional shrinking. regress-worker (hidden) runs one seed.
#include <thread>

#include <fmt/core.h>

#include "util/error.h"
#include "regress/job_check.h"
#include "regress/journal.h"
#include "regress/proc.h"
#include "regress/runner.h"
#include "regress/slurm.h"
#include "util/text.h"
#include "tools/command.h"
#include "tools/input_file.h"
#include "util/file_io.h"
#include "util/plant.h"

namespace npuforge::tools {
namespace {

struct RegressOpts {
  std::vector<std::string> lists;
  std::string profile, npu, seeds = "1-100", run, shard, out = "results";
  int64_t length = 0;
  unsigned jobs = 0;
  std::string plant;
  size_t shrink_max = 3;
  double timeout = 600;
  bool rtl = false, shrink = false, keep = false, quiet = false, per_seed = false;
  bool isolate_seeds = false;
  uint64_t plant_kill = 0, plant_hang = 0;
  std::string resume;  // DIR of an interrupted run
  bool force = false;
  // --slurm
  bool slurm = false, dry_run = false;
  std::string partition;
  unsigned shards = 8;
  std::vector<std::string> sbatch_args;
  double poll = 0.5;
};

std::string absolute(const std::string& p) { return std::filesystem::absolute(p).lexically_normal().string(); }

// What every shard of a --slurm run is given: the same jobs, the same per-seed options.
std::vector<std::string> shard_args(const RegressOpts& o) {
  std::vector<std::string> a;
  for (const auto& l : o.lists) a.push_back(absolute(l));
  if (!o.profile.empty()) {
    a.insert(a.end(), {"--profile", absolute(o.profile), "--seeds", o.seeds});
    if (!o.npu.empty()) a.insert(a.end(), {"--npu", absolute(o.npu)});
    if (o.length > 0) a.insert(a.end(), {"--length", std::to_string(o.length)});
    if (!o.run.empty()) a.insert(a.end(), {"--run", o.run});
    if (o.rtl) a.push_back("--rtl");
    if (!o.plant.empty()) a.insert(a.end(), {"--plant", o.plant});
  }
  a.insert(a.end(), {"--timeout", fmt::format("{}", o.timeout)});
  if (o.keep) a.push_back("--keep");
  if (o.isolate_seeds) a.push_back("--isolate-seeds");
  a.push_back("--force");  // a requeued array task starts its shard over (its dir holds the interrupted try)
  if (o.shrink) a.insert(a.end(), {"--shrink", "--shrink-max", std::to_string(o.shrink_max)});
  return a;
}

int run_slurm(const RegressOpts& o) {
  using namespace regress;
  if (!o.shard.empty()) throw Error("regress --slurm: --shard is set per task; give --shards N instead");
  if (o.shards == 0) throw Error("regress --slurm: --shards must be at least 1");
  SlurmOptions s;
  s.out = absolute(o.out);
  s.shards = o.shards;
  s.partition = o.partition;
  s.cpus_per_task = o.jobs ? o.jobs : 1;
  s.shard_args = shard_args(o);
  s.sbatch_args = o.sbatch_args;
  s.exe = self_exe();
  s.workdir = std::filesystem::current_path().string();
  s.poll_s = o.poll;
  if (o.dry_run) {
    std::filesystem::create_directories(std::filesystem::path(s.out) / "slurm");
    util::write_file(script_path(s), sbatch_script(s));
    fmt::print("wrote {}\nsubmit:  sbatch {}\nthen:    {}\n", script_path(s), util::shell_quote(script_path(s)),
               merge_command(s));
    return kExitOk;
  }
  return run_on_slurm(s, o.quiet ? nullptr : stderr) == 0 ? kExitOk : kExitFinding;
}

// A new run's options: the jobs from the lists and --profile, the slice, the per-seed options.
regress::RegressOptions fresh_options(const RegressOpts& o) {
  using namespace regress;
  std::vector<Job> jobs;
  for (const auto& l : o.lists) {
    auto more = load_list(l);
    jobs.insert(jobs.end(), more.begin(), more.end());
  }
  if (!o.profile.empty()) {
    Job j;
    j.profile = o.profile;
    j.npu = o.npu;
    j.length = o.length;
    j.rtl = o.rtl;
    j.plant = plant_name(parse_plant(o.plant));
    if (plant_needs_rtl(parse_plant(o.plant)) && !o.rtl)
      throw Error(fmt::format("regress: plant {} lives in RTL: add --rtl", j.plant));
    j.run = o.run.empty() ? std::filesystem::path(o.profile).stem().string() : o.run;
    for (uint64_t s : parse_seeds(o.seeds)) {
      j.seed = s;
      jobs.push_back(j);
    }
  }
  if (jobs.empty()) throw Error("regress: nothing to run (give --profile or a regression list)");
  check_job_inputs(jobs);
  number_jobs(jobs);
  RegressOptions ro;
  ro.list_jobs = jobs.size();
  if (!o.shard.empty()) {
    ro.shard = parse_shard(o.shard);
    jobs = select_shard(jobs, ro.shard);
  }
  ro.jobs = std::move(jobs);
  ro.out = o.out;
  ro.shrink = o.shrink;
  ro.shrink_max = o.shrink_max;
  ro.keep = o.keep;
  ro.isolate_seeds = o.isolate_seeds;
  ro.timeout_s = o.timeout;
  ro.force = o.force;
  return ro;
}

// --resume DIR: everything that decides results comes from DIR/run.json, so the finished
// and the remaining seeds of the run are run alike.
regress::RegressOptions resume_options(const RegressOpts& o) {
  if (!o.lists.empty() || !o.profile.empty() || !o.shard.empty())
    throw Error("regress --resume: the run's jobs and options come from DIR/run.json; give no lists, --profile or --shard");
  const std::filesystem::path run = std::filesystem::path(o.resume) / "run.json";
  if (!std::filesystem::exists(run))
    throw Error(fmt::format("{}: not found: {} holds no regression to resume", run.string(), o.resume));
  regress::RegressOptions ro = regress::parse_run_json(util::read_file(run, "run options"), run.string());
  ro.out = o.resume;
  ro.resume = true;
  return ro;
}

int run_regress(const RegressOpts& o) {
  using namespace regress;
  if (o.slurm) {
    if (!o.resume.empty()) throw Error("regress --slurm: --resume is not supported (a failed shard is rerun by its array task)");
    (void)fresh_options(o);  // the same checks of the lists and --profile before anything is submitted
    return run_slurm(o);
  }
  RegressOptions ro = o.resume.empty() ? fresh_options(o) : resume_options(o);
  ro.workers = o.jobs ? o.jobs : std::max(1u, std::thread::hardware_concurrency());
  ro.plant_kill = o.plant_kill;
  ro.plant_hang = o.plant_hang;
  const RegressOutcome res = run_regression(ro, o.quiet ? nullptr : stderr);
  if (o.per_seed) fmt::print("{}", seed_table(res.results));
  fmt::print("{}", summary_table(res.results, res.totals));
  fmt::print("{}", res.coverage.report(false));
  for (const auto& r : res.results) {
    if (r.status == Status::Pass) continue;
    fmt::print("{} {} {}\n  reproduce: {}\n", to_string(r.status), r.job.id(), r.finding, r.repro);
    if (!r.shrunk.empty()) fmt::print("  shrunk: {}\n", r.shrunk);
  }
  fmt::print("reports: {0}/junit.xml {0}/summary.json {0}/coverage.json {0}/failures.txt {0}/index.html\n", ro.out);
  return res.totals.fail + res.totals.error > 0 ? kExitFinding : kExitOk;
}

struct WorkerOpts {
  regress::WorkerOptions w;
};

int run_worker(const WorkerOpts& o) {
  regress::WorkerOptions w = o.w;
  if (w.exe.empty()) w.exe = regress::self_exe();
  const int rc = regress::run_worker(w);
  return rc == 0 ? kExitOk : kExitFinding;
}

}  // namespace

void add_regress_command(CLI::App& app, Runner& run) {
  auto opts = std::make_shared<RegressOpts>();
  CLI::App* sub = app.add_subcommand("regress", "Run many seeds in parallel: pass/fail, JUnit XML, coverage, repro commands");
  sub->add_option("lists", opts->lists, "regression list files (configs/regress/*.yaml)")->transform(config_file("lists", ConfigKind::kRegressList));
  sub->add_option("--profile", opts->profile, "generator profile (configs/gen/*.yaml)")->transform(config_file("--profile", ConfigKind::kProfile));
  sub->add_option("--seeds", opts->seeds, "seeds with --profile: 1-1000, 7, 1-10,20 (default 1-100)");
  sub->add_option("--npu", opts->npu, "NPU config for --profile (default: the built-in configs/npu/default.yaml)")->transform(config_file("--npu", ConfigKind::kNpu));
  sub->add_option("--length", opts->length, "instructions per program (default: the profile's)");
  sub->add_option("--run", opts->run, "name of the --profile run in reports (default: profile stem)");
  sub->add_flag("--rtl", opts->rtl, "simulate --profile seeds with the Verilated RTL scratchpad");
  sub->add_option("-j,--jobs", opts->jobs, "worker processes (default: the cores; with --slurm: per shard and its --cpus-per-task, default 1)");
  sub->add_option("--shard", opts->shard, "run only the K-th of N interleaved slices: K/N");
  sub->add_option("-o,--out", opts->out, "output directory (default results)");
  sub->add_flag("--shrink", opts->shrink, "shrink failing programs (see --shrink-max)");
  sub->add_option("--shrink-max", opts->shrink_max, "failures to shrink at most (default 3)");
  sub->add_flag("--keep", opts->keep, "keep the generated files of passing seeds too");
  sub->add_option("--timeout", opts->timeout, "seconds per seed before it is killed (default 600)");
  sub->add_flag("-q,--quiet", opts->quiet, "no progress output");
  sub->add_flag("--per-seed", opts->per_seed, "print a table with one row per seed");
  sub->add_option("--plant", opts->plant, "run --profile seeds with a planted bug (see `npuforge plants`)");
  sub->add_flag("--isolate-seeds", opts->isolate_seeds,
                "run each seed as `npuforge regress-worker` + `npuforge sim` on written files (slower; the "
                "default: -j persistent workers that each simulate many seeds from memory)");
  sub->add_option("--resume", opts->resume,
                  "finish the interrupted run in DIR (options from DIR/run.json; seeds in DIR/journal.jsonl are not rerun)");
  sub->add_flag("--force", opts->force, "start over in an --out that holds an interrupted run (discards it)");
  sub->add_option("--plant-kill", opts->plant_kill, "test hook: the worker of this seed kills itself with SIGKILL")
      ->group("");
  sub->add_option("--plant-hang", opts->plant_hang, "test hook: the worker of this seed hangs until --timeout")
      ->group("");
  sub->add_flag("--slurm", opts->slurm,
                "run the shards as a Slurm job array (sbatch), follow it with squeue, then merge into --out");
  sub->add_option("--shards", opts->shards, "with --slurm: array tasks, one shard each (default 8)");
  sub->add_option("--partition", opts->partition, "with --slurm: the Slurm partition (default: the cluster's)");
  sub->add_option("--sbatch-arg", opts->sbatch_args, "with --slurm: an extra #SBATCH option, e.g. --time=60 (repeatable)");
  sub->add_option("--poll", opts->poll, "with --slurm: seconds between squeue calls (default 0.5)");
  sub->add_flag("--dry-run", opts->dry_run, "with --slurm: only write DIR/slurm/regress.sbatch");
  bind_runner(sub, opts, run, &run_regress);

  auto wopts = std::make_shared<WorkerOpts>();
  CLI::App* w = app.add_subcommand("regress-worker", "one seed of a regression (internal)");
  w->group("");  // hidden from --help
  w->add_option("--profile", wopts->w.job.profile)->required();
  w->add_option("--seed", wopts->w.job.seed)->required();
  w->add_option("--prefix", wopts->w.prefix)->required();
  w->add_option("--run", wopts->w.job.run);
  w->add_option("--npu", wopts->w.job.npu);
  w->add_option("--length", wopts->w.job.length);
  w->add_option("--coverage", wopts->w.coverage_path);
  w->add_option("--plant", wopts->w.job.plant);
  w->add_option("--exe", wopts->w.exe);
  w->add_option("--plant-kill", wopts->w.plant_kill);
  w->add_option("--plant-hang", wopts->w.plant_hang);
  w->add_flag("--rtl", wopts->w.job.rtl);
  bind_runner(w, wopts, run, &run_worker);
}

}  // namespace npuforge::tools
