// Pools, element-wise ops, luts, concat and alias lowered and run on the golden model against
// the int8 reference; chains of ops, a CPU step between NPU segments, small SRAMs.
#include <gtest/gtest.h>

#include "model/load.h"
#include "model/yaml_import.h"
#include "run_compiled.h"

namespace npuforge::compiler {
namespace {

using testing::QGraphBuilder;
using testing::run_compiled;

Window pool_window(int64_t k, int64_t s, std::array<int64_t, 4> pads = {0, 0, 0, 0}) {
  Window w;
  w.kernel_h = w.kernel_w = k;
  w.stride_h = w.stride_w = s;
  w.pad_top = pads[0];
  w.pad_left = pads[1];
  w.pad_bottom = pads[2];
  w.pad_right = pads[3];
  return w;
}

void one_pool(int64_t h, int64_t w, int64_t c, PoolOp::Kind kind, const Window& win, bool count_pad,
              const isa::NpuConfig& npu, uint64_t seed) {
  QGraphBuilder b(seed);
  const TensorId x = b.image("x", h, w, c);
  b.input(x);
  b.output(b.pool(x, "y", kind, win, count_pad));
  run_compiled(b.done(), npu, seed);
}

TEST(LowerPool, MaxAndAverageWithPadsAndTiles) {
  const isa::NpuConfig small = testing::npu_with_sram(8 * 1024);
  one_pool(15, 15, 16, PoolOp::Kind::kMax, pool_window(3, 2, {1, 1, 1, 1}), false, small, 1);
  one_pool(15, 15, 16, PoolOp::Kind::kAvg, pool_window(3, 2, {1, 1, 1, 1}), false, small, 2);
  one_pool(15, 15, 16, PoolOp::Kind::kAvg, pool_window(3, 2, {1, 1, 1, 1}), true, small, 3);
  one_pool(16, 16, 8, PoolOp::Kind::kMax, pool_window(2, 2), false, small, 4);
  one_pool(9, 14, 5, PoolOp::Kind::kAvg, pool_window(3, 1, {0, 0, 2, 2}), false, testing::npu_with_sram(4096), 5);
}

TEST(LowerPool, GlobalAveragePoolAndChannelTiles) {
  one_pool(7, 9, 24, PoolOp::Kind::kAvg, [] {
    Window w;
    w.kernel_h = 7;
    w.kernel_w = 9;
    return w;
  }(), false, isa::NpuConfig{}, 6);
  // 16 x 16 x 256 = 64 KiB of image in a 16 KiB SRAM: tiles of channels.
  QGraphBuilder b(7);
  const TensorId x = b.image("x", 16, 16, 256);
  b.input(x);
  Window w;
  w.kernel_h = w.kernel_w = 16;
  b.output(b.pool(x, "y", PoolOp::Kind::kAvg, w));
  const CompiledModel m = run_compiled(b.done(), testing::npu_with_sram(16 * 1024), 7).compiled;
  EXPECT_GT(testing::buffers_named(m, "y.in@c"), 1u);
}

TEST(LowerFlat, AddMulClampLutOverManyChunks) {
  QGraphBuilder b(8);
  const TensorId x = b.image("x", 40, 40, 24);  // 38400 bytes: several chunks in 16 KiB
  const TensorId z = b.image("z", 40, 40, 24);
  b.input(x);
  b.input(z);
  const TensorId s = b.eltwise(EltwiseOp::Kind::kAdd, x, z, "s", 0.09f);
  const TensorId r = b.eltwise(EltwiseOp::Kind::kAdd, x, z, "r", 0.07f);
  const TensorId p = b.eltwise(EltwiseOp::Kind::kMul, s, r, "p", 0.2f);
  const TensorId c = b.clamp(p, "c", -20, 90);
  b.output(b.lut(c, "y"));
  const CompiledModel m = run_compiled(b.done(), testing::npu_with_sram(16 * 1024), 8).compiled;
  EXPECT_GT(testing::buffers_named(m, "s.out@t"), 2u);
  EXPECT_EQ(testing::loads_of(m, "y.table"), 1u);
}

TEST(LowerFlat, OddSizes) {
  QGraphBuilder b(9);
  const TensorId x = b.matrix("x", 7, 13);  // 91 bytes: not a multiple of anything
  b.input(x);
  b.output(b.lut(b.clamp(x, "c", 0, 127), "y"));
  run_compiled(b.done(), testing::npu_with_sram(4096), 9);
}

TEST(LowerConcat, ChannelsRowsAndMatrices) {
  QGraphBuilder b(10);
  const TensorId x = b.image("x", 6, 7, 5), z = b.image("z", 6, 7, 3), u = b.image("u", 2, 7, 8);
  b.input(x);
  b.input(z);
  b.input(u);
  const TensorId c = b.concat({x, z}, "c", 1);     // along C: strided stores into HWC
  b.output(b.concat({c, u}, "h", 2));               // along H: contiguous blocks
  const TensorId m1 = b.matrix("m1", 5, 9), m2 = b.matrix("m2", 5, 4);
  b.input(m1);
  b.input(m2);
  b.output(b.concat({m1, m2, m1}, "m", 1));
  run_compiled(b.done(), isa::NpuConfig{}, 10);
  QGraphBuilder big(11);  // chunks larger than a DMA row and than the SRAM
  const TensorId a = big.image("a", 30, 40, 64), d = big.image("d", 30, 40, 64);
  big.input(a);
  big.input(d);
  big.output(big.concat({a, d}, "y", 2));
  run_compiled(big.done(), testing::npu_with_sram(16 * 1024), 11);
}

TEST(LowerChain, ConvPoolAddAliasGemm) {
  QGraphBuilder b(12);
  const TensorId x = b.image("x", 20, 20, 3);
  b.input(x);
  Window w3;
  w3.kernel_h = w3.kernel_w = 3;
  w3.pad_top = w3.pad_left = w3.pad_bottom = w3.pad_right = 1;
  const TensorId c1 = b.conv(x, "c1", w3, 1, 16, true);
  const TensorId p1 = b.pool(c1, "p1", PoolOp::Kind::kMax, pool_window(2, 2));
  const TensorId d1 = b.conv(p1, "d1", w3, 16, 16, true);
  const TensorId c2 = b.conv(d1, "c2", Window{}, 1, 16);
  const TensorId a1 = b.eltwise(EltwiseOp::Kind::kAdd, p1, c2, "a1", 0.06f);
  Window gap;
  gap.kernel_h = gap.kernel_w = 10;
  const TensorId g1 = b.pool(a1, "g1", PoolOp::Kind::kAvg, gap);
  const TensorId f1 = b.alias(g1, "f1", {1, 16}, Layout::kRowMajor);
  b.output(b.gemm(f1, "y", 10));
  const QGraph g = b.done();
  run_compiled(g, isa::NpuConfig{}, 12);
  run_compiled(g, testing::npu_with_sram(8 * 1024), 13);
  run_compiled(g, testing::npu_with_sram(8 * 1024), 14, allocator::Policy::BestFit);
  run_compiled(g, testing::npu_with_sram(8 * 1024), 15, allocator::Policy::FirstFit, "");  // arena reuse
}

TEST(LowerChain, ACpuStepBetweenTwoNpuSegments) {
  QGraphBuilder b(15);
  const TensorId x = b.image("x", 8, 8, 4);
  b.input(x);
  Window w3;
  w3.kernel_h = w3.kernel_w = 3;
  w3.pad_top = w3.pad_left = w3.pad_bottom = w3.pad_right = 1;
  const TensorId c1 = b.conv(x, "c1", w3, 1, 6);
  const TensorId s1 = b.image("s1", 8, 8, 6, 1.0f / 127);
  CpuStepOp step;
  step.nodes = {"sig"};
  step.graph = model::import_yaml_string(
      "inputs: [{name: c1, shape: [1, 6, 8, 8]}]\noutputs: [{name: s1}]\n"
      "nodes: [{name: sig, op: Sigmoid, inputs: [c1], outputs: [s1]}]\n",
      "step.yaml", ".");
  model::prepare_graph(step.graph);
  step.inputs = {c1};
  step.outputs = {s1};
  b.graph().ops.emplace_back(std::move(step));
  b.output(b.conv(s1, "y", w3, 1, 5));
  const QGraph g = b.done();
  ASSERT_EQ(g.segments.size(), 3u);
  const CompiledModel m = run_compiled(g, testing::npu_with_sram(8 * 1024), 15).compiled;
  // c1 is written by segment 0 and read by the CPU step: live to the end of segment 0.
  const bundle::MemDdrBuffer* c1_buf = nullptr;
  for (const auto& d : m.segments[0].program.memmap.ddr_buffers)
    if (d.name == "c1") c1_buf = &d;
  ASSERT_NE(c1_buf, nullptr);
  EXPECT_EQ(c1_buf->last, static_cast<int64_t>(m.segments[0].program.instrs.size()) - 1);
}

}  // namespace
}  // namespace npuforge::compiler
