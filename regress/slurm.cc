#include "regress/slurm.h"

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <thread>

#include <fmt/core.h>

#include "regress/merge.h"
#include "regress/proc.h"
#include "regress/report.h"
#include "util/error.h"
#include "util/file_io.h"
#include "util/text.h"

namespace npuforge::regress {
namespace fs = std::filesystem;
namespace {

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  size_t pos = 0;
  while (pos <= s.size()) {
    size_t end = s.find(sep, pos);
    if (end == std::string_view::npos) end = s.size();
    if (end > pos) out.push_back(s.substr(pos, end - pos));
    pos = end + 1;
  }
  return out;
}

std::string shard_dir(const SlurmOptions& o, unsigned k) { return (fs::path(o.out) / fmt::format("shard-{}", k)).string(); }

// A program on PATH, or a clear error (Slurm's clients are not installed here).
std::string find_program(const std::string& name) {
  const char* path = std::getenv("PATH");
  for (auto dir : split(path ? path : "/usr/bin:/bin", ':')) {
    const fs::path p = fs::path(dir) / name;
    if (::access(p.c_str(), X_OK) == 0) return p.string();
  }
  throw Error(fmt::format("--slurm: '{}' is not on PATH (install Slurm's client, Debian package slurm-client)", name));
}

struct Captured {
  ProcResult proc;
  std::string out, err;
};

// Runs a Slurm client; its output goes through files in DIR/slurm (no pipes to drain).
Captured capture(const SlurmOptions& o, std::vector<std::string> argv, double timeout_s) {
  const fs::path dir = fs::path(o.out) / "slurm";
  const std::string out = (dir / "client.out").string(), err = (dir / "client.err").string();
  argv[0] = find_program(argv[0]);
  Captured c;
  c.proc = run_process(argv, out, err, timeout_s);
  c.out = util::read_file(out);
  c.err = util::read_file(err);
  return c;
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string trim(std::string s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.erase(s.begin());
  return s;
}

std::string submit(const SlurmOptions& o) {
  const Captured c = capture(o, {"sbatch", "--parsable", script_path(o)}, 120);
  if (c.proc.exit_code != 0) {
    throw Error(fmt::format("sbatch {} failed (exit {}): {}", script_path(o), c.proc.exit_code, trim(c.err + c.out)));
  }
  std::string id = trim(c.out);
  id = id.substr(0, id.find(';'));  // "123;cluster" on multi-cluster setups
  if (id.empty() || id.find_first_not_of("0123456789") != std::string::npos) {
    throw Error(fmt::format("sbatch printed '{}', expected a job id", trim(c.out)));
  }
  return id;
}

// Seeds finished per status over all shards (their progress.txt files).
struct SeedProgress {
  uint64_t done = 0, pass = 0, fail = 0, error = 0;
};
SeedProgress seed_progress(const SlurmOptions& o) {
  SeedProgress p;
  for (unsigned k = 1; k <= o.shards; ++k) {
    const fs::path f = fs::path(shard_dir(o, k)) / "progress.txt";
    if (!fs::exists(f)) continue;
    const std::string text = util::read_file(f);  // split() returns views into it
    for (auto line : split(text, '\n')) {
      ++p.done;
      if (line.ends_with(" pass")) ++p.pass;
      else if (line.ends_with(" fail")) ++p.fail;
      else ++p.error;
    }
  }
  return p;
}

// "2 running, 5 pending (Resources), 1 completed"
std::string state_counts(const std::vector<TaskState>& tasks) {
  std::map<std::string, std::pair<unsigned, std::string>> by;
  for (const auto& t : tasks) {
    auto& e = by[t.state];
    ++e.first;
    if (t.state == "PENDING" && e.second.empty() && t.reason != "None") e.second = t.reason;
  }
  std::string s;
  for (const auto& [state, e] : by) {
    s += fmt::format("{}{} {}{}", s.empty() ? "" : ", ", e.first, lower(state), e.second.empty() ? "" : " (" + e.second + ")");
  }
  return s.empty() ? "no task listed" : s;
}

void print_progress(std::FILE* log, bool tty, const std::string& line, bool final) {
  if (!log) return;
  if (tty) {
    fmt::print(log, "\r{:<110}{}", line, final ? "\n" : "");
  } else {
    fmt::print(log, "{}\n", line);
  }
  std::fflush(log);
}

}  // namespace

std::string script_path(const SlurmOptions& o) { return (fs::path(o.out) / "slurm" / "regress.sbatch").string(); }

std::string merge_command(const SlurmOptions& o) {
  return fmt::format("{} merge {}/shard-* --out {} --shards {}", util::shell_quote(o.exe), util::shell_quote(o.out),
                     util::shell_quote(o.out), o.shards);
}

std::string sbatch_script(const SlurmOptions& o) {
  std::string s = "#!/bin/bash\n";
  s += "# npuforge regress on Slurm: one array task per shard; task K runs shard K of " + std::to_string(o.shards) + ".\n";
  s += "# Written by `npuforge regress --slurm`, which submits it, follows it and merges the shards:\n";
  s += "#   sbatch " + util::shell_quote(script_path(o)) + "\n";
  s += "#   " + merge_command(o) + "\n";
  s += "#SBATCH --job-name=npuforge-regress\n";
  s += fmt::format("#SBATCH --array=1-{}\n", o.shards);
  s += fmt::format("#SBATCH --cpus-per-task={}\n", o.cpus_per_task);
  s += "#SBATCH --output=" + (fs::path(o.out) / "slurm" / "shard-%a.log").string() + "\n";
  s += "#SBATCH --chdir=" + o.workdir + "\n";
  if (!o.partition.empty()) s += "#SBATCH --partition=" + o.partition + "\n";
  for (const auto& a : o.sbatch_args) s += "#SBATCH " + a + "\n";
  std::vector<std::string> argv{o.exe, "regress"};
  argv.insert(argv.end(), o.shard_args.begin(), o.shard_args.end());
  argv.insert(argv.end(), {"-j", std::to_string(o.cpus_per_task), "-q"});
  s += "set -u\n";
  s += "k=$SLURM_ARRAY_TASK_ID\n";
  s += fmt::format("exec {} --shard \"$k/{}\" --out {}/shard-\"$k\"\n", util::shell_join(argv), o.shards,
                   util::shell_quote(o.out));
  return s;
}

std::vector<unsigned> parse_task_ranges(std::string_view spec) {
  spec = spec.substr(0, spec.find('%'));
  if (!spec.empty() && spec.front() == '[') spec.remove_prefix(1);
  if (!spec.empty() && spec.back() == ']') spec.remove_suffix(1);
  std::vector<unsigned> out;
  for (auto part : split(spec, ',')) {
    const size_t dash = part.find('-');
    try {
      const unsigned lo = static_cast<unsigned>(std::stoul(std::string(part.substr(0, dash))));
      const unsigned hi = dash == std::string_view::npos ? lo : static_cast<unsigned>(std::stoul(std::string(part.substr(dash + 1))));
      for (unsigned t = lo; t <= hi && hi - lo < 1'000'000; ++t) out.push_back(t);
    } catch (const std::exception&) {
      throw Error(fmt::format("Slurm array task range '{}' is not N, N-M or a list of them", spec));
    }
  }
  return out;
}

std::vector<TaskState> parse_squeue(std::string_view text) {
  std::vector<TaskState> out;
  for (auto line : split(text, '\n')) {
    const auto words = split(line, ' ');
    if (words.size() < 2 || words[0] == "N/A") continue;
    for (unsigned t : parse_task_ranges(words[0])) {
      TaskState s;
      s.task = t;
      s.state = std::string(words[1]);
      if (words.size() > 2) s.reason = std::string(line.substr(words[2].data() - line.data()));
      out.push_back(s);
    }
  }
  return out;
}

std::vector<TaskState> parse_scontrol(std::string_view text) {
  std::vector<TaskState> out;
  for (auto line : split(text, '\n')) {
    std::map<std::string, std::string> kv;
    for (auto word : split(line, ' ')) {
      const size_t eq = word.find('=');
      if (eq != std::string_view::npos) kv.emplace(std::string(word.substr(0, eq)), std::string(word.substr(eq + 1)));
    }
    if (!kv.count("ArrayTaskId") || !kv.count("JobState")) continue;
    TaskState s;
    s.state = kv["JobState"];
    s.reason = kv.count("Reason") ? kv["Reason"] : "";
    if (kv.count("ExitCode")) {
      const std::string& e = kv["ExitCode"];
      const size_t colon = e.find(':');
      try {
        s.exit_code = std::stoi(e.substr(0, colon));
        if (colon != std::string::npos) s.signal = std::stoi(e.substr(colon + 1));
      } catch (const std::exception&) {
        s.exit_code = -1;
      }
    }
    for (unsigned t : parse_task_ranges(kv["ArrayTaskId"])) {
      s.task = t;
      out.push_back(s);
    }
  }
  return out;
}

bool is_terminal(std::string_view state) {
  for (std::string_view s : {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "PREEMPTED", "OUT_OF_MEMORY",
                             "BOOT_FAIL", "DEADLINE", "REVOKED", "SPECIAL_EXIT"}) {
    if (state.starts_with(s)) return true;  // "CANCELLED by 0"
  }
  return false;
}

int run_on_slurm(const SlurmOptions& o, std::FILE* log) {
  fs::create_directories(fs::path(o.out) / "slurm");
  util::write_file(script_path(o), sbatch_script(o));
  fs::permissions(script_path(o), fs::perms::owner_exec, fs::perm_options::add);
  const std::string job = submit(o);
  if (log) {
    fmt::print(log, "submitted Slurm job {} ({} array tasks, script {}); if this command is stopped, merge later with:\n  {}\n",
               job, o.shards, script_path(o), merge_command(o));
  }
  const bool tty = log && ::isatty(::fileno(log));
  const auto t0 = Clock::now();
  auto last_ok = t0;
  auto last_print = t0 - std::chrono::hours(1);
  std::string last_line;
  std::vector<TaskState> tasks;
  std::map<unsigned, TaskState> last_seen;
  bool seen = false;  // the job was listed at least once
  for (;;) {
    const Captured q = capture(o, {"squeue", "-h", "-r", "-t", "all", "-j", job, "-o", "%K %T %r"}, 60);
    const double elapsed = std::chrono::duration<double>(Clock::now() - t0).count();
    if (q.proc.exit_code != 0) {
      // After the job is purged (MinJobAge), squeue says "Invalid job id": it has ended.
      if (q.err.find("Invalid job id") != std::string::npos) break;
      if (std::chrono::duration<double>(Clock::now() - last_ok).count() > o.unreachable_s) {
        throw Error(fmt::format("squeue has failed for {:.0f} s ({}); job {} may still run: merge later with {}",
                                o.unreachable_s, trim(q.err), job, merge_command(o)));
      }
    } else {
      last_ok = Clock::now();
      tasks = parse_squeue(q.out);
      for (const auto& t : tasks) last_seen[t.task] = t;  // tasks vanish MinJobAge after they end
      const SeedProgress p = seed_progress(o);
      const std::string line = fmt::format("slurm job {}: {} | seeds done {}: pass {} fail {} error {} | {:.0f} s", job,
                                           state_counts(tasks), p.done, p.pass, p.fail, p.error, elapsed);
      // In a log (no tty): a line when the tasks' states change, else one per 30 s of progress.
      const auto part = [](const std::string& l, bool seeds) { return l.substr(0, seeds ? l.rfind('|') : l.find('|')); };
      const double since = std::chrono::duration<double>(Clock::now() - last_print).count();
      const bool states_changed = part(line, false) != part(last_line, false);
      const bool seeds_changed = part(line, true) != part(last_line, true);
      if (tty || states_changed || (seeds_changed && since >= 30)) {
        print_progress(log, tty, line, false);
        last_print = Clock::now();
      }
      last_line = line;
      bool all_done = !tasks.empty();
      for (const auto& t : tasks) all_done = all_done && is_terminal(t.state);
      seen = seen || !tasks.empty();
      if ((tasks.empty() && (seen || elapsed > 30)) || all_done) break;
    }
    std::this_thread::sleep_for(std::chrono::duration<double>(o.poll_s));
  }
  print_progress(log, tty, last_line, true);
  // Final states with exit codes; squeue's view when scontrol no longer knows the job.
  const Captured sc = capture(o, {"scontrol", "-o", "show", "job", job}, 60);
  std::map<unsigned, TaskState> by_task = last_seen;
  if (sc.proc.exit_code == 0) {
    for (const auto& t : parse_scontrol(sc.out)) by_task[t.task] = t;
  }
  unsigned bad_tasks = 0;
  for (unsigned k = 1; k <= o.shards; ++k) {
    const auto it = by_task.find(k);
    const bool finished = fs::exists(fs::path(shard_dir(o, k)) / "results.jsonl");
    // A shard with failing seeds exits 1 (state FAILED) after writing its results: not a task
    // failure. squeue gives no exit code, so a FAILED task counts as such only with results.
    if (it != by_task.end() && (it->second.state == "COMPLETED" ||
                                (finished && it->second.state == "FAILED" && it->second.exit_code <= 1))) {
      continue;
    }
    ++bad_tasks;
    if (!log) continue;
    if (it == by_task.end()) {
      fmt::print(log, "slurm task {}_{} (shard {}): gone from the controller (cancelled before it started, or purged)\n", job, k, k);
    } else {
      const TaskState& t = it->second;
      // Not terminal: it left the controller's list while pending or running (cancelled).
      fmt::print(log, "slurm task {}_{} (shard {}): {}{}{}{}, log {}\n", job, k, k,
                 is_terminal(t.state) ? "" : "gone from the controller while ", t.state,
                 t.exit_code >= 0 ? fmt::format(", exit code {}:{}", t.exit_code, t.signal) : "",
                 t.reason.empty() || t.reason == "None" ? "" : ", reason " + t.reason,
                 (fs::path(o.out) / "slurm" / fmt::format("shard-{}.log", k)).string());
    }
  }
  if (log && bad_tasks) fmt::print(log, "{} of {} Slurm tasks did not complete\n", bad_tasks, o.shards);
  MergeOptions m;
  for (unsigned k = 1; k <= o.shards; ++k) {
    if (fs::exists(shard_dir(o, k))) m.inputs.push_back(shard_dir(o, k));
  }
  m.out = o.out;
  m.expect_shards = o.shards;
  const MergeOutcome res = merge_shards(m);
  const RegressReport& rep = res.report;
  if (log) {
    fmt::print(log, "{}", summary_table(rep.results, rep.totals));
    fmt::print(log, "{}", rep.coverage.report(false));
    for (const auto& r : rep.results) {
      if (r.status != Status::Pass) fmt::print(log, "{} {} {}\n  reproduce: {}\n", to_string(r.status), r.job.id(), r.finding, r.repro);
    }
    for (const auto& p : rep.problems) fmt::print(log, "merge: {}\n", p);
    fmt::print(log, "reports: {0}/junit.xml {0}/summary.json {0}/coverage.json {0}/failures.txt {0}/index.html\n", o.out);
  }
  return rep.problems.empty() && bad_tasks == 0 && rep.totals.fail + rep.totals.error == 0 ? 0 : 1;
}

}  // namespace npuforge::regress
