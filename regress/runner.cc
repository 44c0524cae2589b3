#include "regress/runner.h"

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <fmt/core.h>
#include <yaml-cpp/yaml.h>

#include "bundle/files.h"
#include "util/error.h"
#include "util/file_io.h"
#include "isa/instruction.h"
#include "regress/journal.h"
#include "regress/proc.h"
#include "regress/results.h"
#include "regress/shrink.h"
#include "regress/worker_pool.h"
#include "util/plant.h"
#include "util/text.h"

namespace npuforge::regress {
namespace fs = std::filesystem;
namespace {

// A missing file reads as empty: a worker that died wrote nothing.
std::string slurp(const fs::path& p) { return fs::exists(p) ? util::read_file(p) : std::string(); }

std::string abs_path(const std::string& p) { return p.empty() ? p : fs::absolute(p).lexically_normal().string(); }

std::vector<std::string> worker_argv(const std::string& exe, const Job& j, const std::string& prefix,
                                     const std::string& cov) {
  std::vector<std::string> a{exe, "regress-worker", "--profile", j.profile, "--seed", std::to_string(j.seed),
                             "--run", j.run, "--prefix", prefix, "--coverage", cov};
  if (!j.npu.empty()) a.insert(a.end(), {"--npu", j.npu});
  if (j.length > 0) a.insert(a.end(), {"--length", std::to_string(j.length)});
  if (j.rtl) a.push_back("--rtl");
  if (!j.plant.empty()) a.insert(a.end(), {"--plant", j.plant});
  return a;
}

// Each distinct (profile, NPU config) loaded once, before forking, so that children share it.
// A pair that does not load is left out: its seeds load it themselves and report the error.
using InputCache = std::map<std::pair<std::string, std::string>, SeedInputs>;
InputCache preload_inputs(const std::vector<Job>& jobs) {
  InputCache cache;
  for (const Job& j : jobs) {
    const auto key = std::make_pair(j.profile, j.npu);
    if (cache.count(key)) continue;
    try {
      cache.emplace(key, SeedInputs{gen::Profile::load_file(j.profile), isa::load_npu_config(j.npu)});
    } catch (const std::exception&) {
    }
  }
  return cache;
}

// Why a worker left no result: killed by --timeout, or died (a signal, an exit without a result).
void worker_died(SeedResult& r, const ProcResult& p, const std::string& log, double timeout_s) {
  r.status = Status::Error;
  std::string tail = slurp(log);
  if (tail.size() > 300) tail = tail.substr(tail.size() - 300);
  r.finding = p.timed_out ? fmt::format("[runner/timeout] worker timed out: killed after {:.1f}s (--timeout {})",
                                        p.seconds, timeout_s)
                          : fmt::format("[runner/killed] worker exit {} signal {}: {}", p.exit_code, p.signal, tail);
  r.kind = SeedKind{p.timed_out ? Cause::Timeout : p.signal != 0 ? Cause::WorkerKilled : Cause::WorkerExited};
}

// Fills r from PREFIX.result.json (written by the worker), or marks an error.
void read_result(SeedResult& r, const ProcResult& p, const std::string& log, double timeout_s) {
  const fs::path path = r.prefix + ".result.json";
  if (!fs::exists(path)) return worker_died(r, p, log, timeout_s);
  try {
    const YAML::Node n = YAML::Load(slurp(path));
    const std::string status = n["status"].as<std::string>();
    r.status = status == "pass" ? Status::Pass : status == "fail" ? Status::Fail : Status::Error;
    r.finding = n["finding"].as<std::string>();
    r.kind = parse_kind_fields(n["cause"].as<std::string>(), n["finding_kind"].as<std::string>(), path.string());
    r.findings = n["findings"].as<uint64_t>();
    r.instructions = n["instructions"].as<uint64_t>();
    if (n["cycles"]) {
      r.cycles = n["cycles"].as<uint64_t>();
      r.buffers = n["buffers"].as<uint64_t>();
      r.peak_sram = n["peak_sram"].as<uint64_t>();
      r.sram_bytes = n["sram_bytes"].as<uint64_t>();
    }
  } catch (const std::exception& e) {  // cut short (a full disk, a kill mid-write): this seed's error only
    r.status = Status::Error;
    r.finding = fmt::format("[runner/bad-result] {}: {}", path.string(), e.what());
    r.kind = SeedKind{Cause::BadResult};
    r.findings = r.instructions = r.buffers = r.peak_sram = r.sram_bytes = r.cycles = 0;
  }
}

class Progress {
 public:
  Progress(std::FILE* log, size_t total, unsigned workers)
      : log_(log), total_(total), workers_(workers), tty_(log && ::isatty(::fileno(log))) {}
  void update(const Totals& t, bool final) {
    if (!log_) return;
    const size_t done = t.pass + t.fail + t.error;
    const double el = std::chrono::duration<double>(Clock::now() - start_).count();
    const double rate = el > 0 ? done / el : 0;
    const double eta = rate > 0 ? (total_ - done) / rate : 0;
    const std::string line = fmt::format("[{}/{}] pass {} fail {} error {}  {:.2f} seeds/s  {} workers  ETA {:.0f}s",
                                         done, total_, t.pass, t.fail, t.error, rate, workers_, eta);
    if (tty_) {
      fmt::print(log_, "\r{:<90}{}", line, final ? "\n" : "");
      std::fflush(log_);
    } else if (final || el - last_ >= 10 || done * 10 / std::max<size_t>(total_, 1) > last_decile_) {
      fmt::print(log_, "{}\n", line);
      last_ = el;
      last_decile_ = done * 10 / std::max<size_t>(total_, 1);
    }
  }

