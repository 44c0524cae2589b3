// Fault injection for the regression runner: a worker killed (SIGKILL) or hung
// past --timeout, a full output disk, a runner killed mid-run (its directory then holds an
// interrupted run) and a journal line cut short. Each test shows that no other seed's result
// is lost and that the summary says what happened to each seed; --resume finishes the run
// without redoing finished seeds. Runs the npuforge binary, with short programs (--length).
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <thread>

#include <fmt/core.h>
#include <gtest/gtest.h>

#include "regress/journal.h"
#include "regress/proc.h"
#include "regress/results.h"
#include "util/file_io.h"

namespace npuforge::regress {
namespace {

namespace fs = std::filesystem;

#ifdef NPUFORGE_BIN
const std::string kProfile = std::string(NPUFORGE_SOURCE_DIR) + "/configs/gen/default.yaml";

fs::path scratch(const std::string& what) {
  const fs::path p = fs::temp_directory_path() / ("npuforge_faults_" + what + "_" + std::to_string(::getpid()));
  fs::remove_all(p);
  return p;
}

std::vector<std::string> regress_argv(const fs::path& out, const std::vector<std::string>& extra) {
  // A resume's notes (seeds already done, a torn line dropped) go to the progress log: no -q.
  const bool resume = !extra.empty() && extra[0] == "--resume";
  std::vector<std::string> a{NPUFORGE_BIN, "regress", "--out", out.string()};
  if (!resume) a.push_back("-q");
  a.insert(a.end(), extra.begin(), extra.end());
  return a;
}

std::vector<std::string> profile_args(const std::string& seeds, std::vector<std::string> more = {}) {
  std::vector<std::string> a{"--profile", kProfile, "--seeds", seeds, "--length", "100"};
  a.insert(a.end(), more.begin(), more.end());
  return a;
}

// Starts a process with stdout and stderr into `log`; `fsize` > 0 sets its `ulimit -f` (bytes).
pid_t start(const std::vector<std::string>& argv, const fs::path& log, rlim_t fsize = 0) {
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    std::FILE* f = std::freopen(log.c_str(), "w", stdout);
    if (f) ::dup2(::fileno(stdout), 2);
    if (fsize > 0) {
      const rlimit lim{fsize, fsize};
      ::setrlimit(RLIMIT_FSIZE, &lim);
    }
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  return pid;
}

int wait_exit(pid_t pid) {
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
}

struct Outcome {
  int code;
  std::string log;
};
Outcome run(const fs::path& out, const std::vector<std::string>& extra, rlim_t fsize = 0) {
  const fs::path log = out.string() + ".log";
  const int code = wait_exit(start(regress_argv(out, extra), log, fsize));
  return {code, util::read_file(log)};
}

std::vector<SeedResult> results_of(const fs::path& out) {
  return parse_results(util::read_file(out / "results.jsonl"), (out / "results.jsonl").string());
}

std::vector<std::string> lines_of(const fs::path& p) {
  std::vector<std::string> v;
  std::ifstream in(p);
  for (std::string l; std::getline(in, l);) v.push_back(l);
  return v;
}

// Every seed of `seeds` has exactly one result; `bad` (if any) is an error of `kind` with its
// repro line in the results, summary.json and the printed summary; all others pass.
void expect_each_seed(const fs::path& out, const Outcome& r, std::set<uint64_t> seeds, uint64_t bad, const std::string& kind) {
  const auto rs = results_of(out);
  ASSERT_EQ(rs.size(), seeds.size()) << r.log;
  for (const auto& s : rs) {
    EXPECT_EQ(seeds.erase(s.job.seed), 1u) << "seed " << s.job.seed << " twice or unexpected";
    if (s.job.seed == bad) {
      EXPECT_EQ(s.status, Status::Error) << s.finding;
      EXPECT_EQ(tag(s.kind), kind) << s.finding;
      EXPECT_NE(s.repro.find(fmt::format("--seeds {} ", bad)), std::string::npos) << s.repro;
    } else {
      EXPECT_EQ(s.status, Status::Pass) << s.job.id() << ": " << s.finding;
      EXPECT_GT(s.cycles, 0u) << s.job.id();
    }
  }
  if (bad == 0) return;
  const std::string summary = util::read_file(out / "summary.json");
  EXPECT_NE(summary.find(fmt::format("\"seed\": {}, \"status\": \"error\", \"kind\": \"{}\"", bad, kind)),
            std::string::npos) << summary;
  EXPECT_NE(r.log.find(fmt::format("error default:{} [{}]", bad, kind)), std::string::npos) << r.log;
  EXPECT_NE(r.log.find("reproduce: "), std::string::npos) << r.log;
}

void cleanup(const fs::path& out) {
  fs::remove_all(out);
  fs::remove(out.string() + ".log");
}

// The direct children of `pid` (from /proc/*/stat).
std::vector<pid_t> children_of(pid_t pid) {
  std::vector<pid_t> kids;
  for (const auto& e : fs::directory_iterator("/proc")) {
    const std::string name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(e.path() / "stat");
    std::string stat;
    std::getline(in, stat);
    const size_t close = stat.rfind(')');
    if (close == std::string::npos) continue;
    char state = 0;
    int ppid = 0;
    if (std::sscanf(stat.c_str() + close + 1, " %c %d", &state, &ppid) == 2 && ppid == pid) kids.push_back(std::stoi(name));
  }
  return kids;
}

// Gone, or a zombie waiting for whoever inherited it.
bool dead(pid_t pid) {
  std::ifstream in(fmt::format("/proc/{}/stat", pid));
  std::string stat;
  if (!std::getline(in, stat)) return true;
  const size_t close = stat.rfind(')');
  return close != std::string::npos && close + 2 < stat.size() && stat[close + 2] == 'Z';
}

bool wait_until(const std::function<bool()>& cond, double seconds) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (!cond()) {
    if (std::chrono::steady_clock::now() > end) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return true;
}

// Seed 3's worker SIGKILLs itself: [runner/killed] with its repro line, the others pass.
TEST(Faults, KilledWorkerLosesNoOtherSeed) {
  for (const bool isolate : {false, true}) {
    const fs::path out = scratch(isolate ? "kill_iso" : "kill");
    std::vector<std::string> args = profile_args("1-5", {"-j", "2", "--plant-kill", "3"});
    if (isolate) args.push_back("--isolate-seeds");
    const Outcome r = run(out, args);
    EXPECT_EQ(r.code, 1) << r.log;
    expect_each_seed(out, r, {1, 2, 3, 4, 5}, 3, "runner/killed");
    EXPECT_NE(results_of(out)[2].finding.find("signal 9"), std::string::npos);
    cleanup(out);
  }
}

// Seed 2's worker hangs: --timeout kills it, [runner/timeout], the others pass, on both paths.
TEST(Faults, HungWorkerIsKilledByTheTimeoutAndLosesNoOtherSeed) {
  for (const bool isolate : {false, true}) {
    const fs::path out = scratch(isolate ? "hang_iso" : "hang");
    std::vector<std::string> args = profile_args("1-4", {"-j", "2", "--plant-hang", "2", "--timeout", "8"});
    if (isolate) args.push_back("--isolate-seeds");
    const Outcome r = run(out, args);
    EXPECT_EQ(r.code, 1) << r.log;
    expect_each_seed(out, r, {1, 2, 3, 4}, 2, "runner/timeout");
    EXPECT_NE(results_of(out)[1].finding.find("timed out"), std::string::npos);
    cleanup(out);
  }
}

// The journal on a full disk (/dev/full): the runner stops at once, names the file and every
// seed without a saved result, reports no success; --resume then runs them all.
TEST(Faults, FullDiskForTheJournalStopsNamingTheLostSeeds) {
  const fs::path out = scratch("full_journal");
  fs::create_directories(out);
  fs::create_symlink("/dev/full", out / "journal.jsonl");
  const Outcome r = run(out, profile_args("1-4", {"-j", "1"}));
  EXPECT_EQ(r.code, 1) << r.log;
  EXPECT_NE(r.log.find((out / "journal.jsonl").string() + ": cannot write the result of default:1"), std::string::npos) << r.log;
  EXPECT_NE(r.log.find("No space left on device"), std::string::npos) << r.log;
  EXPECT_NE(r.log.find("4 of 4 seeds have no saved result: default:1, default:2, default:3, default:4"), std::string::npos) << r.log;
  EXPECT_NE(r.log.find("--resume " + out.string()), std::string::npos) << r.log;
  EXPECT_EQ(r.log.find("reports:"), std::string::npos) << r.log;  // no success claimed
  EXPECT_FALSE(fs::exists(out / "summary.json"));
  EXPECT_FALSE(fs::exists(out / "results.jsonl"));
  fs::remove(out / "journal.jsonl");  // space again
  const Outcome resumed = run(out, {"--resume", out.string(), "-j", "2"});
  EXPECT_EQ(resumed.code, 0) << resumed.log;
  EXPECT_NE(resumed.log.find("0 of 4 seeds already done, running 4"), std::string::npos) << resumed.log;
  expect_each_seed(out, resumed, {1, 2, 3, 4}, 0, "");
  cleanup(out);
}

// The largest file under `dir` whose name is not among `skip`.
uintmax_t largest(const fs::path& dir, const std::set<std::string>& skip) {
  uintmax_t m = 0;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (e.is_regular_file() && !skip.count(e.path().filename().string())) m = std::max(m, e.file_size());
  }
  return m;
}

// `ulimit -f` lets the journal and the per-seed files through but not the reports: the error
// names the report and says every result is in the journal; --resume writes the reports
// without running a seed.
TEST(Faults, FullDiskForTheReportsLosesNoResult) {
  const fs::path sizing = scratch("full_report0"), out = scratch("full_reports");  // same length: same sizes
  const std::set<std::string> reports{"index.html", "coverage.json", "junit.xml", "summary.json", "results.jsonl"};
  ASSERT_EQ(run(sizing, profile_args("1-4", {"-j", "2"})).code, 0);
  const uintmax_t limit = largest(sizing, reports) + 512;
  uintmax_t biggest_report = 0;
  for (const auto& r : reports) biggest_report = std::max(biggest_report, fs::file_size(sizing / r));
  ASSERT_GT(biggest_report, limit) << "no report larger than the journal and per-seed files: the test proves nothing";
  cleanup(sizing);
  const Outcome r = run(out, profile_args("1-4", {"-j", "2"}), limit);
  EXPECT_EQ(r.code, 1) << r.log;
  EXPECT_NE(r.log.find("cannot write file"), std::string::npos) << r.log;
  EXPECT_NE(r.log.find("File too large"), std::string::npos) << r.log;
  EXPECT_NE(r.log.find("no seed's result is lost: all 4 are in " + (out / "journal.jsonl").string()), std::string::npos)
      << r.log;
  EXPECT_NE(r.log.find("--resume " + out.string()), std::string::npos) << r.log;
  EXPECT_EQ(r.log.find("reports:"), std::string::npos) << r.log;
  EXPECT_EQ(lines_of(out / "journal.jsonl").size(), 4u);
  const Outcome resumed = run(out, {"--resume", out.string()});
  EXPECT_EQ(resumed.code, 0) << resumed.log;
  EXPECT_NE(resumed.log.find("4 of 4 seeds already done, running 0"), std::string::npos) << resumed.log;
  expect_each_seed(out, resumed, {1, 2, 3, 4}, 0, "");
  cleanup(out);
}

// A runner killed mid-run: its workers die with it, its lock is gone, its directory is
// refused to a new run without --force, and --resume runs only the unfinished seeds.
TEST(Faults, KilledRunnerLeavesNoOrphansAndResumeFinishesItsRun) {
  const fs::path out = scratch("interrupted");
  const fs::path journal = out / "journal.jsonl";
  const pid_t runner = start(regress_argv(out, profile_args("1-6", {"-j", "1", "--plant-hang", "4"})), out.string() + ".log");
  ASSERT_TRUE(wait_until([&] { return lines_of(journal).size() >= 3; }, 120)) << util::read_file(out.string() + ".log");
  ASSERT_TRUE(wait_until([&] { return !children_of(runner).empty(); }, 30));  // seed 4's worker, hung
  // A second runner in the same directory is refused while the first holds it.
  const Outcome second = run(out, {"--resume", out.string()});
  EXPECT_EQ(second.code, 1);
  EXPECT_NE(second.log.find(fmt::format("another `npuforge regress` (pid {}) is running", runner)), std::string::npos)
      << second.log;
  const std::vector<pid_t> workers = children_of(runner);
  ASSERT_FALSE(workers.empty());
  ::kill(runner, SIGKILL);
  EXPECT_EQ(wait_exit(runner), -SIGKILL);
  for (const pid_t w : workers) EXPECT_TRUE(wait_until([&] { return dead(w); }, 10)) << "orphan worker " << w;
  const std::vector<std::string> before = lines_of(journal);
  ASSERT_EQ(before.size(), 3u);
  // A new run into the interrupted directory is refused and changes nothing.
  const Outcome fresh = run(out, profile_args("1-6"));
  EXPECT_EQ(fresh.code, 1);
  EXPECT_NE(fresh.log.find("holds an interrupted regression"), std::string::npos) << fresh.log;
  EXPECT_NE(fresh.log.find("--resume " + out.string()), std::string::npos) << fresh.log;
  EXPECT_NE(fresh.log.find("--force"), std::string::npos) << fresh.log;
  EXPECT_EQ(lines_of(journal), before);
  // --resume runs seeds 4-6 only (the hang hook is not part of the run's options).
  const Outcome resumed = run(out, {"--resume", out.string(), "-j", "2"});
  EXPECT_EQ(resumed.code, 0) << resumed.log;
  EXPECT_NE(resumed.log.find("3 of 6 seeds already done, running 3"), std::string::npos) << resumed.log;
  const std::vector<std::string> after = lines_of(journal);
  ASSERT_EQ(after.size(), 6u);
  EXPECT_TRUE(std::equal(before.begin(), before.end(), after.begin()));  // finished seeds not redone
  expect_each_seed(out, resumed, {1, 2, 3, 4, 5, 6}, 0, "");
  // Finished now: a new run may reuse the directory.
  const Outcome again = run(out, profile_args("1-2"));
  EXPECT_EQ(again.code, 0) << again.log;
  cleanup(out);
}

// A kill mid-write leaves a last journal line without its newline: --resume drops it, reruns
// that seed alone and keeps every whole line.
TEST(Faults, ResumeDropsATornJournalLineAndRerunsItsSeed) {
  const fs::path out = scratch("torn");
  const Outcome first = run(out, profile_args("1-4", {"-j", "2"}));
  ASSERT_EQ(first.code, 0) << first.log;
  const fs::path journal = out / "journal.jsonl";
  std::vector<std::string> lines = lines_of(journal);
  ASSERT_EQ(lines.size(), 4u);
  const SeedResult torn = parse_results(lines.back(), "line")[0];
  std::string text;
  for (size_t i = 0; i + 1 < lines.size(); ++i) text += lines[i] + "\n";
  util::write_file(journal, text + lines.back().substr(0, lines.back().size() / 2));
  // As a kill before the end leaves it: shard.json not finished.
  RunInfo info = parse_run_info(util::read_file(out / "shard.json"), "shard.json");
  info.finished = 0;
  util::write_file(out / "shard.json", run_info_json(info));
  const Outcome resumed = run(out, {"--resume", out.string()});
  EXPECT_EQ(resumed.code, 0) << resumed.log;
  EXPECT_NE(resumed.log.find("ends in a line cut short"), std::string::npos) << resumed.log;
  EXPECT_NE(resumed.log.find("3 of 4 seeds already done, running 1"), std::string::npos) << resumed.log;
  const std::vector<std::string> after = lines_of(journal);
  ASSERT_EQ(after.size(), 4u);
  EXPECT_TRUE(std::equal(lines.begin(), lines.end() - 1, after.begin()));
  EXPECT_EQ(parse_results(after.back(), "line")[0].job.seed, torn.job.seed);
  expect_each_seed(out, resumed, {1, 2, 3, 4}, 0, "");
  // A malformed whole line is not guessed at: an error naming the file and line.
  util::write_file(journal, lines[0] + "\n{\"index\": oops\n");
  util::write_file(out / "shard.json", run_info_json(info));
  const Outcome bad = run(out, {"--resume", out.string()});
  EXPECT_EQ(bad.code, 1);
  EXPECT_NE(bad.log.find(journal.string() + ":2"), std::string::npos) << bad.log;
  cleanup(out);
}
#endif

}  // namespace
}  // namespace npuforge::regress
