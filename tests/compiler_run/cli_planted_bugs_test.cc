// Planted compiler bugs (compile --plant-bug, compiler/plant.h), one test each: the compiled
// small_convnet then fails on the simulated NPU with a finding that names the tile the bug
// broke. (Overlapping arena offsets, the fourth, is an outside plan: cli_run_model_test.)
#include <gtest/gtest.h>

#include <filesystem>
#include <regex>
#include <sstream>

#include "run_util.h"

namespace npuforge::run_testing {
namespace {

namespace fs = std::filesystem;

// Compiles with the bug, runs, and returns the run's output after checking that a line of
// `finding` (e.g. "[shadow/after-last-use]") names the buffer the planted line names.
void expect_caught(const std::string& bug, const std::string& finding) {
  ScratchDir dir("plant_" + bug);
  const CliRun c = compile(dir, "out", "--plant-bug " + bug);
  ASSERT_EQ(c.code, 0) << c.out;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(c.out, m, std::regex("PLANTED BUG \\(testing hook\\): .*?%([^ )]+)"))) << c.out;
  const std::string tile = m[1];
  const CliRun r = run_cli("run-model " + dir.path("out") + " --input " + input(dir) + " --max-errors 200");
  EXPECT_EQ(r.code, 1) << r.out;
  bool named = false;
  std::stringstream lines(r.out);
  for (std::string line; std::getline(lines, line);)
    if (line.find(finding) != std::string::npos && line.find("%" + tile) != std::string::npos) named = true;
  EXPECT_TRUE(named) << "expected " << finding << " naming %" << tile << "\n" << c.out << r.out;
}

TEST(PlantedBug, TileBufferFreedOneInstructionEarly) { expect_caught("early-free", "[shadow/after-last-use]"); }

TEST(PlantedBug, Im2colScratchOneRowTooSmall) { expect_caught("im2col-short", "[shadow/outside-buffer]"); }

TEST(PlantedBug, DroppedTokenBetweenLoadAndGemm) { expect_caught("drop-token", "[hazard/hazard]"); }

// run-model simulates its NPU segments in its own process; a failing one prints the
// `npuforge sim` command that runs it alone, and that command, on the files written for it,
// fails with the same findings. A passing run writes no files unless asked (--keep, --work-dir).
TEST(PlantedBug, AFailingSegmentIsReproducedByItsPrintedCommand) {
  ScratchDir dir("plant_repro");
  ASSERT_EQ(compile(dir, "bad", "--plant-bug drop-token").code, 0);
  const CliRun r = run_cli("run-model " + dir.path("bad") + " --input " + input(dir));
  EXPECT_EQ(r.code, 1) << r.out;
  const size_t at = r.out.find("  reproduce: ");
  ASSERT_NE(at, std::string::npos) << r.out;
  const std::string repro = r.out.substr(at + 13, r.out.find('\n', at) - at - 13);
  const size_t files_at = r.out.find("segment files: ");
  ASSERT_NE(files_at, std::string::npos) << r.out;
  const std::string files = r.out.substr(files_at + 15, r.out.find('\n', files_at) - files_at - 15);
  std::smatch seg;
  ASSERT_TRUE(std::regex_search(r.out, seg, std::regex("seg([0-9]+) \\(npu\\) failed"))) << r.out;
  const std::string k = "seg" + seg[1].str();
  for (const char* ext : {".in.ddr.bin", ".out.ddr.bin", ".json", ".log"})
    EXPECT_TRUE(fs::exists(fs::path(files) / (k + ext))) << k << ext;
  // The report run-model printed for the segment is the one the command prints.
  const std::string report = cli_testing::read_text((fs::path(files) / (k + ".log")).string());
  EXPECT_NE(r.out.find(report), std::string::npos) << report;
  const size_t space = repro.find(' ');  // the command starts with this npuforge binary
  ASSERT_TRUE(fs::equivalent(repro.substr(0, space), NPUFORGE_CLI)) << repro;
  const CliRun again = run_cli(repro.substr(space + 1));
  EXPECT_EQ(again.code, 1) << again.out;
  EXPECT_NE(again.out.find(report), std::string::npos) << again.out;  // (after SystemC's banner, when it prints one)
  fs::remove_all(files);
  // A passing run writes nothing; --work-dir keeps every NPU segment's files.
  ASSERT_EQ(compile(dir, "good").code, 0);
  const CliRun ok = run_cli("run-model " + dir.path("good") + " --input " + input(dir) + " --work-dir " + dir.path("w"));
  EXPECT_EQ(ok.code, 0) << ok.out;
  EXPECT_EQ(ok.out.find("segment files: "), std::string::npos) << ok.out;
  EXPECT_TRUE(fs::exists(dir.dir / "w" / "seg0.in.ddr.bin")) << ok.out;
  EXPECT_TRUE(fs::exists(dir.dir / "w" / "seg0.json")) << ok.out;
  const CliRun plain = run_cli("run-model " + dir.path("good") + " --input " + input(dir));
  EXPECT_EQ(plain.code, 0) << plain.out;
  EXPECT_EQ(plain.out.find("segment files: "), std::string::npos) << plain.out;
}

TEST(PlantedBug, UnknownBugIsAClearError) {
  ScratchDir dir("plant_unknown");
  const CliRun c = compile(dir, "out", "--plant-bug nonsense");
  EXPECT_EQ(c.code, 1);
  EXPECT_NE(c.out.find("expected early-free, im2col-short or drop-token"), std::string::npos) << c.out;
}

}  // namespace
}  // namespace npuforge::run_testing
