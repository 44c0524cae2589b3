// The catalogue of planted bugs (util/plant.h), `npuforge plants`, and `npuforge kill-rate`:
// every plant is caught by a short regression, a subset run prints its table, bad names are
// clear errors listing the valid ones.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <set>
#include <string>

#include "regress/kill_rate.h"
#include "regress/proc.h"
#include "regress/report.h"
#include "util/error.h"
#include "util/file_io.h"
#include "util/plant.h"

namespace npuforge::regress {
namespace {
namespace fs = std::filesystem;

TEST(Plants, CatalogueHasUniqueNamesAndEnoughClasses) {
  std::set<std::string_view> names;
  size_t non_rtl = 0;
  for (const PlantInfo& p : plant_catalogue()) {
    EXPECT_TRUE(names.insert(p.name).second) << p.name;
    EXPECT_FALSE(p.breaks.empty()) << p.name;
    EXPECT_NE(p.finds.find('/'), std::string_view::npos) << p.name << ": finds a checker/kind";
    EXPECT_EQ(parse_plant(p.name), Plant{p.id});
    EXPECT_EQ(plant_name(Plant{p.id}), p.name);
    EXPECT_EQ(plant_needs_rtl(Plant{p.id}), p.layer == PlantLayer::Rtl);
    non_rtl += p.layer != PlantLayer::Rtl;
  }
  EXPECT_GE(non_rtl, 16u);
  EXPECT_FALSE(parse_plant("").any());
  EXPECT_FALSE(parse_plant("none").any());
}

TEST(Plants, UnknownNameListsTheValidOnes) {
  try {
    parse_plant("alloc-split-off-by-two");
    FAIL() << "no throw";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("unknown plant 'alloc-split-off-by-two'"), std::string::npos) << m;
    for (const PlantInfo& p : plant_catalogue()) EXPECT_NE(m.find(p.name), std::string::npos) << p.name;
  }
}

TEST(KillRate, RunsForPlantPicksTlmOrRtlRuns) {
  Job tlm, rtl;
  tlm.run = "default";
  rtl.run = "default-rtl";
  rtl.rtl = true;
  const auto a = runs_for_plant({tlm, rtl}, parse_plant("gen-drop-token"));
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].run, "default");
  EXPECT_EQ(a[0].plant, "gen-drop-token");
  const auto b = runs_for_plant({tlm, rtl}, parse_plant("rtl-decoder-field-bit"));
  ASSERT_EQ(b.size(), 1u);
  EXPECT_TRUE(b[0].rtl);
  const auto c = runs_for_plant({tlm}, parse_plant("rtl-scratchpad-stuck-bit"));  // no RTL run: TLM ones with --rtl
  ASSERT_EQ(c.size(), 1u);
  EXPECT_TRUE(c[0].rtl);
  EXPECT_EQ(c[0].run, "default-rtl");
}

TEST(KillRate, KindsAndMedian) {
  // How a seed caught the plant comes from its kind, never from the words of its finding.
  auto column = [](Status status, SeedKind kind) {
    PlantOutcome o;
    o.how = catch_of(status, kind);
    o.kind = kind;
    return kind_column(o);
  };
  EXPECT_EQ(column(Status::Fail, finding_kind(sim::FindingKind::Hazard)), "hazard/hazard");
  EXPECT_EQ(column(Status::Fail, SeedKind{Cause::Allocator}), "allocator/invariant");
  EXPECT_EQ(column(Status::Fail, SeedKind{Cause::NoFinding}), "fail");
  EXPECT_EQ(column(Status::Error, SeedKind{Cause::Timeout}), "timeout");
  EXPECT_EQ(column(Status::Error, SeedKind{Cause::WorkerKilled}), "crash");
  EXPECT_EQ(column(Status::Error, SeedKind{Cause::SimulatorCrash}), "crash");
  EXPECT_EQ(column(Status::Error, SeedKind{Cause::WorkerExited}), "error");
  EXPECT_EQ(column(Status::Error, SeedKind{Cause::Generate}), "gen-error");
  EXPECT_EQ(column(Status::Error, SeedKind{Cause::Simulator}), "error");
  EXPECT_EQ(catch_of(Status::Pass, SeedKind{}), Catch::None);
  std::vector<PlantOutcome> o(4);
  o[0].killed = o[1].killed = o[2].killed = true;
  o[0].seeds_to_catch = 1, o[1].seeds_to_catch = 5, o[2].seeds_to_catch = 2;
  EXPECT_EQ(median_seeds_to_catch(o), 2);
  o[3].killed = true, o[3].seeds_to_catch = 9;
  EXPECT_EQ(median_seeds_to_catch(o), 3.5);
}

