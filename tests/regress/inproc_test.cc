// The in-process regression path against the file-based one (--isolate-seeds): the same
// seeds give the same results, findings and coverage; kept files are byte-identical to
// `npuforge gen`'s; and a worker killed with SIGKILL mid-run costs only its own seed.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <fmt/core.h>
#include <gtest/gtest.h>

#include "regress/proc.h"
#include "regress/results.h"
#include "regress/worker_pool.h"
#include "util/file_io.h"

namespace npuforge::regress {
namespace {

namespace fs = std::filesystem;

#ifdef NPUFORGE_BIN
const std::string kProfile = std::string(NPUFORGE_SOURCE_DIR) + "/configs/gen/default.yaml";

fs::path scratch(const std::string& what) {
  const fs::path p = fs::temp_directory_path() / ("npuforge_inproc_" + what + "_" + std::to_string(::getpid()));
  fs::remove_all(p);
  return p;
}

// Runs `npuforge regress` into `out`; returns its exit code (the log is kept beside `out`).
int regress(const fs::path& out, std::vector<std::string> extra) {
  std::vector<std::string> argv{NPUFORGE_BIN, "regress", "--profile", kProfile, "-j", "2", "-q", "--out", out.string()};
  argv.insert(argv.end(), extra.begin(), extra.end());
  const std::string log = out.string() + ".log";
  return run_process(argv, log, log, 600).exit_code;
}

std::vector<SeedResult> results_of(const fs::path& out) {
  return parse_results(util::read_file(out / "results.jsonl"), (out / "results.jsonl").string());
}

// Everything a seed's result says except timings and where its files are.
std::string verdict(const SeedResult& r) {
  return fmt::format("{} {} status={} kind={} findings={} instr={} buffers={} peak={} sram={} cycles={} finding={}",
                     r.job.run, r.job.seed, to_string(r.status), tag(r.kind), r.findings, r.instructions, r.buffers,
                     r.peak_sram, r.sram_bytes, r.cycles, r.finding);
}

void expect_same_results(const fs::path& a, const fs::path& b) {
  const auto ra = results_of(a), rb = results_of(b);
  ASSERT_EQ(ra.size(), rb.size());
  for (size_t i = 0; i < ra.size(); ++i) EXPECT_EQ(verdict(ra[i]), verdict(rb[i]));
  EXPECT_EQ(util::read_file(a / "coverage.json"), util::read_file(b / "coverage.json"));
  for (const auto& r : ra) {  // per-seed coverage too
    const std::string name = r.job.name() + ".json";
    EXPECT_EQ(util::read_file(a / "coverage" / name), util::read_file(b / "coverage" / name)) << name;
  }
}

TEST(InProcess, SameResultsAsTheFileBasedPathOnTwentySeeds) {
  const fs::path in = scratch("in"), files = scratch("files");
  EXPECT_EQ(regress(in, {"--seeds", "1-20", "--keep"}), 0);
  EXPECT_EQ(regress(files, {"--seeds", "1-20", "--isolate-seeds"}), 0);
  expect_same_results(in, files);
  ASSERT_EQ(results_of(in).size(), 20u);
  // --keep wrote the five files, byte-identical to `npuforge gen`'s for the same seed.
  const fs::path gen = scratch("gen");
  fs::create_directories(gen);
  for (const char* seed : {"3", "17"}) {
    const std::string log = gen.string() + ".log";
    ASSERT_EQ(run_process({NPUFORGE_BIN, "gen", "--profile", kProfile, "--seed", seed, "-o", (gen / "g").string()},
                          log, log).exit_code, 0);
    for (const char* ext : {".s", ".bin", ".hex", ".memmap.yaml", ".ddr.bin"}) {
      EXPECT_EQ(util::read_file(in / "seeds" / (std::string("default-") + seed + ext)),
                util::read_file(gen / (std::string("g") + ext)))
          << seed << ext;
    }
  }
  for (const auto& p : {in, files, gen}) {
    fs::remove_all(p);
    fs::remove(p.string() + ".log");
  }
}

TEST(InProcess, PlantedBugFailsWithTheSameFindingsAndKeepsOnlyFailingFiles) {
  const fs::path in = scratch("bug_in"), files = scratch("bug_files");
  EXPECT_EQ(regress(in, {"--seeds", "1-8", "--length", "300", "--plant", "gen-overlap-live"}), 1);
  EXPECT_EQ(regress(files, {"--seeds", "1-8", "--length", "300", "--plant", "gen-overlap-live", "--isolate-seeds"}), 1);
  expect_same_results(in, files);
  size_t failed = 0;
  for (const auto& r : results_of(in)) {
    // A failing seed has its files (for the repro and the shrinker); a passing one none.
    EXPECT_EQ(fs::exists(r.prefix + ".memmap.yaml"), r.status == Status::Fail) << r.job.id();
    EXPECT_EQ(fs::exists(r.prefix + ".bin"), r.status == Status::Fail) << r.job.id();
    failed += r.status == Status::Fail;
    if (r.status != Status::Fail) continue;
    // Its simulator report and verdict are those `npuforge sim` wrote on the file path, byte for byte.
    for (const char* ext : {".sim.log", ".sim.json"}) {
      const fs::path twin = files / "seeds" / (r.job.name() + ext);
      ASSERT_TRUE(fs::exists(r.prefix + ext) && fs::exists(twin)) << r.job.id() << ext;
      EXPECT_EQ(util::read_file(r.prefix + ext), util::read_file(twin)) << r.job.id() << ext;
    }
  }
  EXPECT_GT(failed, 0u);
  for (const auto& p : {in, files}) {
    fs::remove_all(p);
    fs::remove(p.string() + ".log");
  }
}

// The worker of seed 3 SIGKILLs itself after generating: that seed is an error with its
// repro line, every other seed still has its result, on both paths.
TEST(InProcess, AWorkerKilledMidRunLosesNoOtherSeed) {
  for (const bool isolate : {false, true}) {
    const fs::path out = scratch(isolate ? "kill_files" : "kill_in");
    std::vector<std::string> args{"--seeds", "1-8", "--length", "200", "--plant-kill", "3"};
    if (isolate) args.push_back("--isolate-seeds");
    EXPECT_EQ(regress(out, args), 1);
    const auto rs = results_of(out);
    ASSERT_EQ(rs.size(), 8u);
    for (const auto& r : rs) {
      if (r.job.seed == 3) {
        EXPECT_EQ(r.status, Status::Error);
        EXPECT_NE(r.finding.find("signal 9"), std::string::npos) << r.finding;
        EXPECT_NE(r.repro.find("--seeds 3 "), std::string::npos) << r.repro;
      } else {
        EXPECT_EQ(r.status, Status::Pass) << verdict(r);
        EXPECT_GT(r.cycles, 0u);
        EXPECT_TRUE(fs::exists(out / "coverage" / (r.job.name() + ".json")));
      }
    }
    const std::string failures = util::read_file(out / "failures.txt");
    EXPECT_NE(failures.find("--seeds 3 "), std::string::npos) << failures;
    fs::remove_all(out);
    fs::remove(out.string() + ".log");
  }
}

// One persistent worker (-j 1) runs seeds 1-12; it dies (SIGKILL) on seed 5, in the middle of
// its session: seed 5 is an error with its repro line, a replacement worker runs 6-12, and
// every other seed's verdict and coverage equal those of an undisturbed run.
TEST(InProcess, AWorkerKilledInTheMiddleOfAMultiSeedSessionIsReplaced) {
  const fs::path killed = scratch("session_kill"), clean = scratch("session_clean");
  const std::vector<std::string> common{NPUFORGE_BIN, "regress", "--profile", kProfile, "--seeds", "1-12",
                                        "--length", "150", "-j", "1"};
  std::vector<std::string> a = common, b = common;
  a.insert(a.end(), {"--out", killed.string(), "--plant-kill", "5"});
  b.insert(b.end(), {"--out", clean.string()});
  const std::string log = killed.string() + ".log", clean_log = clean.string() + ".log";
  EXPECT_EQ(run_process(a, log, log, 600).exit_code, 1);
  EXPECT_EQ(run_process(b, clean_log, clean_log, 600).exit_code, 0);
  // Two workers for twelve seeds: the first ran 1-4 and died on 5, the second ran the rest
  // (twelve, one per seed, where a worker runs one seed: the ASan build).
  const bool one_each = seeds_per_worker() == 1;
  EXPECT_NE(util::read_file(log).find(one_each ? "12 worker processes ran 12 seeds" : "2 worker processes ran 12 seeds"),
            std::string::npos)
      << util::read_file(log);
  EXPECT_NE(util::read_file(clean_log).find(one_each ? "12 worker processes ran 12 seeds" : "1 worker processes ran 12 seeds"),
            std::string::npos);
  const auto rk = results_of(killed), rc = results_of(clean);
  ASSERT_EQ(rk.size(), 12u);
  ASSERT_EQ(rc.size(), 12u);
  for (size_t i = 0; i < rk.size(); ++i) {
    const SeedResult& r = rk[i];
    if (r.job.seed == 5) {
      EXPECT_EQ(r.status, Status::Error);
      EXPECT_EQ(r.kind, SeedKind{Cause::WorkerKilled}) << r.finding;
      EXPECT_NE(r.finding.find("signal 9"), std::string::npos) << r.finding;
      EXPECT_NE(r.repro.find("--seeds 5 "), std::string::npos) << r.repro;
      continue;
    }
    EXPECT_EQ(verdict(r), verdict(rc[i]));
    EXPECT_GT(r.cycles, 0u);
    const std::string cov = r.job.name() + ".json";
    EXPECT_EQ(util::read_file(killed / "coverage" / cov), util::read_file(clean / "coverage" / cov)) << cov;
  }
  for (const auto& p : {killed, clean}) {
    fs::remove_all(p);
    fs::remove(p.string() + ".log");
  }
}
#endif

}  // namespace
}  // namespace npuforge::regress
