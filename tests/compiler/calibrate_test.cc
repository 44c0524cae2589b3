// Calibration: sample inputs (files or seeded), ranges, and the clip statistics.
#include "compiler/calibrate.h"

#include <gtest/gtest.h>

#include <filesystem>

#include <fmt/format.h>

#include "compiler/front.h"
#include "model/npy.h"
#include "test_util.h"

namespace npuforge::compiler {
namespace {

using testing::conv_3x3_graph;
using testing::yaml_graph;

const char* kGraph = R"(
inputs: [{name: x, shape: [1, 8]}]
outputs: [{name: y}]
nodes:
  - {op: Relu, inputs: [x], outputs: [y]}
)";

TEST(Calibrate, RangesAreTheSamplesMinAndMax) {
  const model::Graph g = yaml_graph(kGraph);
  CalibrationOptions o;
  o.random_samples = 3;
  o.seed = 9;
  o.random_lo = -2;
  o.random_hi = 3;
  o.method = ClipMethod::kAbsMax;
  const Calibration cal = calibrate(g, o);
  EXPECT_EQ(cal.samples, 3);
  EXPECT_NE(cal.source.find("seeded random"), std::string::npos) << cal.source;
  float lo = 1e9f, hi = -1e9f;
  for (const model::TensorMap& m : calibration_inputs(g, o))
    for (float v : m.at("x").values<float>()) {
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
  EXPECT_GE(lo, -2.0f);
  EXPECT_LT(hi, 3.0f);
  EXPECT_EQ(cal.ranges.at("x").min, lo);
  EXPECT_EQ(cal.ranges.at("x").max, hi);
  EXPECT_EQ(cal.ranges.at("x").clip, std::max(-lo, hi));
  EXPECT_EQ(cal.ranges.at("y").min, 0.0f);
  EXPECT_EQ(cal.ranges.at("y").max, hi);
}

TEST(Calibrate, ClipStatistics) {
  std::vector<uint64_t> uniform(100, 1);
  EXPECT_EQ(choose_clip(uniform, 10, 0, ClipMethod::kAbsMax, 99), 10.0f);
  EXPECT_FLOAT_EQ(choose_clip(uniform, 10, 0, ClipMethod::kPercentile, 50), 5.0f);
  // Uniform data: clipping only adds error, the best clip is at (or next to) the top.
  EXPECT_GE(choose_clip(uniform, 10, 0, ClipMethod::kMse, 0), 9.5f);
  // Very many small values and one far outlier: the outlier is cheaper to saturate than the
  // rounding error a wide scale gives everything else (2e7 * (c/127)^2 / 12 vs (100 - c)^2).
  std::vector<uint64_t> outlier(2048, 0);
  for (size_t b = 0; b < 20; ++b) outlier[b] = 1000000;
  outlier.back() = 1;
  const float clip = choose_clip(outlier, 100, 0, ClipMethod::kMse, 0);
  EXPECT_LT(clip, 5.0f);
  EXPECT_GE(clip, 0.9f);  // and the bulk (up to 20/2048 * 100 = 0.98) is not clipped much
  EXPECT_EQ(choose_clip({}, 0, 5, ClipMethod::kMse, 0), 0.0f);
}

TEST(Calibrate, FilesAndTheirErrors) {
  const model::Graph g = yaml_graph(kGraph);
  const auto dir = std::filesystem::temp_directory_path() / "npuforge_calibrate_test";
  std::filesystem::create_directories(dir);
  model::write_npy(dir / "a.npy", testing::random_tensor({1, 8}, 1));
  model::write_npy(dir / "b.npy", testing::random_tensor({1, 8}, 2, 5, 6));
  model::write_npy(dir / "bad.npy", testing::random_tensor({1, 9}, 3));
  CalibrationOptions o;
  o.files = {dir / "a.npy", dir / "b.npy"};
  const Calibration cal = calibrate(g, o);
  EXPECT_EQ(cal.samples, 2);
  EXPECT_NE(cal.source.find("a.npy b.npy"), std::string::npos) << cal.source;
  EXPECT_GE(cal.ranges.at("y").max, 5.0f);
  o.files = {dir / "bad.npy"};
  try {
    calibrate(g, o);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("bad.npy"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("1x9"), std::string::npos) << e.what();
  }
  std::filesystem::remove_all(dir);
}

TEST(Calibrate, TwoInputModelsTakeFilesInPairs) {
  const model::Graph g = yaml_graph(R"(
inputs: [{name: x, shape: [2]}, {name: z, shape: [2]}]
outputs: [{name: y}]
nodes:
  - {op: Add, inputs: [x, z], outputs: [y]}
)");
  CalibrationOptions o;
  o.files = {"one.npy", "two.npy", "three.npy"};
  EXPECT_THROW(calibration_inputs(g, o), Error);
  o.files.clear();
  o.random_samples = 0;
  EXPECT_THROW(calibration_inputs(g, o), Error);
}

}  // namespace
}  // namespace npuforge::compiler

namespace npuforge::compiler {
namespace {

// FrontOptions::candidates: every setting is scored on the calibration samples and the best
// one is kept, wherever it is in the list. A percentile-5 clip saturates almost every value, so
// it must lose to MSE clips, first or last.
TEST(Calibrate, CandidatesKeepTheBestOutputScore) {
  std::string w;
  for (int i = 0; i < 4 * 8 * 9; ++i) w += fmt::format("{}{}", w.empty() ? "" : ", ", ((i * 37) % 19 - 9) / 10.0);
  const model::Graph g = conv_3x3_graph(w);
  const QuantCandidate bad{{ClipMethod::kPercentile, 5.0}, 0}, good{{ClipMethod::kMse, 99.99}, 0};
  for (const auto& list : {std::vector{bad, good}, std::vector{good, bad}}) {
    FrontOptions o;
    o.candidates = list;
    const CompileFront f = compile_front(g, o);
    ASSERT_EQ(f.report.candidate_scores.size(), 2u);
    EXPECT_EQ(f.report.method, ClipMethod::kMse);
    const OutputScore& b = f.report.candidate_scores[list[0].clip.method == ClipMethod::kMse ? 1 : 0].second;
    const OutputScore& m = f.report.candidate_scores[list[0].clip.method == ClipMethod::kMse ? 0 : 1].second;
    EXPECT_GT(m.min_cosine, 0.99);
    EXPECT_LT(b.min_cosine, m.min_cosine);
    EXPECT_EQ(m.per_sample.size(), 4u);  // the default seeded random calibration
    // The kept graph is the one scored: its outputs on the calibration samples score the same.
    const std::vector<model::TensorMap> samples = calibration_inputs(f.float_graph, o.calibration);
    EXPECT_DOUBLE_EQ(score_outputs(f.graph, samples, float_outputs(f.float_graph, samples)).min_cosine, m.min_cosine);
  }
}

}  // namespace
}  // namespace npuforge::compiler
