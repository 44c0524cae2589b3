// The YAML graph format: every constant form, attribute kinds, and located errors.
#include <gtest/gtest.h>

#include "model/infer.h"
#include "model/interpreter.h"
#include "model/npy.h"
#include "model/yaml_import.h"
#include "onnx_builder.h"
#include "test_ops.h"
#include "util/error.h"
#include "util/file_io.h"
#include "util/rng.h"

namespace npuforge::model {
namespace {

using testing::floats;

#define EXPECT_CONTAINS(text, part) EXPECT_NE(std::string(text).find(part), std::string::npos) << (text)

Graph parse(const std::string& text) { return import_yaml_string(text, "g.yaml", testing::temp_dir()); }

std::string error_of(const std::string& text) {
  try {
    parse(text);
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

const char* kGraph = R"(name: tiny
opset: 13
inputs:
  - {name: x, dtype: float32, shape: [batch, 4]}
outputs:
  - {name: y}
constants:
  - {name: b, dtype: float32, shape: [4], values: [1, -1, 0.5, -3]}
  - {name: two, shape: [2, 2], values: [[1, 2], [3, 4]]}
  - {name: r, dtype: int8, shape: [3, 5], random: {seed: 42}}
  - {name: f, dtype: int64, shape: [2], fill: 7}
  - {name: s, values: 2.5}
nodes:
  - {name: add, op: Add, inputs: [x, b], outputs: [t]}
  - op: Relu
    domain: test.attributes   # no ONNX schema: any attribute name, every kind of value
    inputs: [t]
    outputs: [y]
    attributes: {i: 3, f: 0.5, e: 1e-5, s: hello, q: "7", is: [1, 2], fs: [1, 2.5], ss: [a, b],
                 forced: {floats: [1, 2]}, tens: {tensor: {dtype: int64, shape: [2], values: [3, 4]}}}
)";

TEST(YamlImport, ReadsInputsConstantsNodesAndAttributes) {
  const Graph g = parse(kGraph);
  EXPECT_EQ(g.name, "tiny");
  EXPECT_EQ(g.opset, 13);
  EXPECT_EQ(g.inputs, std::vector<std::string>{"x"});
  EXPECT_EQ(g.find_value("x")->shape, (Shape{kUnknownDim, 4}));
  EXPECT_EQ(g.find_value("x")->dim_names[0], "batch");
  EXPECT_EQ(*g.find_constant("b"), floats({4}, {1, -1, 0.5f, -3}));
  EXPECT_EQ(*g.find_constant("two"), floats({2, 2}, {1, 2, 3, 4}));
  EXPECT_EQ(*g.find_constant("f"), testing::int64s({2}, {7, 7}));
  EXPECT_EQ(*g.find_constant("s"), Tensor::scalar<float>(2.5f));
  const Tensor& r = *g.find_constant("r");
  EXPECT_EQ(r.dtype(), DType::kInt8);
  EXPECT_EQ(r.shape(), (Shape{3, 5}));
  ASSERT_EQ(g.nodes.size(), 2u);
  const Node& relu = g.nodes[1];
  EXPECT_EQ(relu.name, "Relu_1");
  EXPECT_EQ(relu.attr_int("i"), 3);
  EXPECT_EQ(relu.attr_float("f"), 0.5f);
  EXPECT_EQ(relu.attr_float("e"), 1e-5f);
  EXPECT_EQ(relu.attr_string("s"), "hello");
  EXPECT_EQ(relu.attr_string("q"), "7");  // quoted: a string
  EXPECT_EQ(relu.attr_ints("is"), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(relu.attr_floats("fs"), (std::vector<float>{1, 2.5f}));
  EXPECT_EQ(relu.attr_floats("forced"), (std::vector<float>{1, 2}));
  EXPECT_EQ(relu.attr_tensor("tens"), testing::int64s({2}, {3, 4}));
  EXPECT_EQ(std::get<std::vector<std::string>>(relu.attributes.at("ss").value), (std::vector<std::string>{"a", "b"}));
}

TEST(YamlImport, RandomConstantsAreReproducibleAndInRange) {
  const Tensor a = *parse(kGraph).find_constant("r");
  const Tensor b = *parse(kGraph).find_constant("r");
  EXPECT_EQ(a, b);
  // The values come from npuforge::Rng(seed).range(-128, 127), one draw per element.
  Rng rng(42);
  for (int64_t i = 0; i < a.numel(); ++i) EXPECT_EQ(a.int_at(i), rng.range(-128, 127));
  const Graph g = parse(R"(inputs: [{name: x, shape: [1]}]
outputs: [{name: x}]
constants:
  - {name: u, shape: [1000], random: {seed: 3, low: 2, high: 3}}
  - {name: v, shape: [1000], random: {seed: 4, low: 2, high: 3}}
nodes: []
)");
  const auto u = g.find_constant("u")->values<float>();
  EXPECT_TRUE(std::all_of(u.begin(), u.end(), [](float v) { return v >= 2 && v < 3; }));
  EXPECT_NE(*g.find_constant("u"), *g.find_constant("v"));
}

TEST(YamlImport, NpyConstantsAreRelativeToTheFile) {
  const auto dir = testing::temp_dir() / "yaml_npy";
  std::filesystem::create_directories(dir);
  write_npy(dir / "w.npy", floats({2}, {3, 4}));
  testing::write_temp("yaml_npy/g.yaml", R"(inputs: [{name: x, shape: [2]}]
outputs: [{name: y}]
constants: [{name: w, file: w.npy, shape: [2]}]
nodes: [{op: Add, inputs: [x, w], outputs: [y]}]
)");
  Graph g = import_yaml_file(dir / "g.yaml");
  EXPECT_EQ(*g.find_constant("w"), floats({2}, {3, 4}));
  infer_shapes(g, testing::test_infer());
  TensorMap in;
  in.emplace("x", floats({2}, {1, 1}));
  EXPECT_EQ(Interpreter(g, &testing::test_registry()).run(in).at("y"), floats({2}, {4, 5}));
  testing::write_temp("yaml_npy/bad.yaml", R"(inputs: [{name: x, shape: [2]}]
outputs: [{name: x}]
constants: [{name: w, file: w.npy, shape: [3]}]
nodes: []
)");
  try {
    import_yaml_file(dir / "bad.yaml");
    FAIL();
  } catch (const Error& e) {
    EXPECT_CONTAINS(e.what(), "bad.yaml:3: constant 'w': shape 3 but ");
  }
}

TEST(YamlImport, AMisspeltAttributeNamesFileLineKeyAndTheNearestKnownOne) {
  const std::string graph =
      "inputs: [{name: x, shape: [1, 1, 4, 4]}]\noutputs: [{name: y}]\n"
      "constants:\n  - {name: w, shape: [1, 1, 3, 3], fill: 1}\nnodes:\n"
      "  - name: conv\n    op: Conv\n    inputs: [x, w]\n    outputs: [y]\n"
      "    attributes:\n      kernal_shape: [3, 3]\n      pads: [1, 1, 1, 1]\n";
  const std::string e = error_of(graph);
  EXPECT_CONTAINS(e, "g.yaml:11: node 'conv': unknown attribute 'kernal_shape' of Conv; did you mean 'kernel_shape'?");
  EXPECT_CONTAINS(e, "(Conv takes: auto_pad, dilations, group, kernel_shape, pads, strides)");
  // An op that takes no attribute says so.
  EXPECT_CONTAINS(error_of("inputs: [{name: x, shape: [1]}]\noutputs: [{name: y}]\nnodes:\n"
                           "  - {op: Relu, inputs: [x], outputs: [y], attributes: {alpah: 1}}\n"),
                  "g.yaml:4: node 'Relu_0': unknown attribute 'alpah' of Relu (Relu takes: no attributes)");
}

TEST(YamlImport, ErrorsNameFileLineAndKey) {
  EXPECT_CONTAINS(error_of("inputs: [\n"), "g.yaml:");
  EXPECT_CONTAINS(error_of("inputs: []\noutputs: []\nnodes: []\nextra: 1\n"), "g.yaml:4: unknown key 'extra' in model graph");
  EXPECT_CONTAINS(error_of("inputs: []\noutputs: []\n"), "needs inputs, outputs and nodes");
  EXPECT_CONTAINS(error_of("inputs: [{name: x, dtype: float64, shape: [1]}]\noutputs: [{name: x}]\nnodes: []\n"),
                  "g.yaml:1: 'dtype' = 'float64' is not a dtype");
  EXPECT_CONTAINS(error_of("inputs: [{name: x, shape: [1]}]\noutputs: [{name: x}]\n"
                           "constants:\n  - {name: c, shape: [3], values: [1, 2]}\nnodes: []\n"),
                  "g.yaml:4: 'values' holds 2 numbers, the shape 3 needs 3");
  EXPECT_CONTAINS(error_of("inputs: [{name: x, shape: [1]}]\noutputs: [{name: x}]\n"
                           "constants:\n  - {name: c, dtype: uint8, shape: [1], values: [300]}\nnodes: []\n"),
                  "g.yaml:4: 'values': 300 is not a valid uint8 value");
  EXPECT_CONTAINS(error_of("inputs: [{name: x, shape: [1]}]\noutputs: [{name: x}]\n"
                           "constants:\n  - {name: c, shape: [1], values: [1], fill: 2}\nnodes: []\n"),
                  "g.yaml:4: constant 'c' needs exactly one of values, random, fill or file");
  EXPECT_CONTAINS(error_of("inputs: [{name: x, shape: [1]}]\noutputs: [{name: x}]\n"
                           "constants:\n  - {name: c, shape: [1], random: {low: 0}}\nnodes: []\n"),
                  "g.yaml:4: 'random' needs a 'seed'");
  EXPECT_CONTAINS(error_of("inputs: [{name: x, shape: [1]}]\noutputs: [{name: y}]\nnodes:\n"
                           "  - {op: Relu, inputs: [x], outputs: [x]}\n"),
                  "g.yaml:4: 'x' is defined twice");
  EXPECT_CONTAINS(error_of("inputs: [{name: x, shape: [1]}]\noutputs: [{name: y}]\nnodes:\n"
                           "  - {op: Relu, inputs: [x], outputs: [z]}\n"),
                  "g.yaml:2: output 'y' is not an input, a constant or a node output");
  EXPECT_CONTAINS(error_of("inputs: [{name: x, shape: [1]}]\noutputs: [{name: y}]\nnodes:\n"
                           "  - {op: Relu, inputs: [w], outputs: [y], name: act}\n"),
                  "g.yaml: node 'act' (Relu): input 'w' is not a graph input, an initializer or any node's output");
  EXPECT_CONTAINS(error_of("inputs: [{name: x, shape: [1]}]\noutputs: [{name: y}]\nnodes:\n"
                           "  - {op: LeakyRelu, inputs: [x], outputs: [y], attributes: {alpha: {bogus: 1}}}\n"),
                  "g.yaml:4: unknown key 'bogus' in attribute 'alpha'");
  EXPECT_CONTAINS(error_of("inputs: [{name: x, shape: [1]}]\noutputs: [{name: y}]\nnodes:\n"
                           "  - {inputs: [x], outputs: [y]}\n"),
                  "g.yaml:4: a node needs 'op'");
  EXPECT_CONTAINS(error_of("inputs: [{name: x, shape: [-1]}]\noutputs: [{name: x}]\nnodes: []\n"),
                  "g.yaml:1: 'shape' = -1 is out of range");
  try {
    import_yaml_file(testing::temp_dir() / "nope.yaml");
    FAIL();
  } catch (const Error& e) {
    EXPECT_CONTAINS(e.what(), "nope.yaml: cannot open model graph");
  }
}

TEST(YamlImport, TheShippedExampleParses) {
  const Graph g = import_yaml_file(std::filesystem::path(NPUFORGE_SOURCE_DIR) / "configs/models/small_convnet.yaml");
  EXPECT_EQ(g.inputs, std::vector<std::string>{"x"});
  EXPECT_EQ(g.outputs, std::vector<std::string>{"probs"});
  EXPECT_EQ(g.nodes.size(), 14u);
  EXPECT_EQ(g.find_constant("dw.w")->shape(), (Shape{8, 1, 3, 3}));
}

// The example in README.md, "Model graphs (YAML)", must stay a valid graph.
TEST(YamlImport, TheReadmeExampleParses) {
  const std::string readme = util::read_file(std::filesystem::path(NPUFORGE_SOURCE_DIR) / "README.md");
  const size_t section = readme.find("### Model graphs (YAML)");
  ASSERT_NE(section, std::string::npos);
  const size_t begin = readme.find("```yaml\n", section);
  const size_t end = readme.find("```\n", begin + 8);
  ASSERT_NE(begin, std::string::npos);
  ASSERT_NE(end, std::string::npos);
  const auto dir = testing::temp_dir() / "readme";
  std::filesystem::create_directories(dir / "weights");
  write_npy(dir / "weights" / "fc.npy", floats({2, 2}, {1, 2, 3, 4}));
  testing::write_temp("readme/tiny.yaml", readme.substr(begin + 8, end - begin - 8));
  const Graph g = import_yaml_file(dir / "tiny.yaml");
  EXPECT_EQ(g.nodes.size(), 2u);
  EXPECT_EQ(g.find_constant("w")->shape(), (Shape{4, 3, 3, 3}));
  EXPECT_EQ(g.find_value("x")->dim_names[0], "batch");
}

}  // namespace
}  // namespace npuforge::model
