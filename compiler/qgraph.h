#pragma once
// The quantized graph (QGraph): what the model compiler's front half (clean-up, quantization,
// partition, schedule) hands to its back half (tiling, SRAM placement, DDR arena, emission),
// and what the int8 reference (qref.h) executes. Conventions every op shares:
//  - NPU tensors are int8 and symmetric: real = scale * q, zero point 0. Batch is 1.
//  - Shapes are the model's (ONNX order, N first); where the bytes live is the tensor's Layout.
//    A tensor's stored value (qref, DDR) has storage_shape(): HWC images as [H][W][C].
//  - Accumulators are int32 and wrap around; requant is isa::requant (isa/numerics.h), so the
//    NPU and qref agree bit for bit.
//  - Ops are in schedule order once schedule() has run (a topological, breadth-first order);
//    segments are maximal runs of NPU ops or one CPU step, in that order.
#include <array>
#include <compare>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "isa/numerics.h"
#include "model/ir.h"
#include "model/tensor.h"

namespace npuforge::compiler {

// Index into QGraph::tensors.
struct TensorId {
  uint32_t value = std::numeric_limits<uint32_t>::max();
  constexpr auto operator<=>(const TensorId&) const = default;
  constexpr bool valid() const { return value != std::numeric_limits<uint32_t>::max(); }
};

// Index into QGraph::ops.
struct OpId {
  uint32_t value = 0;
  constexpr auto operator<=>(const OpId&) const = default;
};

// Where a tensor's elements are, in storage order (outermost first).
enum class Layout : uint8_t {
  kHWC,       // int8 image: shape [1, C, H, W] stored [H][W][C] (channels innermost); a rank-3
              // [1, C, L] (1-D conv/pool) is H = 1, W = L
  kRowMajor,  // int8, row-major in the model's shape: a matrix [rows][cols], cols = last dim
  kOnnx,      // float32, row-major in the model's shape: a CPU-side value (no NPU op reads it)
};
std::string_view layout_name(Layout layout);  // "hwc", "row_major", "onnx"

// One value of the compiled model.
struct QTensor {
  std::string name;          // the model's value name; compiler-made ones are "<value>~<why>"
  model::Shape shape;        // the model's shape (ONNX order, N == 1)
  Layout layout = Layout::kRowMajor;
  model::DType dtype = model::DType::kInt8;  // kInt8 on the NPU; kFloat32 with kOnnx
  float scale = 0;           // real = scale * q (> 0 for int8; 0 for float32)
  // Empty: every element at `scale`. Else one scale per channel (model axis 1 of an HWC image;
  // real = channel_scales[c] * q, `scale` is their largest): a LUT writes such a tensor with a
  // table per group of channels, and only convs (which fold the scales into their weights or
  // per-channel requant) and such LUTs read or write it (validate() checks).
  std::vector<float> channel_scales{};

  int64_t numel() const { return model::element_count(shape); }
  int64_t bytes() const { return numel() * static_cast<int64_t>(model::dtype_size(dtype)); }
  bool is_int8() const { return dtype == model::DType::kInt8; }
  // The dims of the stored value, outermost first: HWC -> {H, W, C}; otherwise the shape.
  model::Shape storage_shape() const;
};

// True when the stored bytes are in the model's (ONNX) order: row-major, or an HWC image with
// one channel or one pixel. Such a tensor reads as a row-major matrix too (a gemm operand).
bool onnx_ordered(const QTensor& t);

// The storage dim that holds model axis `axis` of `t` (HWC: 1 -> 2, 2 -> 0, 3 -> 1).
int64_t storage_axis(const QTensor& t, int64_t axis);

// Window of a conv or pool, per spatial axis (h = rows, w = columns); 1-D ops use h = 1.
// Pads are zeros outside the image (conv) or ignored / counted positions (pools).
struct Window {
  int64_t kernel_h = 1, kernel_w = 1;
  int64_t stride_h = 1, stride_w = 1;
  int64_t dilation_h = 1, dilation_w = 1;
  int64_t pad_top = 0, pad_left = 0, pad_bottom = 0, pad_right = 0;

