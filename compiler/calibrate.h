#pragma once
// Activation statistics for quantization: the float graph runs on sample inputs (the user's
// .npy files, or seeded random ones) and every float value gets its range and a clip value,
// the real number that int8 code 127 will stand for (scale = clip / 127).
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "model/interpreter.h"
#include "model/ir.h"

namespace npuforge::compiler {

// How the clip value is chosen from the distribution of |x| over the samples.
enum class ClipMethod : uint8_t {
  kAbsMax,      // the largest |x| seen: nothing saturates (the baseline)
  kPercentile,  // the `percentile` of |x|: outliers saturate
  kMse,         // the clip that minimises the expected squared quantization error (histogram)
};
std::string_view clip_method_name(ClipMethod m);  // "absmax", "percentile", "mse"

// One clip statistic with its parameter, for choosing between several (front.h).
struct ClipCandidate {
  ClipMethod method = ClipMethod::kMse;
  double percentile = 99.99;  // kPercentile only
};
std::string clip_candidate_name(const ClipCandidate& c);  // "mse", "percentile 99.99"

struct CalibrationOptions {
  // .npy files, one per model input per sample, in the model's input order
  // (--calibrate a.npy b.npy: two samples of a one-input model).
  std::vector<std::filesystem::path> files;
  // Without files: this many seeded random samples, uniform in [random_lo, random_hi).
  int random_samples = 4;
  uint64_t seed = 1;
  float random_lo = -1, random_hi = 1;
  ClipMethod method = ClipMethod::kMse;
  double percentile = 99.99;
};

struct ValueRange {
  float min = 0, max = 0;  // over every sample
  float clip = 0;          // > 0 unless the value was always 0
  std::vector<float> channel_absmax{};  // rank-4 values: the largest |x| per channel (axis 1)
};

struct Calibration {
  std::string source;      // what the samples were, for the report
  int samples = 0;
  std::map<std::string, ValueRange, std::less<>> ranges;  // every float value (inputs, node outputs)
};

// The sample inputs the options describe (checked against the graph's inputs: count, dtype
// and shape; an error names the file).
std::vector<model::TensorMap> calibration_inputs(const model::Graph& graph, const CalibrationOptions& options,
                                                 std::string* source = nullptr);

Calibration calibrate(const model::Graph& graph, const CalibrationOptions& options);

// The clip of a histogram of |x| (bins of equal width over [0, absmax]) by `method`; exposed
// for tests.
float choose_clip(const std::vector<uint64_t>& histogram, float absmax, uint64_t zeros, ClipMethod method,
                  double percentile);

}  // namespace npuforge::compiler