#ifdef NPUFORGE_BIN
std::string slurp(const fs::path& p) { return fs::exists(p) ? util::read_file(p) : std::string(); }

struct Cli {
  fs::path dir = fs::temp_directory_path() / ("npuforge_plants_" + std::to_string(::getpid()) + "_" +
                                              ::testing::UnitTest::GetInstance()->current_test_info()->name());
  std::string out;
  Cli() { fs::create_directories(dir); }
  ~Cli() { fs::remove_all(dir); }
  int run(std::vector<std::string> args, double timeout = 600) {
    args.insert(args.begin(), NPUFORGE_BIN);
    const fs::path log = dir / "log";
    const ProcResult r = run_process(args, log.string(), log.string(), timeout);
    out = slurp(log);
    return r.exit_code;
  }
};

TEST(PlantsCli, ListsOneLinePerPlant) {
  Cli c;
  ASSERT_EQ(c.run({"plants"}), 0) << c.out;
  size_t lines = 0;
  for (char ch : c.out) lines += ch == '\n';
  EXPECT_EQ(lines, plant_catalogue().size()) << c.out;
  for (const PlantInfo& p : plant_catalogue()) {
    EXPECT_NE(c.out.find(std::string(p.name) + " "), std::string::npos) << p.name;
    EXPECT_NE(c.out.find(p.breaks), std::string::npos) << p.name;
  }
}

TEST(PlantsCli, BadPlantNameIsAClearError) {
  Cli c;
  const std::string profile = std::string(NPUFORGE_SOURCE_DIR) + "/configs/gen/default.yaml";
  EXPECT_EQ(c.run({"regress", "--profile", profile, "--seeds", "1", "--plant", "nope", "--out", (c.dir / "r").string()}), 1);
  EXPECT_NE(c.out.find("unknown plant 'nope'"), std::string::npos) << c.out;
  EXPECT_NE(c.out.find("gen-drop-token"), std::string::npos) << c.out;
  EXPECT_EQ(c.run({"kill-rate", "--plants", "nope", "--seeds", "1"}), 1);
  EXPECT_NE(c.out.find("unknown plant 'nope'"), std::string::npos) << c.out;
  EXPECT_EQ(c.run({"gen", "--profile", profile, "--seed", "1", "--plant", "nope", "-o", (c.dir / "g").string()}), 1);
  EXPECT_NE(c.out.find("valid:"), std::string::npos) << c.out;
  // An RTL plant without --rtl says so.
  EXPECT_EQ(c.run({"regress", "--profile", profile, "--seeds", "1", "--plant", "rtl-decoder-field-bit", "--out",
                   (c.dir / "r").string()}),
            1);
  EXPECT_NE(c.out.find("--rtl"), std::string::npos) << c.out;
  // In a regression list: the file, line and entry are named.
  const fs::path list = c.dir / "list.yaml";
  util::write_file(list, "runs:\n  - {profile: " + profile + ", seeds: 1, plant: nope}\n");
  EXPECT_EQ(c.run({"regress", list.string(), "--out", (c.dir / "r").string()}), 1);
  EXPECT_NE(c.out.find("list.yaml:2: runs[0]: --plant: unknown plant 'nope'"), std::string::npos) << c.out;
}

