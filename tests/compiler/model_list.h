#pragma once
// The real models of configs/models/models.txt and their files in the model cache, for the tests
// that compile them (model_accuracy_test, run_model_cached_test). The cache is prepared by
// scripts/prepare-models.sh (CI: scripts/run-tests.sh); tests skip, naming it, without it.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

#include "model/load.h"
#include "model/npy.h"

namespace npuforge::compiler::model_list {

namespace fs = std::filesystem;

struct ModelEntry {
  std::string name;
  std::vector<std::string> input_names;
  std::vector<model::Shape> shapes;
  std::vector<std::string> shape_text;  // "1x3x48x192", as in the list
  float lo = -1, hi = 1;
  std::string options;

  bool has_option(const std::string& o) const { return ("," + options + ",").find("," + o) != std::string::npos; }
};

inline void PrintTo(const ModelEntry& m, std::ostream* os) { *os << m.name; }

inline std::vector<ModelEntry> read_models() {
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
      m.shape_text.push_back(p.at(2));
      m.shapes.push_back(model::parse_input_shape(p.at(0) + "=" + p.at(2)).second);
      m.lo = std::stof(p.at(3));
      m.hi = std::stof(p.at(4));
    }
    out.push_back(m);
  }
  return out;
}

inline fs::path cache_dir() {
  if (const char* c = std::getenv("NPUFORGE_MODEL_CACHE")) return c;
  const char* home = std::getenv("HOME");
  return fs::path(home ? home : "/") / ".cache/npuforge/models";
}

inline fs::path model_file(const ModelEntry& m) { return cache_dir() / (m.name + ".onnx"); }

// The files of input set `set0` (its "..._in0.npy"), one per model input.
inline std::vector<fs::path> set_files(const ModelEntry& m, const fs::path& set0) {
  std::vector<fs::path> files;
  for (size_t i = 0; i < m.input_names.size(); ++i) {
    std::string f = set0.string();
    f.replace(f.size() - 5, 1, std::to_string(i));
    files.push_back(f);
  }
  return files;
}

// The input sets the tests judge on (seeded seed<K>_in0.npy and real sample_*_in0.npy), sorted.
inline std::vector<fs::path> input_sets(const ModelEntry& m) {
  std::vector<fs::path> sets;
  const fs::path dir = cache_dir() / "inputs" / m.name;
  if (!fs::is_directory(dir)) return sets;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string f = e.path().filename().string();
    if (f.size() > 8 && f.substr(f.size() - 8) == "_in0.npy") sets.push_back(e.path());
  }
  std::sort(sets.begin(), sets.end());
  return sets;
}

// The model's calibration set (inputs/NAME/calibration/calib<K>_in<I>.npy, written by
// scripts/make-model-inputs.py for models with real samples: none of them is a test input), as
// --calibrate takes it: sample by sample, each sample's inputs in order. Empty when absent.
inline std::vector<fs::path> calibration_files(const ModelEntry& m) {
  std::vector<fs::path> files;
  const fs::path dir = cache_dir() / "inputs" / m.name / "calibration";
  for (int k = 0;; ++k) {
    const fs::path first = dir / ("calib" + std::to_string(k) + "_in0.npy");
    if (!fs::exists(first)) break;
    for (const fs::path& f : set_files(m, first)) files.push_back(f);
  }
  return files;
}

// Models that miss cosine 0.99 on some input, calibrated on their calibration set (drawn text
// lines + other seeds) with cross-layer equalisation, and what the per-layer drift shows
// (NPUFORGE_DRIFT=1: every op alone, its inputs quantized from the float values, stays >= 0.985;
// the float values quantized at their own per-tensor absmax >= 0.998, per channel >= 0.9999): the
// error is per-tensor rounding compounding over ~100 layers, worst where a depthwise Conv reads a
// hard-swish LUT's output (no per-channel scale can cross a LUT), then magnified by the final
// Softmax/Sigmoid. They must still reach the floor, and classifiers the same top-1.
struct KnownMiss {
  double floor;
  const char* why;
};
inline const std::map<std::string, KnownMiss>& known_misses() {
  static const std::map<std::string, KnownMiss> m = {
      {"ppocr_det_v4", {0.82, "PP-LCNet backbone; a depthwise Conv after a hard-swish LUT loses its small channels "
                              "(alone 0.987); the Sigmoid map magnifies logit errors. Bias correction (fitted to the "
                              "mixed text+noise calibration set) raised the text sample 0.888 -> 0.952 and lowered "
                              "the noise inputs 0.969/0.868 -> 0.883/0.825. On noise its map is ~1e-7 probabilities, "
                              "exp(logit): the cosine sees every logit error, and scores on the calibration noise "
                              "images range 0.15-0.77 with the same compiler; no clip or LUT-group setting wins on "
                              "both"}},
      {"ppocr_rec_v4", {0.97, "PP-LCNet backbone; 24 Softmaxes over 6625 classes magnify the compounded rounding. "
                              "Bias correction of its gemms (the classifier's logits carried 83% of their error as a "
                              "per-class shift) raised the text sample 0.947 -> 0.976; what is left of the logit "
                              "error is still a per-class shift, but one that differs from input to input"}},
  };
  return m;
}

}  // namespace npuforge::compiler::model_list
