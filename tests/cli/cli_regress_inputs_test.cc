// A regression's directory and inputs as a new user meets them: a second run into a finished
// results directory replaces the first (cover and merge count only its own seeds; no empty
// .lock is left), and a bad profile, NPU config or list entry is one error naming the file,
// line and key before any seed runs, not one error per seed.
#include <gtest/gtest.h>

#include <regex>

#include "tests/cli/cli_util.h"

namespace npuforge::cli_testing {
namespace {

const std::string kSource = NPUFORGE_SOURCE_DIR;
const std::string kProfile = kSource + "/configs/gen/default.yaml";

std::string regress(const std::string& out, const std::string& seeds) {
  return "regress -q -j 2 --profile " + kProfile + " --length 100 --seeds " + seeds + " --out " + out;
}

// "coverage over N seeds" of `cover`'s report.
int covered_seeds(const std::string& report) {
  std::smatch m;
  if (!std::regex_search(report, m, std::regex("coverage over ([0-9]+) seeds"))) return -1;
  return std::stoi(m[1]);
}

size_t files_in(const fs::path& dir) {
  size_t n = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir)) ++n;
  return n;
}

TEST(RegressRerun, ASecondRunReplacesTheFirstAndCoverCountsOnlyItsSeeds) {
  const ScratchDir d("rerun");
  const std::string out = d.path("R");
  ASSERT_EQ(run_cli(regress(out, "1-6")).code, 0);
  EXPECT_EQ(covered_seeds(run_cli("cover " + out).out), 6);
  const CliRun second = run_cli(regress(out, "1-2"));
  ASSERT_EQ(second.code, 0) << second.out;
  const CliRun cover = run_cli("cover " + out);
  EXPECT_EQ(cover.code, 0) << cover.out;
  EXPECT_EQ(covered_seeds(cover.out), 2) << cover.out;
  EXPECT_NE(read_text(out + "/summary.json").find("\"seeds\": 2"), std::string::npos) << read_text(out + "/summary.json");
  EXPECT_EQ(files_in(fs::path(out) / "coverage"), 2u) << "the first run's per-seed coverage files are gone";
  EXPECT_FALSE(fs::exists(fs::path(out) / ".lock")) << "a finished run leaves no .lock";
}

TEST(RegressRerun, CoverOfAMergedDirectoryCountsItsShards) {
  const ScratchDir d("rerun_merge");
  for (const char* k : {"1", "2"}) {
    const std::string shard = d.path(std::string("shard-") + k);
    ASSERT_EQ(run_cli(regress(shard, "1-4") + " --shard " + k + "/2").code, 0);
  }
  // The merged directory held an earlier single run of more seeds: none of them may count.
  ASSERT_EQ(run_cli(regress(d.path("merged"), "1-7")).code, 0);
  const CliRun m = run_cli("merge " + d.path("shard-1") + " " + d.path("shard-2") + " --out " + d.path("merged"));
  ASSERT_EQ(m.code, 0) << m.out;
  EXPECT_EQ(covered_seeds(run_cli("cover " + d.path("merged")).out), 4);
}

TEST(RegressInputs, ABadProfileIsOneErrorNamingFileLineAndKeyBeforeAnySeedRuns) {
  const ScratchDir d("bad_profile");
  std::string profile = read_text(kProfile);
  profile.replace(profile.find("token_density"), 13, "token_densty");
  const std::string bad = d.write("bad.yaml", profile);
  ASSERT_EQ(run_cli(regress(d.path("R"), "1-1")).code, 0) << "the good profile runs";
  const CliRun b = run_cli("regress -q -j 2 --profile " + bad + " --seeds 1-200 --out " + d.path("B"));
  EXPECT_EQ(b.code, 1) << b.out;
  EXPECT_EQ(count_of(b.out, "token_densty"), 1u) << "one message, not one per seed: " << b.out;
  EXPECT_NE(b.out.find(bad + ":"), std::string::npos) << b.out;
  EXPECT_NE(b.out.find("unknown key 'token_densty'"), std::string::npos) << b.out;
  EXPECT_NE(b.out.find("did you mean 'token_density'?"), std::string::npos) << b.out;
  EXPECT_FALSE(fs::exists(d.path("B") + "/results.jsonl")) << "no seed ran";
}

TEST(RegressInputs, ABadListEntryNamesTheListLineAndTheProfileError) {
  const ScratchDir d("bad_list");
  std::string profile = read_text(kProfile);
  profile.replace(profile.find("lifetime: [1, 200]"), 18, "lifetime: [1, -5]");
  const std::string bad = d.write("bad.yaml", profile);
  const std::string list = d.write("list.yaml", "runs:\n  - {name: good, profile: " + kProfile +
                                                    ", seeds: 1-3}\n  - {name: bad, profile: " + bad + ", seeds: 1-100}\n");
  const CliRun r = run_cli("regress -q " + list + " --out " + d.path("R"));
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find(list + ":3: runs[1]: its profile does not load: " + bad + ":"), std::string::npos) << r.out;
  EXPECT_EQ(count_of(r.out, bad + ":"), 1u) << "one message: " << r.out;
  EXPECT_FALSE(fs::exists(d.path("R") + "/results.jsonl")) << "no seed ran";
}

TEST(RegressInputs, AnRtlPlantInATlmListEntryIsRefusedBeforeRunning) {
  const ScratchDir d("rtl_plant");
  const std::string list =
      d.write("list.yaml", "runs:\n  - {name: p, profile: " + kProfile + ", seeds: 1-50, plant: rtl-decoder-field-bit}\n");
  const CliRun r = run_cli("regress -q " + list + " --out " + d.path("R"));
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find(list + ":2: runs[0]: plant rtl-decoder-field-bit lives in RTL"), std::string::npos) << r.out;
  EXPECT_EQ(count_of(r.out, "lives in RTL"), 1u) << r.out;
}

}  // namespace
}  // namespace npuforge::cli_testing
