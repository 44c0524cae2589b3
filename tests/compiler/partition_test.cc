// Partition (docs/compiler.md section 6): which nodes the NPU runs, fused how, and why the others fall back to the CPU.
#include "compiler/partition.h"

#include <gtest/gtest.h>

#include <fmt/core.h>

#include "compiler/cleanup.h"
#include "isa/isa.h"
#include "test_util.h"

namespace npuforge::compiler {
namespace {

using testing::yaml_graph;

struct Found {
  const Group* group = nullptr;
  std::vector<std::string> nodes;
};

// The group holding node `name`.
Found group_of(const model::Graph& g, const Partition& p, const std::string& name) {
  Found f;
  for (const Group& grp : p.groups)
    for (size_t i : grp.nodes)
      if (g.nodes[i].name == name) {
        f.group = &grp;
        for (size_t j : grp.nodes) f.nodes.push_back(g.nodes[j].name);
        return f;
      }
  ADD_FAILURE() << "no group holds node " << name;
  return f;
}

Partition part(const model::Graph& g) { return partition(g); }

const char* kHeader = R"(
opset: 13
inputs: [{name: x, shape: [1, 4, 16, 16]}]
)";

TEST(Partition, ConvWithFusedReluAndClip) {
  const model::Graph g = yaml_graph(std::string(kHeader) + R"(
outputs: [{name: y}, {name: z}]
constants:
  - {name: w, shape: [4, 4, 3, 3], random: {seed: 1}}
  - {name: lo, shape: [], values: [0]}
  - {name: hi, shape: [], values: [6]}
nodes:
  - {name: c1, op: Conv, inputs: [x, w], outputs: [a], attributes: {pads: [1, 1, 1, 1]}}
  - {name: r1, op: Relu, inputs: [a], outputs: [y]}
  - {name: c2, op: Conv, inputs: [x, w], outputs: [b], attributes: {pads: [0, 1, 2, 1], strides: [2, 1]}}
  - {name: clip, op: Clip, inputs: [b, lo, hi], outputs: [z]}
)");
  const Partition p = part(g);
  Found f = group_of(g, p, "c1");
  EXPECT_EQ(f.group->kind, GroupKind::kConv);
  EXPECT_EQ(f.nodes, (std::vector<std::string>{"c1", "r1"}));
  EXPECT_TRUE(f.group->relu);
  EXPECT_EQ(f.group->output, "y");
  f = group_of(g, p, "c2");
  EXPECT_EQ(f.nodes, (std::vector<std::string>{"c2", "clip"}));
  EXPECT_TRUE(f.group->relu);
  EXPECT_EQ(f.group->clip_hi, 6.0f);
  std::string why;
  const Window w = *npu_window(g, g.nodes[2], NpuLimits{}, &why);
  EXPECT_EQ(w.stride_h, 2);
  EXPECT_EQ(w.pad_top, 0);
  EXPECT_EQ(w.pad_left, 1);
  EXPECT_EQ(w.pad_bottom, 2);
  EXPECT_EQ(w.pad_right, 1);
}

TEST(Partition, ConvBeyondTheFieldLimitsGoesToTheCpu) {
  struct Case { const char* attrs; const char* weight; const char* reason; };
  for (const Case& c : {Case{"{}", "[4, 4, 16, 1]", "kernel_h 16 above 15"},
                        Case{"{strides: [1, 16]}", "[4, 4, 1, 1]", "stride_w 16 above 15"},
                        Case{"{dilations: [8, 1]}", "[4, 4, 2, 1]", "dilation_h 8 above 7"},
                        Case{"{pads: [0, 16, 0, 0]}", "[4, 4, 1, 1]", "pad on w (16, 0) above 15"}}) {
    const model::Graph g = yaml_graph(std::string(kHeader) + "outputs: [{name: y}]\nconstants:\n  - {name: w, shape: " +
                                      c.weight + ", random: {seed: 1}}\nnodes:\n  - {name: c, op: Conv, inputs: [x, w], outputs: [y], attributes: " +
                                      c.attrs + "}\n");
    const Partition p = part(g);
    const Found f = group_of(g, p, "c");
    EXPECT_EQ(f.group->kind, GroupKind::kCpu) << c.reason;
    EXPECT_EQ(f.group->reason, c.reason);
  }
}

// IM2COL takes an image's width and a group's channels whole, POOL an image's width: past
// their fields a node stays on the CPU (the back end would refuse it); a 1x1 conv of stride
// 1 reads the image directly (no IM2COL) and stays on the NPU.
TEST(Partition, ImageWidthAndChannelsBeyondTheFieldsGoToTheCpu) {
  const model::Graph g = yaml_graph(R"(
opset: 13
inputs: [{name: wide, shape: [1, 4, 2, 4100]}, {name: deep, shape: [1, 4100, 2, 2]}]
outputs: [{name: a}, {name: b}, {name: c}, {name: d}]
constants:
  - {name: w3, shape: [4, 4, 3, 3], random: {seed: 1}}
  - {name: w1, shape: [4, 4, 1, 1], random: {seed: 2}}
  - {name: wd, shape: [2, 4100, 1, 2], random: {seed: 3}}
nodes:
  - {name: conv3, op: Conv, inputs: [wide, w3], outputs: [a], attributes: {pads: [1, 1, 1, 1]}}
  - {name: conv1, op: Conv, inputs: [wide, w1], outputs: [b]}
  - {name: deepconv, op: Conv, inputs: [deep, wd], outputs: [c]}
  - {name: pool, op: MaxPool, inputs: [wide], outputs: [d], attributes: {kernel_shape: [2, 2]}}
)");
  const Partition p = part(g);
  const isa::Isa& isa = isa::builtin_isa();
  EXPECT_EQ(group_of(g, p, "conv3").group->reason,
            fmt::format("image 4100 wide: IM2COL w above {}", isa.max_value("im2col", "w")));
  EXPECT_EQ(group_of(g, p, "conv1").group->kind, GroupKind::kConv);
  EXPECT_EQ(group_of(g, p, "deepconv").group->reason,
            fmt::format("4100 input channels per group: IM2COL c above {}", isa.max_value("im2col", "c")));
  EXPECT_EQ(group_of(g, p, "pool").group->reason,
            fmt::format("MaxPool over an image 4100 wide: POOL w above {}", isa.max_value("pool", "w")));
}

// The limits are the ISA's: an ISA with 3-bit im2col kernel fields sends an 8-tap kernel to
// the CPU that the built-in ISA's 4-bit fields take.
TEST(Partition, LimitsComeFromTheIsaFields) {
  const NpuLimits builtin;
  EXPECT_EQ(builtin.max_kernel, 15);
  EXPECT_EQ(builtin.max_pool_window, 255);
  EXPECT_EQ(builtin.max_gemm_dim, 65535);
  std::string yaml(isa::builtin_isa_yaml());
  for (const auto& [from, to] : {std::pair<std::string, std::string>{"{name: kh, bits: [103, 100]", "{name: kh, bits: [102, 100]"},
                                 {"{name: kw, bits: [107, 104]", "{name: kw, bits: [106, 104]"}})
    yaml.replace(yaml.find(from), from.size(), to);
  const NpuLimits narrow(isa::Isa::load_string(yaml, "narrow.yaml"));
  EXPECT_EQ(narrow.max_kernel, 7);
  const model::Graph g = yaml_graph(std::string(kHeader) +
                                    "outputs: [{name: y}]\nconstants:\n  - {name: w, shape: [4, 4, 8, 1], random: {seed: "
                                    "1}}\nnodes:\n  - {name: c, op: Conv, inputs: [x, w], outputs: [y]}\n");
  EXPECT_EQ(group_of(g, partition(g, builtin), "c").group->kind, GroupKind::kConv);
  const Partition p = partition(g, narrow);
  EXPECT_EQ(group_of(g, p, "c").group->reason, "kernel_h 8 above 7");
}

TEST(Partition, DilationSevenAndAsymmetricSamePadsFit) {
  const model::Graph g = yaml_graph(std::string(kHeader) + R"(
outputs: [{name: y}, {name: z}]
constants:
  - {name: w, shape: [4, 4, 3, 2], random: {seed: 1}}
nodes:
  - {name: a, op: Conv, inputs: [x, w], outputs: [y], attributes: {dilations: [7, 1]}}
  - {name: b, op: Conv, inputs: [x, w], outputs: [z], attributes: {auto_pad: SAME_UPPER, strides: [2, 2]}}
)");
  const Partition p = part(g);
  EXPECT_EQ(group_of(g, p, "a").group->kind, GroupKind::kConv);
  EXPECT_EQ(group_of(g, p, "b").group->kind, GroupKind::kConv);
  std::string why;
  const Window w = *npu_window(g, g.nodes[1], NpuLimits{}, &why);
  // SAME_UPPER, in 16, stride 2, kernel 3x2: out 8; total pad (7*2+3-16)=1 rows, 0 cols.
  EXPECT_EQ(w.pad_top, 0);
  EXPECT_EQ(w.pad_bottom, 1);
  EXPECT_EQ(w.pad_left, 0);
  EXPECT_EQ(w.pad_right, 0);
}

TEST(Partition, ElementwiseRegionsBecomeOneLut) {
  // Hard-swish written out: x * clip(x + 3, 0, 6) / 6, then a LeakyRelu of a Sigmoid.
  const model::Graph g = yaml_graph(std::string(kHeader) + R"(
outputs: [{name: y}, {name: z}]
constants:
  - {name: three, shape: [], values: [3]}
  - {name: six, shape: [], values: [6]}
  - {name: zero, shape: [], values: [0]}
  - {name: w, shape: [4, 4, 1, 1], random: {seed: 1}}
nodes:
  - {name: conv, op: Conv, inputs: [x, w], outputs: [x1]}
  - {name: add, op: Add, inputs: [x1, three], outputs: [a]}
  - {name: clip, op: Clip, inputs: [a, zero, six], outputs: [b]}
  - {name: mul, op: Mul, inputs: [x1, b], outputs: [c]}
  - {name: div, op: Div, inputs: [c, six], outputs: [y]}
  - {name: sig, op: Sigmoid, inputs: [y], outputs: [s]}
  - {name: leaky, op: LeakyRelu, inputs: [s], outputs: [z]}
)");
  const Partition p = part(g);
  Found f = group_of(g, p, "div");
  EXPECT_EQ(f.group->kind, GroupKind::kLut);
  EXPECT_EQ(f.group->input, "x1");
  EXPECT_EQ(f.nodes, (std::vector<std::string>{"add", "clip", "mul", "div"}));
  // y is a model output and also read by Sigmoid: z gets its own table, also from x1.
  f = group_of(g, p, "leaky");
  EXPECT_EQ(f.group->input, "x1");
  EXPECT_EQ(f.nodes, (std::vector<std::string>{"add", "clip", "mul", "div", "sig", "leaky"}));
}

TEST(Partition, CheapOpsBetweenCpuWorkGoToTheCpu) {
  const model::Graph g = yaml_graph(std::string(kHeader) + R"(
outputs: [{name: y}]
nodes:
  - {name: sig, op: Sigmoid, inputs: [x], outputs: [s]}
  - {name: soft, op: Softmax, inputs: [s], outputs: [t]}
  - {name: tanh, op: Tanh, inputs: [t], outputs: [y]}
)");
  const Partition p = part(g);
  for (const char* n : {"sig", "soft", "tanh"}) EXPECT_EQ(group_of(g, p, n).group->kind, GroupKind::kCpu) << n;
}

TEST(Partition, ALoneReluIsAClampAndPerChannelConstantsAreAConv) {
  const model::Graph g = yaml_graph(std::string(kHeader) + R"(
outputs: [{name: y}]
constants:
  - {name: k, shape: [4, 1, 1], values: [1, 2, 3, 4]}
  - {name: w, shape: [4, 4, 1, 1], random: {seed: 1}}
nodes:
  - {name: pool, op: MaxPool, inputs: [x], outputs: [p], attributes: {kernel_shape: [2, 2], strides: [2, 2]}}
  - {name: relu, op: Relu, inputs: [p], outputs: [r]}
  - {name: scale, op: Mul, inputs: [r, k], outputs: [m]}
  - {name: conv, op: Conv, inputs: [m, w], outputs: [y]}
)");
  const Partition p = part(g);
  EXPECT_EQ(group_of(g, p, "pool").group->kind, GroupKind::kMaxPool);
  EXPECT_EQ(group_of(g, p, "relu").group->kind, GroupKind::kClamp);
  EXPECT_EQ(group_of(g, p, "scale").group->kind, GroupKind::kChannelAffine);
}

TEST(Partition, WhatTheNpuLacksGoesToTheCpuWithTheReason) {
  const model::Graph g = yaml_graph(R"(
opset: 13
inputs: [{name: x, shape: [1, 4, 8, 8]}, {name: v, shape: [1, 4, 1, 1]}, {name: m, shape: [8, 8]}]
outputs: [{name: s}, {name: b}, {name: mm}, {name: mx}, {name: t}, {name: c}]
constants:
  - {name: w, shape: [4, 4, 1, 1], random: {seed: 1}}
nodes:
  - {name: conv, op: Conv, inputs: [x, w], outputs: [x2]}
  - {name: softmax, op: Softmax, inputs: [x2], outputs: [s], attributes: {axis: 1}}
  - {name: bcast, op: Add, inputs: [x2, v], outputs: [b]}
  - {name: mm, op: MatMul, inputs: [m, m], outputs: [mm]}
  - {name: max, op: Max, inputs: [x2, x], outputs: [mx]}
  - {name: tr, op: Transpose, inputs: [x2], outputs: [t], attributes: {perm: [0, 2, 3, 1]}}
  - {name: conv2, op: Conv, inputs: [x2, w], outputs: [c]}
)");
  const Partition p = part(g);
  EXPECT_EQ(group_of(g, p, "softmax").group->reason, "Softmax: no NPU instruction");
  EXPECT_EQ(group_of(g, p, "bcast").group->reason, "Add broadcasting 1x4x8x8 and 1x4x1x1");
  EXPECT_EQ(group_of(g, p, "mm").group->reason, "MatMul of two activations (B is computed at run time)");
  EXPECT_EQ(group_of(g, p, "max").group->reason, "Max: no NPU instruction");
  EXPECT_EQ(group_of(g, p, "tr").group->reason, "Transpose: no NPU instruction");
  for (const char* n : {"softmax", "bcast", "mm", "max", "tr"}) EXPECT_EQ(group_of(g, p, n).group->kind, GroupKind::kCpu) << n;
  EXPECT_EQ(group_of(g, p, "conv2").group->kind, GroupKind::kConv);
}

TEST(Partition, ReshapesThatMoveBytesInHwcGoToTheCpu) {
  const model::Graph g = yaml_graph(R"(
inputs: [{name: x, shape: [1, 4, 3, 3]}]
outputs: [{name: y}, {name: z}]
constants:
  - {name: w, shape: [4, 4, 1, 1], random: {seed: 1}}
  - {name: fc, shape: [4, 2], random: {seed: 2}}
nodes:
  - {name: conv, op: Conv, inputs: [x, w], outputs: [c]}
  - {name: flat, op: Flatten, inputs: [c], outputs: [f]}
  - {name: gap, op: GlobalAveragePool, inputs: [c], outputs: [p]}
  - {name: flat2, op: Flatten, inputs: [p], outputs: [f2]}
  - {name: gemm, op: MatMul, inputs: [f2, fc], outputs: [y]}
  - {name: relu, op: Relu, inputs: [f], outputs: [z]}
)");
  const Partition p = part(g);
  EXPECT_EQ(group_of(g, p, "flat").group->kind, GroupKind::kCpu);
  EXPECT_EQ(group_of(g, p, "flat").group->reason, "Flatten 1x4x3x3 -> 1x36 moves bytes in the HWC layout");
  EXPECT_EQ(group_of(g, p, "gap").group->kind, GroupKind::kAvgPool);
  EXPECT_EQ(group_of(g, p, "flat2").group->kind, GroupKind::kAlias);
  EXPECT_EQ(group_of(g, p, "gemm").group->kind, GroupKind::kGemm);
  // The Relu reads the CPU's output and feeds only the model output: it goes to the CPU too.
  EXPECT_EQ(group_of(g, p, "relu").group->kind, GroupKind::kCpu);
  EXPECT_NE(group_of(g, p, "relu").group->reason.find("between CPU work only"), std::string::npos);
}

TEST(Partition, MatMulWithBiasAddAndActivation) {
  const model::Graph g = yaml_graph(R"(
inputs: [{name: x, shape: [1, 5, 8]}]
outputs: [{name: y}]
constants:
  - {name: b, shape: [8, 3], random: {seed: 1}}
  - {name: bias, shape: [3], random: {seed: 2}}
nodes:
  - {name: mm, op: MatMul, inputs: [x, b], outputs: [m]}
  - {name: add, op: Add, inputs: [bias, m], outputs: [a]}
  - {name: relu, op: Relu, inputs: [a], outputs: [y]}
)");
  const Partition p = part(g);
  const Found f = group_of(g, p, "mm");
  EXPECT_EQ(f.group->kind, GroupKind::kGemm);
  EXPECT_EQ(f.nodes, (std::vector<std::string>{"mm", "add", "relu"}));
  EXPECT_EQ(f.group->reason, "gemm m=5 k=8 n=3, bias Add fused, Relu fused");
}

TEST(Partition, PoolsWithinAndBeyondLimits) {
  const model::Graph g = yaml_graph(R"(
inputs: [{name: x, shape: [1, 2, 20, 300]}]
outputs: [{name: a}, {name: b}, {name: c}, {name: d}]
nodes:
  - {name: avg, op: AveragePool, inputs: [x], outputs: [a], attributes: {kernel_shape: [3, 3], pads: [1, 1, 1, 1], count_include_pad: 1}}
  - {name: ceil, op: MaxPool, inputs: [x], outputs: [b], attributes: {kernel_shape: [3, 3], strides: [2, 2], ceil_mode: 1}}
  - {name: gap, op: GlobalAveragePool, inputs: [x], outputs: [c]}
  - {name: big, op: MaxPool, inputs: [x], outputs: [d], attributes: {kernel_shape: [1, 256]}}
)");
  const Partition p = part(g);
  EXPECT_EQ(group_of(g, p, "avg").group->kind, GroupKind::kAvgPool);
  EXPECT_EQ(group_of(g, p, "ceil").group->kind, GroupKind::kMaxPool);
  std::string why;
  const Window w = *npu_window(g, g.nodes[1], NpuLimits{}, &why);
  EXPECT_EQ(w.pad_bottom, 1);  // ceil_mode: the last window reaches one row past the image
  EXPECT_EQ(group_of(g, p, "gap").group->kind, GroupKind::kCpu);  // 300 columns: window above 255
  EXPECT_EQ(group_of(g, p, "gap").group->reason, "GlobalAveragePool over 20x300: window above 255");
  EXPECT_EQ(group_of(g, p, "big").group->reason, "kernel_w 256 above 255");
}

TEST(Partition, GroupsAreInDependencyOrder) {
  const model::Graph g = yaml_graph(std::string(kHeader) + R"(
outputs: [{name: y}]
constants:
  - {name: w, shape: [4, 4, 1, 1], random: {seed: 1}}
nodes:
  - {name: c1, op: Conv, inputs: [x, w], outputs: [a]}
  - {name: s, op: Sigmoid, inputs: [a], outputs: [b]}
  - {name: c2, op: Conv, inputs: [b, w], outputs: [c]}
  - {name: add, op: Add, inputs: [c, a], outputs: [y]}
)");
  const Partition p = part(g);
  std::set<std::string> seen(g.inputs.begin(), g.inputs.end());
  for (const Group& grp : p.groups) {
    for (size_t i : grp.nodes)
      for (const std::string& in : g.nodes[i].inputs)
        if (!g.is_constant(in) && in != grp.input) {
          bool inside = false;
          for (size_t j : grp.nodes)
            for (const std::string& o : g.nodes[j].outputs) inside = inside || o == in;
          EXPECT_TRUE(inside || seen.count(in)) << in;
        }
    seen.insert(grp.output);
  }
}

}  // namespace
}  // namespace npuforge::compiler
