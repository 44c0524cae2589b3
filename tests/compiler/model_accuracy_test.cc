// Accuracy of the compiled (quantized) models: for each real model of configs/models/models.txt
// present in the model cache, the int8 reference's outputs against the float model on the
// reference interpreter, on the cached sample inputs (seeded and real ones): cosine similarity
// >= 0.99 and, for classifiers, the same top-1. Calibration uses other seeded random inputs of
// the list's range, so the test inputs are not the calibration inputs.
//
// The cache is prepared by scripts/prepare-models.sh (CI: scripts/run-tests.sh); without it the
// tests skip, saying so. Models marked heavy in the list run only with NPUFORGE_COMPILER_HEAVY=1
// (they take minutes under ASan). NPUFORGE_ACCURACY_TABLE=FILE appends one markdown row per model:
// | model | kind | NPU ops | CPU steps | segments | min cosine | max |err|/max|float| | top-1 | compile s |
// For measurements: NPUFORGE_CLIP=absmax|percentile|mse picks the clip statistic and
// NPUFORGE_CALIBRATE_ON_SAMPLES=1 calibrates on the evaluation inputs themselves.
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
#include "util/text.h"

namespace npuforge::compiler {
namespace {

namespace fs = std::filesystem;

struct ModelEntry {
  std::string name;
  std::vector<std::string> input_names;
  std::vector<model::Shape> shapes;
  float lo = -1, hi = 1;
  std::string options;
};

void PrintTo(const ModelEntry& m, std::ostream* os) { *os << m.name; }

std::vector<ModelEntry> read_models() {
  std::ifstream f(std::string(NPUFORGE_SOURCE_DIR) + "/configs/models/models.txt");
  std::vector<ModelEntry> out;
  std::string line;
  while (std::getline(f, line)) {
    std::istringstream ss(line);
    std::vector<std::string> cols;
    for (std::string c; ss >> c;) cols.push_back(c);
    if (cols.size() != 5 || cols[0][0] == '#') continue;
    ModelEntry m;
    m.name = cols[0];
    m.options = cols[4];
    std::istringstream specs(cols[3]);
    for (std::string spec; std::getline(specs, spec, ',');) {
      std::vector<std::string> p;
      std::istringstream ps(spec);
      for (std::string x; std::getline(ps, x, '|');) p.push_back(x);
      m.input_names.push_back(p.at(0));
      m.shapes.push_back(model::parse_input_shape(p.at(0) + "=" + p.at(2)).second);
      m.lo = std::stof(p.at(3));
      m.hi = std::stof(p.at(4));
    }
    out.push_back(m);
  }
  return out;
}

fs::path cache_dir() {
  if (const char* c = std::getenv("NPUFORGE_MODEL_CACHE")) return c;
  const char* home = std::getenv("HOME");
  return fs::path(home ? home : "/") / ".cache/npuforge/models";
}

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

// Models that miss cosine 0.99 on some input with the default calibration (4 seeded random
// samples), with what was found (per-layer drift, compiler-report-cfront): they must still reach
// the floor, and classifiers the same top-1. A regression below the floor fails.
struct KnownMiss {
  double floor;
  const char* why;
};
const std::map<std::string, KnownMiss>& known_misses() {
  static const std::map<std::string, KnownMiss> m = {
      {"ppocr_cls", {0.90, "PP-LCNet: per-channel activation ranges differ up to ~200x, per-tensor int8 loses the "
                           "small channels; real text images also differ from the random calibration inputs"}},
      {"ppocr_det_v4", {0.70, "same backbone; on random inputs the output is sigmoid(logit ~ -27) ~ 1e-12 and cosine "
                              "of e^logit magnifies logit errors (the logits themselves are within cosine 0.995)"}},
      {"ppocr_rec_v4", {0.40, "same backbone; the real text sample differs from the random calibration inputs "
                              "(0.95 when calibrated on it); seeded inputs reach 0.995"}},
  };
  return m;
}

// A classifier's output: [1, classes] with more than one class.
bool is_classifier(const model::Tensor& t) { return t.rank() == 2 && t.shape()[0] == 1 && t.shape()[1] > 1; }

// The per-layer drift, to see where the error enters: the first layers below 0.99.
void print_drift(const CompileFront& front, const model::TensorMap& in) {
  int shown = 0;
  for (const LayerDrift& d : layer_drift(front.graph, front.float_graph, in)) {
    if (d.cosine >= 0.99 && !std::getenv("NPUFORGE_DRIFT")) continue;
    std::cout << fmt::format("  drift op {:3} {:40} cos {:.5f} max|err| {:.4g} scale {:.4g} | alone {:.5f} rounding {:.5f} "
                             "own absmax {:.5f} per channel {:.5f}\n",
                             d.op, d.tensor, d.cosine, d.max_abs, d.scale, d.isolated, d.rounding, d.per_tensor,
                             d.per_channel);
    if (++shown == 12 && !std::getenv("NPUFORGE_DRIFT")) break;
  }
}

class ModelAccuracy : public testing::TestWithParam<ModelEntry> {};

TEST_P(ModelAccuracy, QuantizedReferenceMatchesFloat) {
  const ModelEntry& m = GetParam();
  const fs::path file = cache_dir() / (m.name + ".onnx");
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
  }
  std::vector<fs::path> sets;
  for (const auto& e : fs::directory_iterator(cache_dir() / "inputs" / m.name)) {
    const std::string f = e.path().filename().string();
    if (f.size() > 8 && f.substr(f.size() - 8) == "_in0.npy") sets.push_back(e.path());
  }
  std::sort(sets.begin(), sets.end());
  ASSERT_FALSE(sets.empty()) << "no inputs for " << m.name << " in the cache";
  if (const char* on = std::getenv("NPUFORGE_CALIBRATE_ON_SAMPLES"); on && std::string(on) == "1")
    for (const fs::path& set0 : sets)
      for (size_t i = 0; i < m.input_names.size(); ++i) {
        std::string f = set0.string();
        f.replace(f.size() - 5, 1, std::to_string(i));
        opts.calibration.files.push_back(f);
      }

  const auto t0 = std::chrono::steady_clock::now();
  const CompileFront front = compile_front(original, opts);
  const double compile_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  double worst = 1, worst_rel = 0;
  int top1_same = 0, top1_total = 0;
  const model::Interpreter interp(reference);
  for (const fs::path& set0 : sets) {
    model::TensorMap in;
    for (size_t i = 0; i < m.input_names.size(); ++i) {
      std::string f = set0.string();
      f.replace(f.size() - 5, 1, std::to_string(i));
      in[m.input_names[i]] = model::read_npy(f);
    }
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

INSTANTIATE_TEST_SUITE_P(Cache, ModelAccuracy, testing::ValuesIn(read_models()),
                         [](const testing::TestParamInfo<ModelEntry>& info) { return info.param.name; });

}  // namespace
}  // namespace npuforge::compiler
