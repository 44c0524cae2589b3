// Accuracy of the compiled (quantized) models: for each real model of configs/models/models.txt
// present in the model cache, the int8 reference's outputs against the float model on the
// reference interpreter, on the cached sample inputs (seeded and real ones): cosine similarity
// >= 0.99 and, for classifiers, the same top-1. Calibration never uses the test inputs: the
// model's calibration set when the cache has one (model_list.h: drawn text lines and other
// seeds, for the models with real image samples), else seeded random inputs of the list's range.
//
// The cache is prepared by scripts/prepare-models.sh (CI: scripts/run-tests.sh); without it the
// tests skip, saying so. Models marked heavy in the list run only with NPUFORGE_COMPILER_HEAVY=1
// (they take minutes under ASan). NPUFORGE_ACCURACY_TABLE=FILE appends one markdown row per model:
// | model | kind | NPU ops | CPU steps | segments | min cosine | max |err|/max|float| | top-1 | compile s |
// For measurements: NPUFORGE_CLIP=absmax|percentile|mse picks the clip statistic (auto: the best of
// front.h auto_candidates() by the calibration samples' output cosine, each candidate's score
// printed), NPUFORGE_PERCENTILE=P the percentile,
// NPUFORGE_CALIBRATE_ON_SAMPLES=1 calibrates on the evaluation inputs themselves,
// NPUFORGE_CALIBRATE_FILES=a.npy,b.npy on those files, NPUFORGE_CALIBRATE_RANDOM=1 on seeded random
// inputs even when the model has a calibration set, NPUFORGE_EQUALIZE=0 turns cross-layer
// equalisation off; NPUFORGE_BIAS_CORRECT=0 bias correction off; NPUFORGE_LUT_GROUPS=N the channel groups around LUTs (0: per-tensor scales);
// NPUFORGE_BROADCAST_MUL=1 runs squeeze-and-excite Muls on the NPU; NPUFORGE_DRIFT=1 prints every
// layer's drift.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <fmt/format.h>

#include "compiler/drift.h"
#include "compiler/front.h"
#include "compiler/qref.h"
#include "model/interpreter.h"
#include "model/load.h"
#include "model/npy.h"
#include "model_list.h"

