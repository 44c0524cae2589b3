// compile_front end to end on the repository's example model, and its errors.
#include "compiler/front.h"

#include <gtest/gtest.h>

#include "compiler/qref.h"
#include "model/load.h"
#include "test_util.h"

namespace npuforge::compiler {
namespace {

model::Graph small_convnet() {
  return model::load_model(std::string(NPUFORGE_SOURCE_DIR) + "/configs/models/small_convnet.yaml", front_load_options());
}

TEST(Front, CompilesTheExampleModel) {
  const model::Graph g = small_convnet();
  const CompileFront f = compile_front(g);
  validate(f.graph);
  const FrontReport& r = f.report;
  EXPECT_FALSE(r.pre_quantized);
  EXPECT_NE(r.calibration.find("seeded random"), std::string::npos);
  EXPECT_EQ(r.cleanup.folded, std::vector<std::string>{"bn1 -> conv1"});
  // Softmax is the only CPU work, at the end: one NPU segment, one CPU segment.
  EXPECT_EQ(r.cpu_steps, 1u);
  ASSERT_EQ(f.graph.segments.size(), 2u);
  EXPECT_EQ(f.graph.segments[1].target, Target::kCpu);
  bool hswish = false;
  for (const OpChoice& c : r.choices) hswish = hswish || (c.kind == "lut" && c.ops == "HardSigmoid+Mul");
  EXPECT_TRUE(hswish) << format_report(r);
  EXPECT_EQ(r.choices.back().reason, "Softmax: no NPU instruction");
  const std::string text = format_report(r);
  EXPECT_NE(text.find("CPU cpu"), std::string::npos) << text;
  // Every int8 tensor has a scale in the report, and the outputs stay close to float.
  for (const QTensor& t : f.graph.tensors) {
    if (t.is_int8() && t.name.find('~') == std::string::npos) {
      EXPECT_TRUE(r.scales.count(t.name)) << t.name;
    }
  }
  for (uint64_t seed : {11u, 12u}) {
    const model::TensorMap in = testing::random_inputs(g, seed);
    const model::Tensor want = model::run_graph(g, in).at("probs");
    const model::Tensor got = run_qref(f.graph, in).outputs.at("probs");
    EXPECT_GT(testing::cosine(got, want), 0.99);
  }
}

TEST(Front, CompilingIsReproducible) {
  const model::Graph g = small_convnet();
  const CompileFront a = compile_front(g), b = compile_front(g);
  ASSERT_EQ(a.graph.ops.size(), b.graph.ops.size());
  for (size_t i = 0; i < a.graph.ops.size(); ++i)
    if (const auto* c = std::get_if<ConvOp>(&a.graph.ops[i])) {
      const auto& d = std::get<ConvOp>(b.graph.ops[i]);
      EXPECT_EQ(c->weights, d.weights);
      EXPECT_EQ(c->bias, d.bias);
    }
  for (size_t i = 0; i < a.graph.tensors.size(); ++i) EXPECT_EQ(a.graph.tensors[i].scale, b.graph.tensors[i].scale);
}

TEST(Front, BatchAboveOneIsAnError) {
  model::Graph g = testing::yaml_graph(R"(
inputs: [{name: x, shape: [2, 3, 4, 4]}]
outputs: [{name: y}]
nodes:
  - {op: Relu, inputs: [x], outputs: [y]}
)");
  try {
    compile_front(g);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("batch 2"), std::string::npos) << e.what();
  }
}

TEST(Front, AnOpNoBackEndRunsIsAnErrorNamingTheNode) {
  model::Graph g = testing::yaml_graph(R"(
inputs: [{name: x, shape: [1, 3]}]
outputs: [{name: y}]
nodes:
  - {name: odd, op: Relu, inputs: [x], outputs: [y]}
)");
  g.nodes[0].op_type = "NoSuchOp";
  try {
    compile_front(g);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("node 'odd' (NoSuchOp)"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace npuforge::compiler
