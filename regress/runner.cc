#include "regress/runner.h"

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <fmt/core.h>
#include <yaml-cpp/yaml.h>

#include "allocator/memmap.h"
#include "util/error.h"
#include "util/file_io.h"
#include "isa/instruction.h"
#include "regress/proc.h"
#include "regress/results.h"
#include "regress/shrink.h"
#include "util/text.h"
#include "sim/program.h"

namespace npuforge::regress {
namespace fs = std::filesystem;
namespace {

using Clock = std::chrono::steady_clock;

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

// Fills r from PREFIX.result.json (written by the worker), or marks an error.
void read_result(SeedResult& r, const ProcResult& p, const std::string& log) {
  const fs::path path = r.prefix + ".result.json";
  if (!fs::exists(path)) {
    r.status = Status::Error;
    std::string tail = slurp(log);
    if (tail.size() > 300) tail = tail.substr(tail.size() - 300);
    r.finding = p.timed_out ? "worker timed out" : fmt::format("worker exit {} signal {}: {}", p.exit_code, p.signal, tail);
    return;
  }
  const YAML::Node n = YAML::Load(slurp(path));
  const std::string status = n["status"].as<std::string>();
  r.status = status == "pass" ? Status::Pass : status == "fail" ? Status::Fail : Status::Error;
  r.finding = n["finding"].as<std::string>();
  r.kind = n["kind"].as<std::string>();
  r.findings = n["findings"].as<uint64_t>();
  r.instructions = n["instructions"].as<uint64_t>();
  if (n["cycles"]) {
    r.cycles = n["cycles"].as<uint64_t>();
    r.buffers = n["buffers"].as<uint64_t>();
    r.peak_sram = n["peak_sram"].as<uint64_t>();
    r.sram_bytes = n["sram_bytes"].as<uint64_t>();
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

void shrink_failure(SeedResult& r, const RegressOptions& o, const std::string& exe, std::FILE* log) {
  const isa::Isa& isa = isa::builtin_isa();
  const isa::NpuConfig npu = r.job.npu.empty() ? isa::NpuConfig{} : isa::NpuConfig::load_file(r.job.npu);
  const sim::Program prog = sim::Program::load(isa, r.prefix + ".bin", r.prefix + ".memmap.yaml", r.prefix + ".ddr.bin", npu);
  ShrinkProgram p{prog.instrs, *prog.memmap, prog.ddr_init};
  const std::string name = r.job.name();
  const fs::path work = fs::path(o.out) / "shrink-work" / name;
  const ShrinkResult s = shrink(p, sim_oracle(exe, isa, work, r.job.rtl, r.job.npu));
  fs::create_directories(fs::path(o.out) / "shrunk");
  const fs::path prefix = fs::path(o.out) / "shrunk" / name;
  write_program(isa, s.program, prefix);
  fs::remove_all(work);
  r.shrunk = prefix.string() + ".s";
  if (log) {
    fmt::print(log, "shrink {}: {} -> {} instructions, {} -> {} buffers, {} simulations, still {}\n", r.job.id(),
               s.from_instrs, s.program.instrs.size(), s.from_buffers, s.program.map.buffers.size(), s.tests, s.kind);
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

RegressOutcome run_regression(const RegressOptions& o, std::FILE* log) {
  const std::string exe = o.exe.empty() ? self_exe() : o.exe;
  const fs::path out = o.out;
  fs::create_directories(out / "seeds");
  fs::create_directories(out / "coverage");
  // shard.json first: a shard killed before it finishes can still be named by the merge.
  RunInfo info{o.shard, o.list_jobs ? o.list_jobs : o.jobs.size(), o.jobs.size(), exe, unix_now(), 0};
  for (const char* stale : {"summary.json", "results.jsonl", "junit.xml", "index.html"}) fs::remove(out / stale);
  util::write_file(out / "shard.json", run_info_json(info));
  std::ofstream progress_file(out / "progress.txt", std::ios::trunc);
  RegressOutcome res;
  res.results.resize(o.jobs.size());
  std::vector<Task> tasks;
  const InputCache inputs = o.isolate_seeds ? InputCache{} : preload_inputs(o.jobs);
  (void)isa::builtin_isa();  // parsed once here, inherited by every forked child
  for (size_t i = 0; i < o.jobs.size(); ++i) {
    const Job& j = o.jobs[i];
    const std::string name = j.name();
    SeedResult& r = res.results[i];
    r.job = j;
    r.prefix = (out / "seeds" / name).string();
    r.repro = repro_command(exe, j, abs_path((out / "repro" / name).string()));
    fs::remove(r.prefix + ".result.json");
    const std::string cov = (out / "coverage" / (name + ".json")).string();
    std::vector<std::string> argv = worker_argv(exe, j, r.prefix, cov);
    if (o.plant_kill) argv.insert(argv.end(), {"--plant-kill", std::to_string(o.plant_kill)});
    Task t{std::move(argv), r.prefix + ".log", r.prefix + ".log", {}};
    if (!o.isolate_seeds) {
      WorkerOptions w{j, r.prefix, exe, cov, true, o.keep, o.plant_kill, nullptr};
      if (auto it = inputs.find({j.profile, j.npu}); it != inputs.end()) w.preloaded = &it->second;
      t.in_child = [w] { return run_worker(w); };
    }
    tasks.push_back(std::move(t));
  }
  const unsigned workers = std::max(1u, o.workers);
  Progress progress(log, tasks.size(), workers);
  Totals running;
  const auto t0 = Clock::now();
  run_pool(tasks, workers, o.timeout_s,
           [&](size_t i, const ProcResult& p) {
             SeedResult& r = res.results[i];
             r.seconds = p.seconds;
             read_result(r, p, tasks[i].out_path);
             (r.status == Status::Pass ? running.pass : r.status == Status::Fail ? running.fail : running.error)++;
             progress_file << r.job.id() << ' ' << to_string(r.status) << std::endl;  // read by --slurm
             if (r.status == Status::Pass && !o.keep) {
               for (const char* ext : {".s", ".bin", ".hex", ".memmap.yaml", ".ddr.bin", ".log", ".sim.log", ".result.json"}) {
                 fs::remove(r.prefix + ext);
               }
             }
           },
           [&] { progress.update(running, false); });
  res.totals = count(res.results);
  res.totals.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  res.totals.workers = workers;
  progress.update(res.totals, true);
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
      shrink_failure(r, o, exe, log);
    } catch (const std::exception& e) {
      if (log) fmt::print(log, "shrink {}: {}\n", r.job.id(), e.what());
    }
  }
  write_outcome(o.out, res);
  info.finished = unix_now();
  util::write_file(out / "shard.json", run_info_json(info));
  return res;
}

}  // namespace npuforge::regress