// gen --plant and sim --plant: the allocator check in `gen --check`, a model plant in `sim`.
TEST(PlantsCli, GenAndSimTakeAPlant) {
  Cli c;
  const std::string profile = std::string(NPUFORGE_SOURCE_DIR) + "/configs/gen/default.yaml";
  const std::string prefix = (c.dir / "p").string();
  EXPECT_EQ(c.run({"gen", "--profile", profile, "--seed", "1", "--length", "300", "--plant", "alloc-leak-node",
                   "--check", "-o", prefix}),
            1);
  EXPECT_NE(c.out.find("check: allocator: node pool"), std::string::npos) << c.out;
  ASSERT_EQ(c.run({"gen", "--profile", profile, "--seed", "1", "--length", "300", "--check", "-o", prefix}), 0) << c.out;
  const std::vector<std::string> sim = {"sim", prefix + ".bin", "--memmap", prefix + ".memmap.yaml", "--ddr",
                                        prefix + ".ddr.bin"};
  EXPECT_EQ(c.run(sim), 0) << c.out;
  auto planted = sim;
  planted.insert(planted.end(), {"--plant", "model-store-short"});
  EXPECT_EQ(c.run(planted), 1) << c.out;
  EXPECT_NE(c.out.find("FAIL"), std::string::npos) << c.out;
  planted.back() = "rtl-decoder-field-bit";
  EXPECT_EQ(c.run(planted), 1) << c.out;
  EXPECT_NE(c.out.find("lives in RTL: simulate with --rtl"), std::string::npos) << c.out;
}

// kill-rate on a two-plant subset: one row per plant, both killed, exit 0.
TEST(KillRateCli, TwoPlantSubset) {
  Cli c;
  const std::string list = std::string(NPUFORGE_SOURCE_DIR) + "/configs/regress/nightly.yaml";
  ASSERT_EQ(c.run({"kill-rate", list, "--plants", "alloc-no-merge-next,model-store-short", "--seeds", "1-5",
                   "--length", "300", "--profiles", "default", "-j", "2", "-q", "--out", (c.dir / "k").string()}),
            0)
      << c.out;
  EXPECT_NE(c.out.find("alloc-no-merge-next"), std::string::npos) << c.out;
  EXPECT_NE(c.out.find("model-store-short"), std::string::npos) << c.out;
  EXPECT_NE(c.out.find("killed 2/2 plants (100%)"), std::string::npos) << c.out;
  EXPECT_EQ(c.out.find(" NO "), std::string::npos) << c.out;
}

// Every plant is caught by a short regression (few seeds, short programs), with the finding
// kind the catalogue expects of it (PlantInfo::finds).
class EveryPlant : public ::testing::TestWithParam<std::string> {};

TEST_P(EveryPlant, IsKilledByAShortRun) {
  Cli c;
  const std::string list = std::string(NPUFORGE_SOURCE_DIR) + "/configs/regress/nightly.yaml";
  const bool rtl = plant_needs_rtl(parse_plant(GetParam()));
  EXPECT_EQ(c.run({"kill-rate", list, "--plants", GetParam(), "--seeds", "1-4", "--length", "300", "--profiles",
                   rtl ? "default-rtl" : "default,stress-fragment", "-q", "--out", (c.dir / "k").string()}),
            0)
      << c.out;
  EXPECT_NE(c.out.find("killed 1/1"), std::string::npos) << c.out;
  const std::string_view finds = plant_info(parse_plant(GetParam()).id).finds;
  EXPECT_NE(c.out.find(std::string(finds) + " "), std::string::npos) << "expected " << finds << ":\n" << c.out;
}

std::vector<std::string> all_plants() {
  std::vector<std::string> v;
  for (const PlantInfo& p : plant_catalogue()) v.emplace_back(p.name);
  return v;
}

INSTANTIATE_TEST_SUITE_P(Catalogue, EveryPlant, ::testing::ValuesIn(all_plants()),
                         [](const auto& info) {
                           std::string n = info.param;
                           for (char& ch : n)
                             if (ch == '-') ch = '_';
                           return n;
                         });
#endif

}  // namespace
}  // namespace npuforge::regress