namespace npuforge::compiler {
namespace {

namespace fs = std::filesystem;

using model_list::ModelEntry;

double cosine(const model::Tensor& a, const model::Tensor& b) {
  double ab = 0, aa = 0, bb = 0;
  for (int64_t i = 0; i < a.numel(); ++i) {
    const double x = a.real_at(i), y = b.real_at(i);
    ab += x * y;
    aa += x * x;
    bb += y * y;
  }
  if (aa == 0 && bb == 0) return 1;
  return ab / std::sqrt(aa * bb);
}

int64_t argmax(const model::Tensor& t) {
  int64_t best = 0;
  for (int64_t i = 1; i < t.numel(); ++i)
    if (t.real_at(i) > t.real_at(best)) best = i;
  return best;
}

using model_list::known_misses;

// A classifier's output: [1, classes] with more than one class.
bool is_classifier(const model::Tensor& t) { return t.rank() == 2 && t.shape()[0] == 1 && t.shape()[1] > 1; }

// The per-layer drift, to see where the error enters: the first layers below 0.99.
void print_drift(const CompileFront& front, const model::TensorMap& in) {
  int shown = 0;
  for (const LayerDrift& d : layer_drift(front.graph, front.float_graph, in)) {
    if (d.cosine >= 0.99 && !std::getenv("NPUFORGE_DRIFT")) continue;
    std::cout << fmt::format("  drift op {:3} {:40} cos {:.5f} max|err| {:.4g} scale {:.4g} | alone {:.5f} rounding {:.5f} "
                             "own absmax {:.5f} per channel {:.5f} mean share {:.3f}\n",
                             d.op, d.tensor, d.cosine, d.max_abs, d.scale, d.isolated, d.rounding, d.per_tensor,
                             d.per_channel, d.mean_share);
    if (++shown == 12 && !std::getenv("NPUFORGE_DRIFT")) break;
  }
}

class ModelAccuracy : public testing::TestWithParam<ModelEntry> {};

TEST_P(ModelAccuracy, QuantizedReferenceMatchesFloat) {
  const ModelEntry& m = GetParam();
  const fs::path file = model_list::model_file(m);
  if (!fs::exists(file))
    GTEST_SKIP() << file << " is missing: run scripts/prepare-models.sh (CI: scripts/run-tests.sh) to fetch the models";
  if (m.options.find("unsupported=") != std::string::npos) GTEST_SKIP() << m.name << " is out of scope on purpose";
  if (m.options.find("heavy") != std::string::npos && !std::getenv("NPUFORGE_COMPILER_HEAVY"))
    GTEST_SKIP() << m.name << " is heavy: set NPUFORGE_COMPILER_HEAVY=1 to run it";
  model::InputShapes shapes;
  for (size_t i = 0; i < m.input_names.size(); ++i) shapes[m.input_names[i]] = m.shapes[i];
  const model::Graph original = model::load_model(file, front_load_options(shapes));
  model::LoadOptions plain;
  plain.input_shapes = shapes;
  const model::Graph reference = model::load_model(file, plain);

  FrontOptions opts;
  opts.calibration.random_samples = 4;
  opts.calibration.seed = 1000;
  opts.calibration.random_lo = m.lo;
  opts.calibration.random_hi = m.hi;
  if (const char* clip = std::getenv("NPUFORGE_CLIP")) {
    const std::string c = clip;
    opts.calibration.method = c == "absmax" ? ClipMethod::kAbsMax : c == "percentile" ? ClipMethod::kPercentile : ClipMethod::kMse;
    if (c == "auto") opts.candidates = auto_candidates();
  }
  if (const char* p = std::getenv("NPUFORGE_PERCENTILE")) opts.calibration.percentile = std::atof(p);
  const std::vector<fs::path> sets = model_list::input_sets(m);
  ASSERT_FALSE(sets.empty()) << "no inputs for " << m.name << " in the cache";
  if (const char* eq = std::getenv("NPUFORGE_EQUALIZE")) opts.equalize = std::string(eq) != "0";
  if (const char* bc = std::getenv("NPUFORGE_BIAS_CORRECT")) opts.bias_correction = std::string(bc) != "0";
  if (const char* lg = std::getenv("NPUFORGE_LUT_GROUPS")) opts.lut_channel_groups = std::atoi(lg);
  if (const char* se = std::getenv("NPUFORGE_BROADCAST_MUL")) opts.limits.broadcast_mul = std::string(se) == "1";
  if (!std::getenv("NPUFORGE_CALIBRATE_RANDOM")) opts.calibration.files = model_list::calibration_files(m);
  if (const char* on = std::getenv("NPUFORGE_CALIBRATE_ON_SAMPLES"); on && std::string(on) == "1") {
    opts.calibration.files.clear();
    for (const fs::path& set0 : sets)
      for (const fs::path& f : model_list::set_files(m, set0)) opts.calibration.files.push_back(f);
  }

  if (const char* files = std::getenv("NPUFORGE_CALIBRATE_FILES")) {
    opts.calibration.files.clear();
    std::istringstream list(files);
    for (std::string f; std::getline(list, f, ',');) opts.calibration.files.push_back(f);
  }

  const auto t0 = std::chrono::steady_clock::now();
  const CompileFront front = compile_front(original, opts);
  const double compile_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  for (const auto& [c, score] : front.report.candidate_scores) {
    std::cout << fmt::format("  candidate {}: calibration min cosine {:.5f} mean {:.5f}, per sample:",
                             candidate_name(c), score.min_cosine, score.mean_cosine);
    for (double x : score.per_sample) std::cout << fmt::format(" {:.4f}", x);
    std::cout << "\n";
  }

  double worst = 1, worst_rel = 0;
  int top1_same = 0, top1_total = 0;
  const model::Interpreter interp(reference);
  for (const fs::path& set0 : sets) {
    model::TensorMap in;
    const std::vector<fs::path> files = model_list::set_files(m, set0);
    for (size_t i = 0; i < m.input_names.size(); ++i) in[m.input_names[i]] = model::read_npy(files[i]);
    const model::TensorMap want = interp.run(in);
    const QrefResult got = run_qref(front.graph, in);
    for (const std::string& out : reference.outputs) {
      const model::Tensor& a = got.outputs.at(out);
      const model::Tensor& b = want.at(out);
      ASSERT_EQ(a.shape(), b.shape()) << out;
      const double c = cosine(a, b);
      worst = std::min(worst, c);
      double d = 0, mx = 0;
      for (int64_t i = 0; i < a.numel(); ++i) {
        d = std::max(d, std::fabs(a.real_at(i) - b.real_at(i)));
        mx = std::max(mx, std::fabs(b.real_at(i)));
      }
      worst_rel = std::max(worst_rel, mx > 0 ? d / mx : d);
      std::cout << fmt::format("  {} {} '{}': cosine {:.5f}{}\n", m.name, set0.filename().string(), out, c,
                               is_classifier(b) ? fmt::format(", top-1 {} vs float {}", argmax(a), argmax(b)) : "");
      const auto miss = known_misses().find(m.name);
      const double floor = miss == known_misses().end() ? 0.99 : miss->second.floor;
      EXPECT_GE(c, floor) << m.name << " output '" << out << "' on " << set0.filename();
      if (c < floor || std::getenv("NPUFORGE_DRIFT")) print_drift(front, in);
      if (c < 0.99 && miss != known_misses().end())
        std::cout << "  known miss (floor " << floor << "): " << miss->second.why << "\n";
      if (is_classifier(b)) {
        ++top1_total;
        const bool same = argmax(a) == argmax(b);
        top1_same += same;
        EXPECT_TRUE(same) << m.name << " top-1 differs on " << set0.filename() << ": " << argmax(a) << " vs "
                          << argmax(b);
      }
    }
  }
  const FrontReport& r = front.report;
  const std::string row =
      fmt::format("| {} | {} | {} | {} | {} | {:.5f} | {:.4f} | {} | {:.2f} |", m.name, r.pre_quantized ? "QDQ/QOp" : "float",
                  r.npu_ops, r.cpu_steps, r.segments, worst, worst_rel,
                  top1_total ? fmt::format("{}/{}", top1_same, top1_total) : std::string("-"), compile_s);
  std::cout << "accuracy " << row << "\n";
  if (const char* table = std::getenv("NPUFORGE_ACCURACY_TABLE")) std::ofstream(table, std::ios::app) << row << "\n";
}

INSTANTIATE_TEST_SUITE_P(Cache, ModelAccuracy, testing::ValuesIn(model_list::read_models()),
                         [](const testing::TestParamInfo<ModelEntry>& info) { return info.param.name; });

}  // namespace
}  // namespace npuforge::compiler
