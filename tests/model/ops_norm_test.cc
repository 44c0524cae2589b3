// BatchNormalization, InstanceNormalization, LRN, Softmax and LogSoftmax against their
// formulas written out in double; opset variants and error cases.
#include <cmath>

#include <gtest/gtest.h>

#include "tests/model/op_harness.h"

namespace npuforge::model::testing {
namespace {

TEST(BatchNormalization, InferenceFormula) {
  Rng rng(51);
  for (const Shape& s : {Shape{2, 3, 4, 5}, Shape{4, 3}, Shape{1, 3, 7}}) {
    const Tensor x = random_floats(s, rng), scale = random_floats({3}, rng), b = random_floats({3}, rng),
                 mean = random_floats({3}, rng), var = random_floats({3}, rng, 0.1f, 2.0f);
    const Tensor y = run_checked(op_node("BatchNormalization", 5, {{"epsilon", 1e-3f}}), {&x, &scale, &b, &mean, &var})[0];
    const int64_t plane = x.numel() / (s[0] * 3);
    std::vector<double> e;
    for (int64_t i = 0; i < x.numel(); ++i) {
      const int64_t c = i / plane % 3;
      e.push_back((x.real_at(i) - mean.real_at(c)) / std::sqrt(var.real_at(c) + double{1e-3f}) * scale.real_at(c) +
                  b.real_at(c));
    }
    EXPECT_TRUE(near_all(y, e, 1e-5, 1e-6)) << shape_str(s);
  }
}

TEST(BatchNormalization, PerPositionStatisticsBeforeOpset9) {
  Rng rng(52);
  const Tensor x = random_floats({2, 2, 3}, rng), scale = random_floats({2, 3}, rng), b = random_floats({2, 3}, rng),
               mean = random_floats({2, 3}, rng), var = random_floats({2, 3}, rng, 0.5f, 1.0f);
  const Tensor y = run_op(op_node("BatchNormalization", 5, {{"spatial", int64_t{0}}}), {&x, &scale, &b, &mean, &var}, 7)[0];
  std::vector<double> e;
  for (int64_t i = 0; i < x.numel(); ++i) {
    const int64_t k = i % 6;
    e.push_back((x.real_at(i) - mean.real_at(k)) / std::sqrt(var.real_at(k) + double{1e-5f}) * scale.real_at(k) + b.real_at(k));
  }
  EXPECT_TRUE(near_all(y, e, 1e-5, 1e-6));
  EXPECT_TRUE(fails_with([&] { run_op(op_node("BatchNormalization", 5), {&x, &scale, &b, &mean, &var}, 9); },
                         "scale has shape 2x3, expected 2 values"));
}

TEST(BatchNormalization, TrainingIsAClearError) {
  Rng rng(53);
  const Tensor x = random_floats({1, 2, 2}, rng), s = random_floats({2}, rng);
  EXPECT_TRUE(fails_with([&] { run_op(op_node("BatchNormalization", 5, {{"training_mode", int64_t{1}}}), {&x, &s, &s, &s, &s}, 15); },
                         "training_mode=1 is not supported"));
  EXPECT_TRUE(fails_with([&] { run_op(op_node("BatchNormalization", 5, {}, 3), {&x, &s, &s, &s, &s}, 9); },
                         "output 1 (running or saved statistics) is a training output"));
}

TEST(InstanceNormalization, PerChannelStatistics) {
  Rng rng(54);
  const Tensor x = random_floats({2, 3, 4, 5}, rng, -2, 3), scale = random_floats({3}, rng), b = random_floats({3}, rng);
  const Tensor y = run_checked(op_node("InstanceNormalization", 3, {{"epsilon", 0.01f}}), {&x, &scale, &b})[0];
  std::vector<double> e;
  for (int64_t p = 0; p < 6; ++p) {
    double mean = 0, var = 0;
    for (int64_t j = 0; j < 20; ++j) mean += x.real_at(p * 20 + j) / 20;
    for (int64_t j = 0; j < 20; ++j) var += std::pow(x.real_at(p * 20 + j) - mean, 2) / 20;
    for (int64_t j = 0; j < 20; ++j)
      e.push_back(scale.real_at(p % 3) * (x.real_at(p * 20 + j) - mean) / std::sqrt(var + double{0.01f}) + b.real_at(p % 3));
  }
  EXPECT_TRUE(near_all(y, e, 1e-5, 1e-6));
}

TEST(LRN, SquareSumOverNeighbourChannels) {
  Rng rng(55);
  const Tensor x = random_floats({1, 6, 2, 3}, rng);
  for (int64_t size : {1, 2, 3, 4}) {
    const Tensor y = run_checked(op_node("LRN", 1, {{"size", size}, {"alpha", 0.5f}, {"beta", 0.6f}, {"bias", 2.0f}}), {&x})[0];
    std::vector<double> e;
    for (int64_t c = 0; c < 6; ++c)
      for (int64_t j = 0; j < 6; ++j) {
        double sq = 0;
        for (int64_t k = c - (size - 1) / 2; k <= c + size / 2; ++k)  // ceil((size-1)/2) == size/2
          if (k >= 0 && k < 6) sq += std::pow(x.real_at(k * 6 + j), 2);
        e.push_back(x.real_at(c * 6 + j) / std::pow(2.0 + double{0.5f} / size * sq, double{0.6f}));
      }
    EXPECT_TRUE(near_all(y, e, 1e-5, 1e-7)) << "size " << size;
  }
}

// softmax over groups of `len` elements spaced `inner` apart.
std::vector<double> ref_softmax(const Tensor& x, int64_t len, int64_t inner, bool log) {
  std::vector<double> y(static_cast<size_t>(x.numel()));
  for (int64_t o = 0; o < x.numel() / (len * inner); ++o)
    for (int64_t in = 0; in < inner; ++in) {
      double mx = -1e300, sum = 0;
      for (int64_t k = 0; k < len; ++k) mx = std::max(mx, x.real_at((o * len + k) * inner + in));
      for (int64_t k = 0; k < len; ++k) sum += std::exp(x.real_at((o * len + k) * inner + in) - mx);
      for (int64_t k = 0; k < len; ++k) {
        const int64_t i = (o * len + k) * inner + in;
        y[static_cast<size_t>(i)] = log ? x.real_at(i) - mx - std::log(sum) : std::exp(x.real_at(i) - mx) / sum;
      }
    }
  return y;
}

TEST(Softmax, SingleAxisFromOpset13AndFlattenedBefore) {
  Rng rng(56);
  const Tensor x = random_floats({2, 3, 4}, rng, -30, 30);
  for (const char* op : {"Softmax", "LogSoftmax"}) {
    const bool log = std::string(op) == "LogSoftmax";
    SCOPED_TRACE(op);
    EXPECT_TRUE(near_all(run_checked(op_node(op, 1), {&x}, 13)[0], ref_softmax(x, 4, 1, log), 1e-5, 1e-7));  // axis -1
    EXPECT_TRUE(near_all(run_checked(op_node(op, 1, {{"axis", int64_t{1}}}), {&x}, 13)[0], ref_softmax(x, 3, 4, log), 1e-5, 1e-7));
    EXPECT_TRUE(near_all(run_checked(op_node(op, 1, {{"axis", int64_t{0}}}), {&x}, 13)[0], ref_softmax(x, 2, 12, log), 1e-5, 1e-7));
    // Opset 11: axis 1 (the default) flattens to 2 x 12 and normalises each row of 12.
    EXPECT_TRUE(near_all(run_checked(op_node(op, 1), {&x}, 11)[0], ref_softmax(x, 12, 1, log), 1e-5, 1e-7));
    EXPECT_TRUE(near_all(run_checked(op_node(op, 1, {{"axis", int64_t{-1}}}), {&x}, 11)[0], ref_softmax(x, 4, 1, log), 1e-5, 1e-7));
  }
  const Tensor big = tensor<float>({1, 3}, {1000, 1001, 1002});
  const Tensor y = run_op(op_node("Softmax", 1), {&big})[0];
  EXPECT_TRUE(near_all(y, ref_softmax(big, 3, 1, false), 1e-6, 1e-7));
  EXPECT_TRUE(fails_with([&] { run_op(op_node("Softmax", 1, {{"axis", int64_t{3}}}), {&x}); }, "axis 3 is out of range"));
  const Tensor s = Tensor::scalar(1.0f);
  EXPECT_TRUE(fails_with([&] { run_op(op_node("Softmax", 1), {&s}); }, "softmax needs an axis"));
}

}  // namespace
}  // namespace npuforge::model::testing
