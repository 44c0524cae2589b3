// Schedule (docs/compiler.md section 8): breadth-first order, CPU steps merged, segments, tensor compaction.
#include "compiler/schedule.h"

#include <gtest/gtest.h>

#include "compiler/qref.h"
#include "test_util.h"

namespace npuforge::compiler {
namespace {

using testing::yaml_graph;

// Two branches from x: three Relu-free convs on one, Softmax, Tanh... on the CPU on the other.
const char* kBranches = R"(
opset: 13
inputs: [{name: x, shape: [1, 2, 4, 4]}]
outputs: [{name: y}]
constants:
  - {name: w, shape: [2, 2, 1, 1], random: {seed: 1}}
nodes:
  - {name: a1, op: Conv, inputs: [x, w], outputs: [a1o]}
  - {name: a2, op: Conv, inputs: [a1o, w], outputs: [a2o]}
  - {name: a3, op: Conv, inputs: [a2o, w], outputs: [a3o]}
  - {name: b1, op: Conv, inputs: [x, w], outputs: [b1o]}
  - {name: b2, op: Softmax, inputs: [b1o], outputs: [b2o], attributes: {axis: 1}}
  - {name: b3, op: Transpose, inputs: [b2o], outputs: [b3o], attributes: {perm: [0, 1, 3, 2]}}
  - {name: b4, op: Conv, inputs: [b3o, w], outputs: [b4o]}
  - {name: add, op: Add, inputs: [a3o, b4o], outputs: [y]}
)";

TEST(Schedule, BreadthFirstMergesCpuStepsAndSegments) {
  const model::Graph g = yaml_graph(kBranches);
  FrontOptions o;
  o.calibration.random_samples = 1;
  const CompileFront f = compile_front(g, o);
  const QGraph& q = f.graph;
  std::vector<std::string> order;
  for (const QOp& op : q.ops) order.push_back(op_nodes(op).front());
  // Levels: {a1, b1}, {a2, softmax+transpose (one step)}, {a3, b4}... NPU first within a level
  // when the NPU ran last, and the two CPU nodes ran as one step.
  EXPECT_EQ(order, (std::vector<std::string>{"a1", "b1", "a2", "b2", "a3", "b4", "add"}));
  const auto& step = std::get<CpuStepOp>(q.ops[3]);
  EXPECT_EQ(step.nodes, (std::vector<std::string>{"b2", "b3"}));
  EXPECT_EQ(step.graph.nodes.size(), 2u);
  ASSERT_EQ(step.outputs.size(), 1u);
  EXPECT_EQ(q.tensor(step.outputs[0]).name, "b3o");
  EXPECT_FALSE(q.find("b2o").valid());  // internal to the merged step: compacted away
  ASSERT_EQ(q.segments.size(), 3u);
  EXPECT_EQ(q.segments[0].target, Target::kNpu);
  EXPECT_EQ(q.segments[1].target, Target::kCpu);
  EXPECT_EQ(q.segments[2].target, Target::kNpu);
  EXPECT_EQ(q.segments[0].end, 3u);
  // Segment 0 hands b1o to the CPU and a2o to segment 2.
  std::vector<std::string> outs;
  for (TensorId id : q.segments[0].outputs) outs.push_back(q.tensor(id).name);
  EXPECT_EQ(outs, (std::vector<std::string>{"b1o", "a2o"}));
  std::vector<std::string> ins;
  for (TensorId id : q.segments[2].inputs) ins.push_back(q.tensor(id).name);
  EXPECT_EQ(ins, (std::vector<std::string>{"a2o", "b3o"}));
  validate(q);
  // The scheduled graph computes what the float graph computes, roughly.
  const model::TensorMap in = testing::random_inputs(g, 5);
  EXPECT_GT(testing::cosine(run_qref(q, in).outputs.at("y"), model::run_graph(g, in).at("y")), 0.99);
}

TEST(Schedule, CompactRenumbersEveryReference) {
  QGraph g;
  g.source = "t";
  const auto t = [&](const char* n) {
    return g.add_tensor({n, {1, 4}, Layout::kRowMajor, model::DType::kInt8, 1.0f});
  };
  const TensorId unused = t("unused");
  const TensorId x = t("x"), y = t("y");
  (void)unused;
  g.inputs = {{"x", x}};
  g.ops.push_back(ClampOp{{"r"}, x, y, 0, 127});
  g.outputs = {{"y", y}};
  compact_tensors(g);
  ASSERT_EQ(g.tensors.size(), 2u);
  EXPECT_EQ(g.tensors[0].name, "x");
  EXPECT_EQ(std::get<ClampOp>(g.ops[0]).output.value, 1u);
  EXPECT_EQ(g.outputs[0].tensor.value, 1u);
  compute_segments(g);
  validate(g);
}

}  // namespace
}  // namespace npuforge::compiler
