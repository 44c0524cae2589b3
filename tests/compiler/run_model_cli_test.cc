// `npuforge run-model OUT/` judges the compiled model's outputs against the float model (the copy
// `compile` puts in OUT/, or --reference), and --min-cosine turns a low cosine into a failure:
//  - on small_convnet (configs/models), always: the judge line, a wrong judge caught, a missing one said;
//  - on every real model of configs/models/models.txt in the model cache, on the SystemC backend,
//    for every cached input set (seeded and real samples): clean, bit-exact with the int8
//    reference, and at least the model's cosine floor against the float model. Without the cache
//    the tests skip, naming scripts/prepare-models.sh.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <regex>
#include <string>

#include "model_list.h"

#ifdef NPUFORGE_CLI
#include "../cli/cli_util.h"

namespace npuforge::compiler {
namespace {

namespace fs = std::filesystem;
using cli_testing::CliRun;
using cli_testing::run_cli;
using cli_testing::ScratchDir;
using model_list::ModelEntry;

std::string small_convnet() { return std::string(NPUFORGE_SOURCE_DIR) + "/configs/models/small_convnet.yaml"; }

TEST(RunModelJudge, BadRandomRangeIsAClearError) {
  ScratchDir dir("judge_range");
  CliRun r = run_cli("compile " + small_convnet() + " --random-range 1 0 -q -o " + dir.path("out"));
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("--random-range: expected LO HI with LO < HI"), std::string::npos) << r.out;
  r = run_cli("compile " + small_convnet() + " --random-range 1 -q -o " + dir.path("out"));
  EXPECT_NE(r.code, 0) << r.out;
}

// The cosines run-model printed ("  NAME: cosine 0.999, ..."), by output name.
std::map<std::string, double> cosines(const std::string& out) {
  std::map<std::string, double> c;
  const std::regex line(R"(\n  (.+?): cosine ([0-9.]+),)");
  for (auto it = std::sregex_iterator(out.begin(), out.end(), line); it != std::sregex_iterator(); ++it)
    c[(*it)[1]] = std::stod((*it)[2]);
  return c;
}

std::string seeded_input(const ScratchDir& dir) {
  model::Tensor x(model::DType::kFloat32, {1, 3, 32, 32});
  uint64_t s = 12345;
  for (float& v : x.values<float>()) {
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    v = static_cast<float>((s >> 33) % 2001) / 1000.0f - 1.0f;
  }
  const std::string path = dir.path("x.npy");
  model::write_npy(path, x);
  return path;
}

TEST(RunModelJudge, ComparesOutputsWithTheFloatModel) {
  ScratchDir dir("judge_ok");
  const CliRun c = run_cli("compile " + small_convnet() + " --samples 2 -q -o " + dir.path("out"));
  ASSERT_EQ(c.code, 0) << c.out;
  ASSERT_TRUE(fs::exists(dir.dir / "out" / "small_convnet.yaml")) << "compile copies the float model beside the bundle";
  const std::string x = seeded_input(dir);
  const CliRun r = run_cli("run-model " + dir.path("out") + " --input " + x + " --min-cosine 0.99");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("float reference: small_convnet.yaml on npuforge's fp32 interpreter"), std::string::npos)
      << r.out;
  const auto c1 = cosines(r.out);
  ASSERT_EQ(c1.count("probs"), 1u) << r.out;
  EXPECT_GT(c1.at("probs"), 0.99);
  // The int8 model is not the float one to the last bit: a zero difference would mean no comparison.
  std::smatch diff;
  ASSERT_TRUE(std::regex_search(r.out, diff, std::regex(R"(max\|diff\| ([0-9.e+-]+))"))) << r.out;
  EXPECT_GT(std::stod(diff[1]), 0.0) << r.out;
  EXPECT_NE(r.out.find("top-1 "), std::string::npos) << r.out;
}

TEST(RunModelJudge, AWrongFloatModelFailsMinCosine) {
  ScratchDir dir("judge_wrong");
  const CliRun c = run_cli("compile " + small_convnet() + " --samples 2 -q -o " + dir.path("out"));
  ASSERT_EQ(c.code, 0) << c.out;
  // The same graph with other classifier weights: a judge that must disagree.
  std::string yaml = cli_testing::read_text(small_convnet());
  const std::string fc = "random: {seed: 7, low: -0.25, high: 0.25}";
  ASSERT_NE(yaml.find(fc), std::string::npos);
  yaml.replace(yaml.find(fc), fc.size(), "random: {seed: 70, low: -2.5, high: 2.5}");
  const std::string wrong = dir.write("wrong.yaml", yaml);
  const std::string x = seeded_input(dir);
  const CliRun r = run_cli("run-model " + dir.path("out") + " --input " + x + " --reference " + wrong +
                           " --min-cosine 0.99");
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("BELOW --min-cosine 0.99"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("FAIL: an output's cosine is below --min-cosine"), std::string::npos) << r.out;
  // Without --min-cosine the same run reports and passes (the NPU itself is clean and bit-exact).
  EXPECT_EQ(run_cli("run-model " + dir.path("out") + " --input " + x + " --reference " + wrong).code, 0);
}

