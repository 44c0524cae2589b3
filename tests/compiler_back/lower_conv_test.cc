// Conv and Gemm lowered to IM2COL + GEMM tiles, run on the golden model: bytes equal to the
// int8 reference for every pad/stride/dilation/group case, with tiles that split the rows
// (halo, per-tile pads) and the output channels (N-tiles) in small SRAMs.
#include <gtest/gtest.h>

#include "run_compiled.h"

namespace npuforge::compiler {
namespace {

using testing::QGraphBuilder;
using testing::run_compiled;

Window window(int64_t kh, int64_t kw, int64_t sh = 1, int64_t sw = 1, std::array<int64_t, 4> pads = {0, 0, 0, 0},
              int64_t dh = 1, int64_t dw = 1) {
  Window w;
  w.kernel_h = kh;
  w.kernel_w = kw;
  w.stride_h = sh;
  w.stride_w = sw;
  w.pad_top = pads[0];
  w.pad_left = pads[1];
  w.pad_bottom = pads[2];
  w.pad_right = pads[3];
  w.dilation_h = dh;
  w.dilation_w = dw;
  return w;
}

// One conv x[h][w][c] -> y, compiled and run; returns the compiled model.
CompiledModel one_conv(int64_t h, int64_t w, int64_t c, const Window& win, int64_t groups, int64_t cout, bool relu,
                       const isa::NpuConfig& npu, uint64_t seed = 1) {
  QGraphBuilder b(seed);
  const TensorId x = b.image("x", h, w, c);
  b.input(x);
  b.output(b.conv(x, "y", win, groups, cout, relu));
  return run_compiled(b.done(), npu, seed).compiled;
}

TEST(LowerConv, ThreeByThreePaddedInOneTile) {
  const CompiledModel m = one_conv(12, 12, 8, window(3, 3, 1, 1, {1, 1, 1, 1}), 1, 16, true, isa::NpuConfig{});
  EXPECT_EQ(testing::buffers_named(m, "y.col@"), 1u);  // the whole image in one tile
}

TEST(LowerConv, RowTilesWithHaloAndPerTilePadsInA64KiBSram) {
  const isa::NpuConfig npu = testing::npu_with_sram(64 * 1024);
  const CompiledModel m = one_conv(32, 32, 16, window(3, 3, 1, 1, {1, 1, 1, 1}), 1, 32, false, npu);
  EXPECT_GT(testing::buffers_named(m, "y.col@"), 2u);
  EXPECT_EQ(testing::loads_of(m, "y.weights"), 1u);  // weights once per layer
}

// Each case in one tile (the whole image) and in row tiles of a 4 KiB SRAM (halo rows loaded
// twice, the top pad on the first tile only, the bottom pad on the last only).
void tiled_and_whole(int64_t h, int64_t w, int64_t c, const Window& win, int64_t cout, bool relu, uint64_t seed) {
  const CompiledModel whole = one_conv(h, w, c, win, 1, cout, relu, isa::NpuConfig{}, seed);
  EXPECT_EQ(testing::buffers_named(whole, "y.in@"), 1u);
  const CompiledModel tiled = one_conv(h, w, c, win, 1, cout, relu, testing::npu_with_sram(4096), seed);
  EXPECT_GT(testing::buffers_named(tiled, "y.in@"), 1u);
}

TEST(LowerConv, StridesAsymmetricPadsDilationAndRectangularKernels) {
  tiled_and_whole(17, 15, 6, window(3, 3, 2, 2, {0, 0, 1, 1}), 10, false, 2);  // SAME_UPPER, stride 2
  tiled_and_whole(16, 13, 5, window(5, 3, 1, 2, {2, 1, 2, 0}), 7, true, 3);
  tiled_and_whole(20, 20, 4, window(3, 3, 1, 1, {2, 2, 2, 2}, 2, 2), 8, false, 4);  // dilation 2
  tiled_and_whole(19, 23, 3, window(7, 7, 2, 2, {3, 3, 3, 3}), 16, true, 5);
  tiled_and_whole(21, 11, 3, window(3, 5, 3, 1, {1, 0, 2, 4}, 1, 2), 9, false, 6);
  // Top pads on more than one tile: pad 2 with a 3x3 kernel reaches into the second output row.
  tiled_and_whole(9, 9, 4, window(3, 3, 1, 1, {2, 2, 2, 2}), 4, false, 7);
}

TEST(LowerConv, OneByOneDirectAndStrided) {
  const isa::NpuConfig npu = testing::npu_with_sram(8 * 1024);
  const CompiledModel direct = one_conv(14, 14, 24, window(1, 1), 1, 40, true, npu, 7);
  EXPECT_EQ(testing::buffers_named(direct, ".col@"), 0u);  // the loaded tile is the GEMM's a
  EXPECT_GT(testing::buffers_named(direct, "y.in@"), 1u);
  one_conv(14, 14, 24, window(1, 1, 2, 2), 1, 40, false, npu, 8);
}

TEST(LowerConv, DepthwiseInBlocksOfGroups) {
  const isa::NpuConfig npu = testing::npu_with_sram(8 * 1024);
  // 40 channels: blocks of 16, 16 and 8 groups.
  const CompiledModel m = one_conv(18, 18, 40, window(3, 3, 1, 1, {1, 1, 1, 1}), 40, 40, true, npu, 9);
  EXPECT_EQ(testing::loads_of(m, "y@b2.weights"), 1u);
  one_conv(18, 18, 40, window(3, 3, 2, 2, {0, 0, 1, 1}), 40, 40, false, npu, 10);
  one_conv(10, 10, 8, window(5, 5, 1, 1, {2, 2, 2, 2}), 8, 16, false, npu, 11);  // channel multiplier 2
}

TEST(LowerConv, GroupedConvs) {
  const isa::NpuConfig npu = testing::npu_with_sram(8 * 1024);
  one_conv(12, 12, 16, window(3, 3, 1, 1, {1, 1, 1, 1}), 4, 32, true, npu, 12);  // 2 groups per block
  one_conv(12, 12, 16, window(3, 3, 1, 1, {1, 1, 1, 1}), 2, 48, false, npu, 13);  // 24 columns a group
}

TEST(LowerConv, NTilesWhenTheWeightsDoNotFit) {
  // k = 3 * 3 * 64 = 576, cout = 192: 110 KiB of weights in a 64 KiB SRAM.
  const isa::NpuConfig npu = testing::npu_with_sram(64 * 1024);
  const CompiledModel m = one_conv(8, 8, 64, window(3, 3, 1, 1, {1, 1, 1, 1}), 1, 192, true, npu, 14);
  EXPECT_GT(testing::buffers_named(m, "y.w@n"), 1u);
  EXPECT_GT(testing::loads_of(m, "y.weights"), 1u);  // one per N-tile
}

TEST(LowerConv, OneDimensionalConv) {
  QGraphBuilder b(15);
  const TensorId x = b.graph().add_tensor({"x", {1, 6, 50}, Layout::kHWC, model::DType::kInt8, 0.05f});
  b.input(x);
  b.output(b.conv(x, "y", window(1, 5, 1, 2, {0, 2, 0, 2}), 1, 12, true));
  run_compiled(b.done(), testing::npu_with_sram(4096), 15);
}

TEST(LowerGemm, RowTilesAndNTiles) {
  QGraphBuilder b(16);
  const TensorId x = b.matrix("x", 37, 50);
  b.input(x);
  const TensorId h = b.gemm(x, "h", 70, true);
  b.output(b.gemm(h, "y", 9));
  run_compiled(b.done(), isa::NpuConfig{}, 16);
  QGraphBuilder big(17);
  const TensorId x2 = big.matrix("x", 300, 200);
  big.input(x2);
  big.output(big.gemm(x2, "y", 300));  // 60 KB of weights in a 16 KiB SRAM
  const CompiledModel m = run_compiled(big.done(), testing::npu_with_sram(16 * 1024), 17).compiled;
  EXPECT_GT(testing::buffers_named(m, "y.w@n"), 1u);
}

TEST(LowerGemm, BatchedRows) {
  QGraphBuilder b(18);
  const TensorId x = b.graph().add_tensor({"x", {1, 25, 96}, Layout::kRowMajor, model::DType::kInt8, 0.05f});
  b.input(x);
  b.output(b.gemm(x, "y", 64, true));
  run_compiled(b.done(), testing::npu_with_sram(8 * 1024), 18);
}

}  // namespace
}  // namespace npuforge::compiler
