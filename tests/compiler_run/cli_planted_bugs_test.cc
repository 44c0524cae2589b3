// Planted compiler bugs (compile --plant-bug, compiler/plant.h), one test each: the compiled
// small_convnet then fails on the simulated NPU with a finding that names the tile the bug
// broke. (Overlapping arena offsets, the fourth, is an outside plan: cli_run_model_test.)
#include <gtest/gtest.h>

#include <regex>
#include <sstream>

#include "run_util.h"

namespace npuforge::run_testing {
namespace {

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

TEST(PlantedBug, UnknownBugIsAClearError) {
  ScratchDir dir("plant_unknown");
  const CliRun c = compile(dir, "out", "--plant-bug nonsense");
  EXPECT_EQ(c.code, 1);
  EXPECT_NE(c.out.find("expected early-free, im2col-short or drop-token"), std::string::npos) << c.out;
}

}  // namespace
}  // namespace npuforge::run_testing
