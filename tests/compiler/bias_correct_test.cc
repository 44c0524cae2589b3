// Bias correction (bias_correct.h): a conv whose rounded weights shift every output channel's
// mean gets that shift back in its int32 bias, measured on the calibration samples.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "compiler/front.h"
#include "compiler/qref.h"
#include "test_util.h"

namespace npuforge::compiler {
namespace {

using testing::random_inputs;
using testing::conv_3x3_graph;
using testing::yaml_graph;

// Weights of one big value per output channel and many small ones that all round up at the
// channel's scale (absmax / 127): 0.006 -> 1 step of 0.00787, a systematic +0.0019 each, times
// 71 weights, times a positive input mean: a per-channel shift of the conv's output.
model::Graph shifted_conv_graph() {
  std::string w;
  for (int co = 0; co < 4; ++co)
    for (int k = 0; k < 8 * 9; ++k) w += fmt::format("{}{}", w.empty() ? "" : ", ", k == co ? 1.0 : (co % 2 ? 0.006 : -0.006));
  return conv_3x3_graph(w);
}

// The same weights as a MatMul: [1, rows, 72] x [72, 4], the output channels on the last axis.
model::Graph shifted_matmul_graph(int rows) {
  std::string w;
  for (int k = 0; k < 8 * 9; ++k)
    for (int co = 0; co < 4; ++co)
      w += fmt::format("{}{}", w.empty() ? "" : ", ", k == co ? 1.0 : (co % 2 ? 0.006 : -0.006));
  return yaml_graph(fmt::format(R"(
opset: 13
inputs: [{{name: x, shape: [1, {}, 72]}}]
outputs: [{{name: y}}]
constants:
  - {{name: w, shape: [72, 4], values: [{}]}}
nodes:
  - {{name: m, op: MatMul, inputs: [x, w], outputs: [y]}}
)", rows, w));
}

// Mean over channels of |per-channel mean of (int8 result - float result)| on `in`; channels on
// axis 1, or on the last axis with `last_axis`.
double mean_shift(const CompileFront& f, const model::Graph& g, const model::TensorMap& in, bool last_axis = false) {
  const model::Tensor want = model::Interpreter(g).run(in).at("y");
  const model::Tensor got = run_qref(f.graph, in).outputs.at("y");
  const int64_t c = last_axis ? want.shape().back() : want.shape()[1], inner = want.numel() / c;
  double total = 0;
  for (int64_t ch = 0; ch < c; ++ch) {
    double s = 0;
    for (int64_t i = 0; i < inner; ++i) {
      const int64_t at = last_axis ? i * c + ch : ch * inner + i;
      s += got.real_at(at) - want.real_at(at);
    }
    total += std::fabs(s / static_cast<double>(inner));
  }
  return total / static_cast<double>(c);
}

TEST(BiasCorrect, RemovesTheMeanShiftOfRoundedWeights) {
  const model::Graph g = shifted_conv_graph();
  FrontOptions on;
  on.equalize = false;
  on.calibration.random_samples = 4;
  on.calibration.random_lo = 0;  // a positive input mean: rounded weights shift the output
  on.calibration.random_hi = 1;
  FrontOptions off = on;
  off.bias_correction = false;
  const CompileFront a = compile_front(g, on), b = compile_front(g, off);
  EXPECT_EQ(a.report.bias_correction.convs, 1u);
  EXPECT_EQ(a.report.bias_correction.channels, 4u);
  EXPECT_EQ(b.report.bias_correction.channels, 0u);
  // Judged on an input that is not a calibration sample.
  const model::TensorMap in = random_inputs(g, 77, 0, 1);
  const double with = mean_shift(a, g, in), without = mean_shift(b, g, in);
  EXPECT_GT(without, 0.05) << "the test graph must have a shift to remove";
  EXPECT_LT(with, without / 5) << "with " << with << ", without " << without;
}

// Gemm/MatMul outputs (as in the PP-OCR recogniser's classifier) are corrected per column too, when
// the samples give at least 64 rows (here 16 rows x 4 samples); one row per sample is left alone.
TEST(BiasCorrect, RemovesTheMeanShiftOfAGemm) {
  const model::Graph g = shifted_matmul_graph(16);
  FrontOptions on;
  on.equalize = false;
  on.calibration.random_samples = 4;
  on.calibration.random_lo = 0;
  on.calibration.random_hi = 1;
  FrontOptions off = on;
  off.bias_correction = false;
  const CompileFront a = compile_front(g, on), b = compile_front(g, off);
  ASSERT_TRUE(std::holds_alternative<GemmOp>(a.graph.ops.at(0))) << op_kind(a.graph.ops.at(0));
  EXPECT_EQ(a.report.bias_correction.convs, 1u);
  EXPECT_EQ(a.report.bias_correction.channels, 4u);
  const model::TensorMap in = random_inputs(g, 77, 0, 1);
  const double with = mean_shift(a, g, in, true), without = mean_shift(b, g, in, true);
  EXPECT_GT(without, 0.05) << "the test graph must have a shift to remove";
  EXPECT_LT(with, without / 5) << "with " << with << ", without " << without;

  const CompileFront one_row = compile_front(shifted_matmul_graph(1), on);
  EXPECT_EQ(one_row.report.bias_correction.channels, 0u);
}

TEST(BiasCorrect, NoSamplesNoChange) {
  model::Graph g = shifted_conv_graph();
  FrontOptions off;
  off.bias_correction = false;
  off.equalize = false;
  CompileFront f = compile_front(g, off);
  const QGraph before = f.graph;
  const BiasCorrectionReport r = correct_biases(f.graph, f.float_graph, {});
  EXPECT_EQ(r.channels, 0u);
  EXPECT_EQ(std::get<ConvOp>(before.ops.at(0)).bias, std::get<ConvOp>(f.graph.ops.at(0)).bias);
}

}  // namespace
}  // namespace npuforge::compiler