 private:
  std::FILE* log_;
  size_t total_;
  unsigned workers_;
  bool tty_;
  Clock::time_point start_ = Clock::now();
  double last_ = 0;
  size_t last_decile_ = 0;
};

void shrink_failure(SeedResult& r, const RegressOptions& o, std::FILE* log) {
  const isa::Isa& isa = isa::builtin_isa();
  const isa::NpuConfig npu = r.job.npu.empty() ? isa::NpuConfig{} : isa::NpuConfig::load_file(r.job.npu);
  const bundle::Program prog = bundle::read_program(isa, bundle::BundlePaths::at(r.prefix), npu);
  ShrinkProgram p{prog.instrs, *prog.memmap, prog.ddr_init};
  const std::string name = r.job.name();
  sim::verify::Options sim;  // as the seed was simulated: a simulator-side plant fails the candidates too
  sim.rtl = r.job.rtl;
  sim.plant = parse_plant(r.job.plant);
  sim.max_errors = 1;
  const ShrinkResult s = shrink(p, verify_oracle(isa, npu, sim));
  fs::create_directories(fs::path(o.out) / "shrunk");
  const fs::path prefix = fs::path(o.out) / "shrunk" / name;
  write_program(isa, s.program, prefix);
  r.shrunk = prefix.string() + ".s";
  if (log) {
    fmt::print(log, "shrink {}: {} -> {} instructions, {} -> {} buffers, {} simulations, still {}\n", r.job.id(),
               s.from_instrs, s.program.instrs.size(), s.from_buffers, s.program.map.buffers.size(), s.tests,
               tag(s.kind));
  }
}

}  // namespace

std::string repro_command(const std::string& exe, const Job& j, const std::string& out) {
  std::vector<std::string> a{exe, "regress", "--profile", abs_path(j.profile), "--seeds", std::to_string(j.seed),
                             "--run", j.run, "-j", "1", "--keep", "--out", out};
  if (!j.npu.empty()) a.insert(a.end(), {"--npu", abs_path(j.npu)});
  if (j.length > 0) a.insert(a.end(), {"--length", std::to_string(j.length)});
  if (j.rtl) a.push_back("--rtl");
  if (!j.plant.empty()) a.insert(a.end(), {"--plant", j.plant});
  return util::shell_join(a);
}

void write_outcome(const std::string& out, const RegressOutcome& res) {
  RegressReport rep;
  rep.results = res.results;
  rep.totals = res.totals;
  rep.coverage = res.coverage;
  rep.title = fmt::format("npuforge regression {}", out);
  write_reports(out, rep);
}

// What a run writes into its directory, besides the per-seed files under seeds/ and coverage/.
constexpr const char* kRunFiles[] = {"run.json", "shard.json", "journal.jsonl", "progress.txt", "summary.json",
                                     "results.jsonl", "junit.xml", "index.html", "coverage.json", "failures.txt"};

// The per-seed files of seeds the new run does not run would otherwise stay beside its own.
void clear_previous_run(const fs::path& out) {
  if (!fs::exists(out / "run.json") && !fs::exists(out / "shard.json")) return;  // not a results directory (yet)
  for (const char* sub : {"seeds", "coverage", "shrunk", "shrink-work"}) fs::remove_all(out / sub);
  for (const char* f : kRunFiles) fs::remove(out / f);
}

namespace {

// "run:1, run:2, ... and N more": which seeds a message is about.
std::string seed_list(const std::vector<const Job*>& jobs) {
  std::string s;
  for (size_t i = 0; i < jobs.size() && i < 20; ++i) s += (i ? ", " : "") + jobs[i]->id();
  if (jobs.size() > 20) s += fmt::format(" and {} more", jobs.size() - 20);
  return s.empty() ? "none" : s;
}

// Refuses a directory holding an interrupted run (unless forced) and clears a finished one;
// with `resume`, returns the results the journal already has (by list index).
std::map<uint64_t, SeedResult> prepare_dir(const RegressOptions& o, const fs::path& out, uint64_t& keep_bytes,
                                           std::FILE* log) {
  const fs::path jpath = out / "journal.jsonl";
  if (!o.resume) {
    if (!o.force && interrupted_run(out)) {
      throw Error(fmt::format("{}: holds an interrupted regression (started, never finished): finish it with "
                              "`npuforge regress --resume {}`, or give --force to start over and discard it",
                              out.string(), out.string()));
    }
    clear_previous_run(out);
    keep_bytes = 0;
    return {};
  }
  const JournalContents c = read_journal(jpath);
  keep_bytes = c.valid_bytes;
  if (c.torn && log) fmt::print(log, "resume: {} ends in a line cut short (a kill mid-write): dropped, its seed runs again\n", jpath.string());
  std::map<uint64_t, SeedResult> done;
  for (const SeedResult& r : c.results) done[r.job.index] = r;
  return done;
}

// The results the pool produced, and what was lost when one of them could not be saved.
struct PoolState {
  Totals running;
  bool stop = false;
  std::string failure;              // the write that failed
  std::vector<const Job*> unsaved;  // finished, but the journal could not take the result
};

[[noreturn]] void throw_lost(const PoolState& st, const RegressOutcome& res, const std::vector<bool>& saved,
                             const fs::path& out) {
  std::vector<const Job*> lost;
  size_t kept = 0;
  for (size_t i = 0; i < res.results.size(); ++i) {
    if (saved[i]) ++kept;
    else lost.push_back(&res.results[i].job);
  }
  throw Error(fmt::format(
      "{}\nregress stopped: {} of {} seeds have no saved result: {} (finished but not saved: {}; the others were "
      "stopped or never started). The {} saved results are in {}: free space, then run `npuforge regress --resume "
      "{}` to run the lost seeds and write the reports",
      st.failure, lost.size(), res.results.size(), seed_list(lost), seed_list(st.unsaved), kept,
      (out / "journal.jsonl").string(), out.string()));
}

void cleanup_passing(const SeedResult& r) {
  for (const char* ext : {".s", ".bin", ".hex", ".memmap.yaml", ".ddr.bin", ".log", ".sim.log", ".sim.json", ".result.json"}) {
    fs::remove(r.prefix + ext);
  }
}

// Coverage, shrinking and the reports once every seed has a saved result.
void finish_run(const RegressOptions& o, RegressOutcome& res, std::FILE* log) {
  const fs::path out = o.out;
  // Coverage merged in job order, so "complete after N seeds" is exact.
  for (const Job& j : o.jobs) {
    const fs::path p = out / "coverage" / (j.name() + ".json");
    if (fs::exists(p)) res.coverage.merge(Coverage::from_json(slurp(p), p.string()));
  }
  size_t shrunk = 0;
  for (auto& r : res.results) {
    if (!o.shrink || r.status != Status::Fail || shrunk >= o.shrink_max) continue;
    ++shrunk;
    try {
      shrink_failure(r, o, log);
    } catch (const std::exception& e) {
      if (log) fmt::print(log, "shrink {}: {}\n", r.job.id(), e.what());
    }
  }
  write_outcome(o.out, res);
}

}  // namespace

RegressOutcome run_regression(const RegressOptions& o, std::FILE* log) {
  // Past `ulimit -f` a write must fail (EFBIG, reported with the file's name), not kill the runner unannounced.
  ::signal(SIGXFSZ, SIG_IGN);
  const std::string exe = o.exe.empty() ? self_exe() : o.exe;
  const fs::path out = o.out;
  fs::create_directories(out);
  const RunLock lock(out);
  uint64_t keep_bytes = 0;
  std::map<uint64_t, SeedResult> done = prepare_dir(o, out, keep_bytes, log);
  fs::create_directories(out / "seeds");
  fs::create_directories(out / "coverage");
  // shard.json first: a shard killed before it finishes can still be named by the merge.
  RunInfo info{o.shard, o.list_jobs ? o.list_jobs : o.jobs.size(), o.jobs.size(), exe, unix_now(), 0};
  for (const char* stale : {"summary.json", "results.jsonl", "junit.xml", "index.html", "coverage.json"}) fs::remove(out / stale);
  util::write_file(out / "shard.json", run_info_json(info));
  if (!o.resume) util::write_file(out / "run.json", run_json(o), "run options");  // after shard.json: unfinished
  Journal journal(out / "journal.jsonl", keep_bytes);
  std::ofstream progress_file(out / "progress.txt", o.resume ? std::ios::app : std::ios::trunc);
  RegressOutcome res;
  res.results.resize(o.jobs.size());
  std::vector<bool> saved(o.jobs.size(), false);
  std::vector<Task> tasks;
  std::vector<size_t> task_job;  // tasks[t] runs o.jobs[task_job[t]]
  const InputCache inputs = o.isolate_seeds ? InputCache{} : preload_inputs(o.jobs);
  (void)isa::builtin_isa();  // parsed once here, inherited by every forked child
  for (size_t i = 0; i < o.jobs.size(); ++i) {
    const Job& j = o.jobs[i];
    const std::string name = j.name();
    SeedResult& r = res.results[i];
    if (auto it = done.find(j.index); it != done.end() && it->second.job.id() == j.id()) {
      r = it->second;  // finished before the interruption: not run again
      saved[i] = true;
      continue;
    }
    r.job = j;
    r.prefix = (out / "seeds" / name).string();
    r.repro = repro_command(exe, j, abs_path((out / "repro" / name).string()));
    fs::remove(r.prefix + ".result.json");
    const std::string cov = (out / "coverage" / (name + ".json")).string();
    std::vector<std::string> argv = worker_argv(exe, j, r.prefix, cov);
    if (o.plant_kill) argv.insert(argv.end(), {"--plant-kill", std::to_string(o.plant_kill)});
    if (o.plant_hang) argv.insert(argv.end(), {"--plant-hang", std::to_string(o.plant_hang)});
    Task t{std::move(argv), r.prefix + ".log", r.prefix + ".log", {}};
    if (!o.isolate_seeds) {
      WorkerOptions w{j, r.prefix, exe, cov, true, o.keep, o.plant_kill, nullptr, o.plant_hang};
      if (auto it = inputs.find({j.profile, j.npu}); it != inputs.end()) w.preloaded = &it->second;
      t.in_child = [w] { return run_worker(w); };
    }
    tasks.push_back(std::move(t));
    task_job.push_back(i);
  }
  if (o.resume && log) {
    fmt::print(log, "resume {}: {} of {} seeds already done, running {}\n", out.string(), o.jobs.size() - tasks.size(),
               o.jobs.size(), tasks.size());
  }
  const unsigned workers = std::max(1u, o.workers);
  Progress progress(log, tasks.size(), workers);
  PoolState st;
  const auto t0 = Clock::now();
  const auto on_done = [&](size_t t, const ProcResult& p) {
    SeedResult& r = res.results[task_job[t]];
    r.seconds = p.seconds;
    read_result(r, p, tasks[t].out_path, o.timeout_s);
    if (st.stop) return;  // already stopping: this result is among the lost
    try {
      journal.append(r);
      saved[task_job[t]] = true;
    } catch (const Error& e) {
      st.stop = true;
      st.failure = e.what();
      st.unsaved.push_back(&r.job);
      return;
    }
    (r.status == Status::Pass ? st.running.pass : r.status == Status::Fail ? st.running.fail : st.running.error)++;
    progress_file << r.job.id() << ' ' << to_string(r.status) << std::endl;  // read by --slurm
    if (r.status == Status::Pass && !o.keep) cleanup_passing(r);
  };
  const auto on_tick = [&] { progress.update(st.running, false); };
  // The in-process path runs many seeds per worker (regress/worker_pool.h); --isolate-seeds
  // execs a worker per seed.
  size_t started = tasks.size();
  if (o.isolate_seeds) run_pool(tasks, workers, o.timeout_s, on_done, on_tick, &st.stop);
  else started = run_worker_pool(tasks, workers, o.timeout_s, on_done, on_tick, &st.stop);
  if (st.stop) throw_lost(st, res, saved, out);
  res.totals = count(res.results);
  res.totals.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  res.totals.workers = workers;
  progress.update(st.running, true);
  if (log && !tasks.empty()) fmt::print(log, "{} worker processes ran {} seeds\n", started, tasks.size());
  try {
    finish_run(o, res, log);
    info.finished = unix_now();
    util::write_file(out / "shard.json", run_info_json(info));
  } catch (const Error& e) {
    throw Error(fmt::format("{}\nregress: the reports in {} are incomplete, but no seed's result is lost: all {} are "
                            "in {}. Free space, then run `npuforge regress --resume {}` to write the reports",
                            e.what(), out.string(), res.results.size(), journal.path().string(), out.string()));
  }
  return res;
}

}  // namespace npuforge::regress