TEST(RunModelJudge, AMissingFloatModelIsSaid) {
  ScratchDir dir("judge_missing");
  const CliRun c = run_cli("compile " + small_convnet() + " --samples 2 -q -o " + dir.path("out"));
  ASSERT_EQ(c.code, 0) << c.out;
  fs::remove(dir.dir / "out" / "small_convnet.yaml");
  const std::string x = seeded_input(dir);
  CliRun r = run_cli("run-model " + dir.path("out") + " --input " + x);
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("is missing"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("outputs not judged"), std::string::npos) << r.out;
  r = run_cli("run-model " + dir.path("out") + " --input " + x + " --min-cosine 0.5");
  EXPECT_EQ(r.code, 1) << r.out;
  r = run_cli("run-model " + small_convnet() + " --input " + x + " --min-cosine 0.5");
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("are for compiled models"), std::string::npos) << r.out;
}

class RunModelCached : public testing::TestWithParam<ModelEntry> {};

TEST_P(RunModelCached, SystemCRunIsCleanBitExactAndCloseToTheFloatModel) {
  const ModelEntry& m = GetParam();
  const fs::path file = model_list::model_file(m);
  if (!fs::exists(file))
    GTEST_SKIP() << file << " is missing: run scripts/prepare-models.sh (CI: scripts/run-tests.sh) to fetch the models";
  if (m.options.find("unsupported=") != std::string::npos) GTEST_SKIP() << m.name << " is out of scope on purpose";
  const auto sets = model_list::input_sets(m);
  ASSERT_FALSE(sets.empty()) << "no inputs for " << m.name << " in the cache (scripts/make-model-inputs.py)";

  ScratchDir dir("cached_" + m.name);
  std::string compile = "compile " + file.string() + " -q -o " + dir.path("out");
  if (m.has_option("dynamic"))
    for (size_t i = 0; i < m.input_names.size(); ++i)
      compile += " --input-shape " + m.input_names[i] + "=" + m.shape_text[i];
  // Calibrated as model_accuracy_test does: the model's calibration set, else seeded random
  // inputs in the list's range.
  const auto calib = model_list::calibration_files(m);
  if (calib.empty()) compile += " --seed 1000 --random-range " + std::to_string(m.lo) + " " + std::to_string(m.hi);
  if (!calib.empty()) {
    compile += " --calibrate";
    for (const fs::path& f : calib) compile += " " + f.string();
  }
  const CliRun c = run_cli(compile);
  ASSERT_EQ(c.code, 0) << c.out;

  // The floors the int8 reference meets (model_list.h): run-model's outputs equal it bit for bit.
  const auto miss = model_list::known_misses().find(m.name);
  const bool known = miss != model_list::known_misses().end();
  const double floor = known ? miss->second.floor : 0.99;
  for (const fs::path& set0 : sets) {
    std::string run = "run-model " + dir.path("out") + " --backend systemc --min-cosine " + std::to_string(floor);
    for (const fs::path& f : model_list::set_files(m, set0)) run += " --input " + f.string();
    const CliRun r = run_cli(run);
    const auto cos = cosines(r.out);
    std::string shown;
    for (const auto& [name, v] : cos) shown += " " + name + "=" + std::to_string(v);
    std::cout << "  " << m.name << " " << set0.filename().string() << ": cosine" << shown << "\n";
    EXPECT_EQ(r.code, 0) << m.name << " on " << set0.filename() << " (floor " << floor
                         << (known ? std::string(": ") + miss->second.why : "") << "):\n"
                         << r.out;
    EXPECT_NE(r.out.find("PASS: every segment clean and bit-exact"), std::string::npos) << r.out;
    EXPECT_FALSE(cos.empty()) << "no float judgement in:\n" << r.out;
  }
}

INSTANTIATE_TEST_SUITE_P(Cache, RunModelCached, testing::ValuesIn(model_list::read_models()),
                         [](const testing::TestParamInfo<ModelEntry>& info) { return info.param.name; });

}  // namespace
}  // namespace npuforge::compiler

#else
TEST(RunModelJudge, NeedsTheCli) { GTEST_SKIP() << "built without the npuforge CLI target (SystemC missing?)"; }
#endif
