// What the lowering cannot do is an npuforge::Error naming the model, the op (by its first
// model node) and the limit, never a truncated field or a program that overflows the SRAM.
#include <gtest/gtest.h>

#include "run_compiled.h"

namespace npuforge::compiler {
namespace {

using testing::QGraphBuilder;

std::string backend_error(const QGraph& g, const isa::NpuConfig& npu) {
  BackendOptions o;
  o.npu = npu;
  o.arena_algo = "naive";
  try {
    compile_backend(g, isa::builtin_isa(), o);
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "no error";
  return "";
}

TEST(LowerErrors, ConvThatCannotFitTheSramNamesTheNode) {
  // k = 3 * 3 * 256 = 2304 bytes for one weight column alone: more than a 2 KiB SRAM.
  QGraphBuilder b(1);
  const TensorId x = b.image("x", 4, 4, 256);
  b.input(x);
  Window w;
  w.kernel_h = w.kernel_w = 3;
  w.pad_top = w.pad_left = w.pad_bottom = w.pad_right = 1;
  b.output(b.conv(x, "y", w, 1, 8));
  const std::string e = backend_error(b.done(), testing::npu_with_sram(2048));
  EXPECT_NE(e.find("test.qgraph: op 'y_node' (conv)"), std::string::npos) << e;
  EXPECT_NE(e.find("does not fit the 2048-byte SRAM"), std::string::npos) << e;
}

TEST(LowerErrors, PoolWindowAboveTheFieldNamesTheLimit) {
  QGraphBuilder b(2);
  const TensorId x = b.image("x", 2, 300, 4);
  b.input(x);
  Window w;
  w.kernel_h = 2;
  w.kernel_w = 300;  // a GlobalAveragePool over 300 columns: window_w is 8 bits
  b.output(b.pool(x, "y", PoolOp::Kind::kAvg, w));
  const std::string e = backend_error(b.done(), isa::NpuConfig{});
  EXPECT_NE(e.find("op 'y_node' (avgpool)"), std::string::npos) << e;
  EXPECT_NE(e.find("window 2x300 exceeds the POOL window limit 255x255"), std::string::npos) << e;
}

TEST(LowerErrors, GemmKAboveSixteenBits) {
  QGraphBuilder b(3);
  const TensorId x = b.matrix("x", 1, 70000);
  b.input(x);
  b.output(b.gemm(x, "y", 2));
  const std::string e = backend_error(b.done(), isa::NpuConfig{});
  EXPECT_NE(e.find("op 'y_node' (gemm)"), std::string::npos) << e;
  EXPECT_NE(e.find("GEMM k = 70000 exceeds the ISA's limit 65535"), std::string::npos) << e;
}

}  // namespace
}  // namespace npuforge::compiler
