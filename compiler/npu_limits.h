#pragma once
// The field limits the partition respects (partition.h): what an NPU group may ask of one
// instruction's fields, read from the ISA's field widths (isa::Isa::max_value), never restated.
// Past them a node stays on the CPU with the limit named; within them the back end's tiling
// (lower_*.cc) fits everything else to the same fields. npu_window: a conv's or pool's window
// as the NPU takes it, checked against them.
#include <cstdint>
#include <optional>
#include <string>

#include "compiler/qgraph.h"
#include "isa/isa.h"
#include "model/ir.h"

namespace npuforge::compiler {

struct NpuLimits {
  int64_t max_kernel = 0;           // im2col kh, kw
  int64_t max_stride = 0;           // im2col and pool strides
  int64_t max_dilation = 0;         // im2col dilations
  int64_t max_pad = 0;              // each of the four pads of im2col and pool
  int64_t max_pool_window = 0;      // pool window_h, window_w
  int64_t max_gemm_dim = 0;         // gemm n and k (m is tiled)
  int64_t max_im2col_channels = 0;  // im2col c: a convolution's input channels (per group)
  int64_t max_image_width = 0;      // im2col and pool w: an image is tiled by rows only
  // Squeeze-and-excite Mul (an image by a [1, C, 1, 1] activation) on the NPU (EltwiseOp::
  // broadcast_b) instead of the CPU. Off until its lowering is shown bit-exact on the simulator.
  bool broadcast_mul = false;

  // The limits of the built-in ISA (isa/npu_isa.yaml).
  NpuLimits() : NpuLimits(isa::builtin_isa()) {}
  // The limits of `isa`; throws npuforge::Error naming an instruction or field it lacks.
  explicit NpuLimits(const isa::Isa& isa);
  // No limit (a window is read back from a node the partition already accepted).
  static NpuLimits unbounded();
};

// The NPU window of a 2-D Conv or pool node on its (rank-4) input, with explicit asymmetric
// pads (auto_pad and ceil_mode resolved); nullopt with `why` set when it does not fit `limits`.
std::optional<Window> npu_window(const model::Graph& graph, const model::Node& node, const NpuLimits& limits,
                                 std::string* why);

}  // namespace npuforge::compiler
