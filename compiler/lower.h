#pragma once
// Lowering (docs/compiler.md section 12): one QOp of an NPU segment -> its instructions (an OpCode), tiled
// so that every tile's operands fit the NPU's SRAM, with LOAD/COMPUTE/STORE of consecutive
// tiles on different buffers (double buffering) where the SRAM allows it.
//
//  - conv: IM2COL + GEMM per tile of output rows; the input rows of a tile are loaded with
//    their halo and the tile gets its own pads (the top pad only on the first tile, the bottom
//    pad only on the last). When the weights of a block do not fit beside the tiles, the
//    output channels are split into N-tiles (weights/bias/qp loaded once per N-tile, else once
//    per layer). Grouped convs run per block of groups: a LOAD with row_bytes = the block's
//    input channels and stride = C gathers them, and the block's GEMM multiplies by a
//    block-diagonal weight matrix (depthwise: up to mac_cols groups per GEMM, the same cycles
//    as one GEMM per group, far fewer instructions). 1x1 convs with stride 1 and no pads skip
//    IM2COL (the loaded tile is the GEMM's a).
//  - gemm: the same as a 1x1 conv over rows (W = 1).
//  - add/mul/clamp/lut: flat chunks of the tensor (ELTWISE add/mul/clip, LUT). A lut with
//    channel tables runs per group of channels: a strided LOAD gathers the group's bytes of a
//    block of pixels (row_bytes = the group's channels, stride = C), one LUT with its table, a
//    strided STORE puts them back.
//  - max/avg pool: tiles of output rows (halo and per-tile pads as conv) and of channels (a
//    strided LOAD gathers a channel slice) when a row of the whole image does not fit;
//    GlobalAveragePool is the window = the image.
//  - concat: each input's bytes copied through SRAM into the output by strided STOREs.
//  - alias: no code (the output is the input's bytes).
// Emission order within an op (double buffering): L(0), then per tile t: L(t+1), C(t), S(t-1),
// then S(last); so the next tile's buffers are placed while the current ones are still live
// and no WAR wait serialises them. Each tiling is checked with sram_fit (the op's own
// allocation sequence on an empty SRAM) and shrunk until it fits.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "allocator/allocator.h"
#include "compiler/isa_slots.h"
#include "compiler/opcode.h"
#include "compiler/qgraph.h"
#include "isa/npu_config.h"

namespace npuforge::compiler {

// One block of a conv (or gemm) lowered as one GEMM per tile: groups [g0, g0 + groups),
// input channels [cin0, cin0 + cin), output channels [cout0, cout0 + cout).
struct ConvBlock {
  int64_t g0 = 0, groups = 1;
  int64_t cin0 = 0, cin = 0;
  int64_t cout0 = 0, cout = 0;
  int64_t k = 0;  // GEMM k = kernel_h * kernel_w * cin
};

// Blocks of a conv with `in_channels` input channels: one for groups == 1; else as many groups
// per block as fit mac_cols output columns (at least one).
std::vector<ConvBlock> conv_blocks(const ConvOp& conv, int64_t in_channels, uint32_t mac_cols);
// A block's GEMM b matrix [k][cout], row-major (block-diagonal over its groups).
std::vector<int8_t> block_weights(const ConvOp& conv, const ConvBlock& block);

// Where an op's constants are in DDR (absolute addresses), per block.
struct BlockConsts {
  uint64_t weights = 0, bias = 0, qp = 0;
  bool has_bias = false;
};
struct OpConsts {
  std::vector<BlockConsts> blocks;  // conv, gemm
  uint64_t table = 0;               // lut
  std::vector<uint64_t> tables;     // lut: one per LutOp::channel_tables entry
};

// The constant bytes of every op: appended to the weights region of the DDR image.
struct ConstImage {
  uint64_t alignment = 64;
  std::vector<uint8_t> bytes;
  struct Blob {
    std::string name;
    uint64_t addr = 0, bytes = 0;  // padded
  };
  std::vector<Blob> blobs;
  uint64_t add(std::string name, const void* data, uint64_t bytes);  // returns the address
};

// Builds the constants of `op` (one ConvOp/GemmOp/LutOp; others have none) into `image`.
OpConsts build_consts(const QGraph& g, const QOp& op, uint32_t mac_cols, ConstImage& image);

// What a lowering needs beside the op.
struct LowerEnv {
  const QGraph* graph = nullptr;
  const IsaSlots* slots = nullptr;
  isa::NpuConfig npu;
  allocator::Policy policy = allocator::Policy::FirstFit;
  // DDR address of a tensor's bytes (aliases share their root's).
  std::function<uint64_t(TensorId)> tensor_addr;
  // The segment's DDR buffer index of a tensor, and of the constant blob at an address.
  std::function<int32_t(TensorId)> tensor_buf;
  std::function<int32_t(uint64_t addr)> const_buf;
};

// The instructions of one NPU op. Throws npuforge::Error naming the op when it cannot be
// lowered (a field limit, one tile that does not fit the SRAM).
OpCode lower_op(const LowerEnv& env, const QOp& op, const OpConsts& consts);

// Per kind (lower_conv.cc, lower_pool.cc, lower_flat.cc).
OpCode lower_conv(const LowerEnv& env, const ConvOp& op, const OpConsts& consts);
OpCode lower_gemm(const LowerEnv& env, const GemmOp& op, const OpConsts& consts);
OpCode lower_pool(const LowerEnv& env, const PoolOp& op);
OpCode lower_eltwise(const LowerEnv& env, const EltwiseOp& op);
OpCode lower_clamp(const LowerEnv& env, const ClampOp& op);
OpCode lower_lut(const LowerEnv& env, const LutOp& op, const OpConsts& consts);
OpCode lower_concat(const LowerEnv& env, const ConcatOp& op);

// MACs of an op (conv, gemm; 0 otherwise), for the statistics.
uint64_t op_macs(const QGraph& g, const QOp& op);

}  // namespace npuforge::compiler
