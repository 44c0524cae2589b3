#pragma once
// The partition (docs/compiler.md section 6): which model nodes the NPU runs, and as what. Works on the cleaned float
// graph; each node ends in one group (a Lut region's nodes may be in several), and every group
// is either one NPU operation of ISA v2 (with its fused nodes) or one node for the CPU, with
// the reason. NPU groups:
//  - conv: 2-D Conv, any groups, constant weights, within the IM2COL/GEMM field limits; a
//    following Relu, or Clip(0, hi), that is the conv's only reader is fused;
//  - gemm: MatMul/Gemm with a constant 2-D B (rows = everything but the last axis), plus a
//    following Add of a per-column constant (MatMul) and Relu/Clip(0, hi) as for conv;
//  - add / mul: two activations of equal shape;
//  - channel_affine: Mul/Add/Sub/Div of an image by a per-channel constant (a 1x1 depthwise conv);
//  - lut: a region of element-wise ops whose only non-constant input is one value x (scalar
//    constants, e.g. HardSwish as x * HardSigmoid(x)), one table per value leaving the region;
//    clamp: the region is a single Relu;
//  - maxpool / avgpool: MaxPool, AveragePool, GlobalAveragePool, GlobalMaxPool within limits;
//  - concat: Concat of activations of one rank;
//  - alias: Reshape/Flatten/Squeeze/Unsqueeze whose bytes stay in place in the NPU layout.
// Cheap NPU groups (not conv/gemm/pools) between CPU work only (every input from the CPU or the
// model input, every reader on the CPU or a model output) go to the CPU too: quantizing for
// them would cost accuracy and two boundaries for no gain.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "compiler/npu_limits.h"
#include "compiler/qgraph.h"
#include "model/ir.h"

namespace npuforge::compiler {

enum class GroupKind : uint8_t {
  kConv, kGemm, kAdd, kMul, kChannelAffine, kLut, kClamp, kMaxPool, kAvgPool, kConcat, kAlias, kCpu
};
std::string_view group_kind_name(GroupKind k);

struct Group {
  GroupKind kind = GroupKind::kCpu;
  std::vector<size_t> nodes;  // indices into graph.nodes, ascending; nodes[0] is the main node
  std::string input;          // lut/clamp: the region's input value
  std::string output;         // the value the group produces ("" for CPU: the node's outputs)
  std::string reason;         // what it becomes (NPU) or what the NPU lacks (CPU)
  bool relu = false;          // conv/gemm: a fused Relu or Clip(0, .)
  float clip_hi = 0;          // conv/gemm: > 0 when Clip(0, clip_hi) is fused
  Target target() const { return kind == GroupKind::kCpu ? Target::kCpu : Target::kNpu; }
};

// Groups in an order where every group's inputs come from earlier groups (or the model).
struct Partition {
  std::vector<Group> groups;
};

Partition partition(const model::Graph& graph, const NpuLimits& limits = {});

}  // namespace npuforge::compiler