  friend bool operator==(const Window&, const Window&) = default;
  // 1x1, stride 1, no pads: a convolution's GEMM reads the image itself, with no IM2COL.
  bool pointwise() const {
    return kernel_h == 1 && kernel_w == 1 && stride_h == 1 && stride_w == 1 && pad_top == 0 && pad_left == 0 &&
           pad_bottom == 0 && pad_right == 0;
  }
};

// Conv 2-D (1-D as H = 1) via IM2COL + GEMM: input/output HWC int8.
// out[oy][ox][co] = requant[co](bias[co] + sum_{ky,kx,ci} in[..][..][g*cin_pg + ci] *
//                   weights[(ky*kernel_w + kx)*cin_pg + ci][co]), g = co / cout_pg, padding 0.
struct ConvOp {
  std::vector<std::string> nodes;  // model nodes folded in (Conv, BatchNormalization, Relu, ...)
  TensorId input, output;
  Window window;
  int64_t groups = 1;              // depthwise: groups == input channels
  int64_t cin_per_group = 0, cout = 0;
  // GEMM b matrix [kernel_h*kernel_w*cin_per_group][cout], row-major; rows in IM2COL order
  // (ky, kx, ci). Group g uses the columns [g*cout/groups, (g+1)*cout/groups).
  std::vector<int8_t> weights;
  std::vector<int32_t> bias;                  // [cout], in units of in.scale * weight_scales[co]
  std::vector<float> weight_scales;           // [cout], symmetric per output channel
  std::vector<isa::RequantParams> requant;    // [cout]: scale < 2^31, shift <= 62, relu as below
  bool relu = false;                          // every requant[co].relu equals it

  int64_t k() const { return window.kernel_h * window.kernel_w * cin_per_group; }
  int64_t cout_per_group() const { return cout / groups; }
};

// MatMul/Gemm with a constant B: input row-major [..., K] (rows = numel / K) -> [..., N].
// out[r][n] = requant[n](bias[n] + sum_k in[r][k] * weights[k][n]).
struct GemmOp {
  std::vector<std::string> nodes;
  TensorId input, output;
  int64_t k = 0, n = 0;
  std::vector<int8_t> weights;                // [k][n] row-major
  std::vector<int32_t> bias;                  // [n]
  std::vector<float> weight_scales;           // [n]
  std::vector<isa::RequantParams> requant;    // [n]
  bool relu = false;
};

// Element-wise add or multiply of two int8 tensors of equal shape and layout:
// out = requant(a + b) (a and b at the same scale) or requant(a * b); 16-bit scale, shift <= 40.
// With broadcast_b (mul only): a is an HWC image [1, C, H, W] and b a [1, C, 1, 1] vector, one
// value per channel (squeeze-and-excite): out[p][c] = requant(a[p][c] * b[c]).
struct EltwiseOp {
  enum class Kind : uint8_t { kAdd, kMul };
  std::vector<std::string> nodes;
  Kind kind = Kind::kAdd;
  TensorId a, b, output;
  isa::RequantParams requant;
  bool broadcast_b = false;
};

// out = clamp(in, lo, hi) on the ints, at the input's scale: Relu (lo 0) the NPU's eltwise
// does without a table.
struct ClampOp {
  std::vector<std::string> nodes;
  TensorId input, output;
  int8_t lo = -128, hi = 127;
};

// out[i] = table[uint8(in[i]) ^ 0x80], i.e. table[q + 128]: any unary function of one value
// (Sigmoid, HardSwish, LeakyRelu, ...) or a rescale from one scale to another.
struct LutOp {
  std::vector<std::string> nodes;  // empty for a rescale the compiler inserted
  std::string function;            // what the table computes, for reports ("HardSigmoid*Mul", "rescale")
  TensorId input, output;
  std::array<int8_t, 256> table{};
  // Per channel group (HWC images whose input or output has channel_scales): channels
  // [c0, c1) use `table` of their group instead; the groups cover every channel in order.
  struct ChannelTable {
    int64_t c0 = 0, c1 = 0;
    std::array<int8_t, 256> table{};
  };
  std::vector<ChannelTable> channel_tables{};
};

// Max or average pooling of an HWC image; the output has the input's scale (no requant).
// Max ignores padded positions; avg divides the sum by the in-image count, or by
// kernel_h*kernel_w when count_pad, rounding half away from zero (isa::round_div_away).
// GlobalAveragePool is avg with the window = the image.
struct PoolOp {
  enum class Kind : uint8_t { kMax, kAvg };
  std::vector<std::string> nodes;
  Kind kind = Kind::kMax;
  TensorId input, output;
  Window window;                   // dilations 1
  bool count_pad = false;
};

// Concatenation along `axis` (of the model's shape); every input has the output's layout and
// scale, so it is a strided copy (concat_chunks() gives the byte pattern).
struct ConcatOp {
  std::vector<std::string> nodes;
  std::vector<TensorId> inputs;
  TensorId output;
  int64_t axis = 1;
};

// Reshape/Flatten/Squeeze/Unsqueeze that do not move bytes in the storage layout: the output
// is the input's bytes (same scale) under another shape; it lives as long as either is used.
struct AliasOp {
  std::vector<std::string> nodes;
  TensorId input, output;
};

// Model nodes the NPU cannot run, executed by the reference interpreter in float32: each int8
// input is dequantized and converted to the ONNX layout, `graph` runs, and each output is
// quantized to its tensor's scale and layout (or stays float32 when its tensor is kOnnx).
struct CpuStepOp {
  std::vector<std::string> nodes;
  model::Graph graph;              // the nodes as a shape-inferred float graph (extract_subgraph)
  std::vector<TensorId> inputs;    // one per graph.inputs, same order
  std::vector<TensorId> outputs;   // one per graph.outputs, same order
};

using QOp = std::variant<ConvOp, GemmOp, EltwiseOp, ClampOp, LutOp, PoolOp, ConcatOp, AliasOp, CpuStepOp>;

enum class Target : uint8_t { kNpu, kCpu };

// A maximal run of NPU ops, or one CPU step, in schedule order: ops [first, end).
// inputs: tensors its ops read that an earlier segment (or the model input) produced;
// outputs: tensors it produces that a later segment reads or that are model outputs.
struct Segment {
  Target target = Target::kNpu;
  uint32_t first = 0, end = 0;
  std::vector<TensorId> inputs, outputs;
};

// One model input or output and its tensor. Inputs: the user's float32 ONNX tensor is
// quantized (nearest, ties to even, saturating) and laid out at the entry when the tensor is
// int8. Outputs: dequantized and laid out as ONNX at the exit when the tensor is int8.
struct GraphIO {
  std::string name;
  TensorId tensor;
};

struct QGraph {
  std::string source;              // model file, for messages
  std::vector<QTensor> tensors;
  std::vector<QOp> ops;            // in schedule order after schedule()
  std::vector<GraphIO> inputs, outputs;
  std::vector<Segment> segments;   // filled by schedule()

  const QTensor& tensor(TensorId id) const;
  QTensor& tensor(TensorId id);
  // The tensor named `name`; an invalid id when there is none.
  TensorId find(std::string_view name) const;
  TensorId add_tensor(QTensor t);  // names must be unique (npuforge::Error otherwise)
};

// Per-op queries, for every kind.
std::vector<TensorId> op_inputs(const QOp& op);
std::vector<TensorId> op_outputs(const QOp& op);
const std::vector<std::string>& op_nodes(const QOp& op);
std::string_view op_kind(const QOp& op);  // "conv", "gemm", "add", "mul", "clamp", "lut", "maxpool", ...
Target op_target(const QOp& op);          // kCpu for CpuStepOp only

// Group g's weights as a contiguous [k][cout_per_group] matrix (one GEMM's b operand).
std::vector<int8_t> group_weights(const ConvOp& conv, int64_t g);

// A concat in storage order: `outer` repetitions of, for each input i, chunk_bytes[i]
// contiguous bytes (the output row is their sum).
struct ConcatChunks {
  int64_t outer = 1;
  std::vector<int64_t> chunk_bytes;
};
ConcatChunks concat_chunks(const QGraph& g, const ConcatOp& op);

// Checks the invariants above (ids in range, shapes, layouts, scales that must agree, table
// and weight sizes, requant fields within the ISA's limits, a producer before every reader in
// ops order, segment coverage); npuforge::Error naming the op and what is wrong.
void validate(const QGraph& g);

}  // namespace npuforge::compiler
