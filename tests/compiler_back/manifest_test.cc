// The manifest round-trips through its file and a malformed one is an error naming the file
// and the field; CPU-step graphs written as YAML read back and run like the original.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>

#include "compiler/graph_yaml.h"
#include "compiler/manifest.h"
#include "model/interpreter.h"
#include "model/load.h"
#include "model/yaml_import.h"
#include "util/error.h"

namespace npuforge::compiler {
namespace {

Manifest sample_manifest() {
  Manifest m;
  m.model = "m.onnx";
  m.npu_file = "npu.yaml";
  m.npu_source = "configs/npu/default.yaml";
  m.npu_hash = 0x0123456789abcdefull;
  m.sram_bytes = 524288;
  m.alignment = 64;
  m.ddr_bytes = 67108864;
  m.isa_name = "npuforge-ref";
  m.isa_version = 2;
  m.image = "model.ddr.bin";
  m.sample = "seeded random";
  m.weights = {0, 4096};
  m.input = {4096, 128};
  m.arena = {4224, 512};
  m.output = {4736, 64};
  ManifestTensor x{"x: in", "x", "", 4096, 108, "int8", "hwc", {1, 3, 6, 6}, 0.015748031437397003};
  m.inputs = {x};
  ManifestTensor y{"y", "y", "", 4736, 10, "int8", "row_major", {1, 10}, 0.25};
  m.outputs = {y};
  ManifestSegment s0;
  s0.index = 0;
  s0.kind = "npu";
  s0.bin = "seg0.bin";
  s0.hex = "seg0.hex";
  s0.asm_file = "seg0.s";
  s0.memmap = "seg0.memmap.yaml";
  s0.ddr = "seg0.ddr.bin";
  s0.expect = "seg0.expect.ddr.bin";
  s0.ops = {"conv Conv_0+Relu_1", "maxpool /pool/MaxPool"};
  s0.instructions = 42;
  s0.sram_peak = 4096;
  s0.macs = 12345;
  x.name.clear();
  s0.inputs = {x};
  ManifestTensor t{"", "t", "", 4224, 64, "int8", "row_major", {1, 64}, 0.5};
  s0.outputs = {t};
  ManifestSegment s1;
  s1.index = 1;
  s1.kind = "cpu";
  s1.graph = "seg1.cpu.yaml";
  s1.nodes = {"Softmax_3"};
  t.value = "t";
  s1.inputs = {t};
  ManifestTensor f{"", "y_f", "y_f", 4300, 40, "float32", "onnx", {1, 10}, 0};
  s1.outputs = {f};
  m.segments = {s0, s1};
  m.arena_planner = "greedy-size";
  m.arena_peak = 512;
  m.arena_lower_bound = 448;
  m.arena_clean = false;
  m.arena_tensors = {{"t", 0, 64, 0, 2}, {"y_f", 76, 64, 1, 3}};
  m.macs = 12345;
  m.instructions = 42;
  m.sram_peak = 4096;
  m.tokens = 7;
  m.npu_segments = 1;
  m.cpu_steps = 1;
  return m;
}

TEST(Manifest, RoundTripsEveryField) {
  const Manifest m = sample_manifest();
  const std::string text = m.to_yaml();
  const Manifest back = Manifest::load_string(text, "manifest.yaml");
  EXPECT_EQ(back.to_yaml(), text);
  EXPECT_EQ(back.npu_hash, m.npu_hash);
  ASSERT_EQ(back.segments.size(), 2u);
  EXPECT_EQ(back.segments[0].ops, m.segments[0].ops);
  EXPECT_EQ(back.segments[1].outputs[0].dtype, "float32");
  EXPECT_EQ(static_cast<float>(back.inputs[0].scale), static_cast<float>(m.inputs[0].scale));
  EXPECT_EQ(back.inputs[0].name, "x: in");
  EXPECT_FALSE(back.arena_clean);
  EXPECT_EQ(back.arena_tensors[1].offset, 76u);
}

std::string error_of(const std::string& text) {
  try {
    Manifest::load_string(text, "OUT/manifest.yaml");
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

// Replaces the first `from` in the sample's text by `to`.
std::string edited(const std::string& from, const std::string& to) {
  std::string text = sample_manifest().to_yaml();
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return text.replace(at, from.size(), to);
}

TEST(Manifest, MalformedFieldsAreNamed) {
  const std::string e1 = error_of(edited("kind: cpu", "kind: gpu"));
  EXPECT_NE(e1.find("OUT/manifest.yaml"), std::string::npos) << e1;
  EXPECT_NE(e1.find("segments[1].kind"), std::string::npos) << e1;
  const std::string e2 = error_of(edited("dtype: int8", "dtype: int4"));
  EXPECT_NE(e2.find("inputs[0].dtype"), std::string::npos) << e2;
  const std::string e3 = error_of(edited("    instructions: 42\n", ""));
  EXPECT_NE(e3.find("segments[0] has no 'instructions'"), std::string::npos) << e3;
  const std::string e4 = error_of(edited("format: 1", "format: 9"));
  EXPECT_NE(e4.find("format 1"), std::string::npos) << e4;
  const std::string e5 = error_of(edited("peak: 512", "peak: -3"));
  EXPECT_NE(e5.find("arena.peak"), std::string::npos) << e5;
  const std::string e6 = error_of(edited("fnv1a64: 0123456789abcdef", "fnv1a64: xyz"));
  EXPECT_NE(e6.find("npu.fnv1a64"), std::string::npos) << e6;
  const std::string e7 = error_of(edited("statistics:", "statistic:"));
  EXPECT_NE(e7.find("statistic"), std::string::npos) << e7;
  const std::string e8 = error_of(edited("layout: hwc", "layout: chw"));
  EXPECT_NE(e8.find("layout"), std::string::npos) << e8;
  EXPECT_NE(error_of("segments: [").find("OUT/manifest.yaml"), std::string::npos);
  try {
    Manifest::load_file("/nonexistent/OUT/manifest.yaml");
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/OUT/manifest.yaml"), std::string::npos);
  }
}

TEST(GraphYaml, ACpuStepGraphReadsBackAndRunsTheSame) {
  // A small float graph with every attribute kind the writer handles and a constant.
  const std::string src = R"(
opset: 13
inputs:
  - {name: "x/in:0", shape: [1, 2, 3, 3]}
outputs:
  - {name: y}
  - {name: s}
constants:
  - {name: w, shape: [2, 2, 1, 1], values: [0.5, -1.25, 2, 0.1]}
  - {name: shape, dtype: int64, shape: [2], values: [1, 18]}
nodes:
  - {op: Conv, inputs: ["x/in:0", w], outputs: [c], attributes: {kernel_shape: [1, 1], pads: [0, 0, 0, 0], group: 1}}
  - {op: LeakyRelu, inputs: [c], outputs: [l], attributes: {alpha: 0.0999999}}
  - {op: Reshape, inputs: [l, shape], outputs: [r]}
  - {op: Softmax, inputs: [r], outputs: [y], attributes: {axis: -1}}
  - {op: Clip, inputs: [r, "", ""], outputs: [s]}
)";
  const model::Graph g = model::import_yaml_string(src, "src.yaml", ".");
  const auto dir = std::filesystem::temp_directory_path() / ("npuforge_graph_yaml_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  write_graph_yaml(g, dir / "seg1.cpu.yaml", "seg1.cpu", "test step\nsecond line");
  EXPECT_TRUE(std::filesystem::exists(dir / "seg1.cpu" / "c0.npy"));
  model::Graph back = model::load_model(dir / "seg1.cpu.yaml");
  model::Graph orig = g;
  model::prepare_graph(orig);
  model::Tensor x(model::DType::kFloat32, {1, 2, 3, 3});
  for (int i = 0; i < 18; ++i) x.values<float>()[i] = 0.37f * float(i) - 3.0f;
  const model::TensorMap a = model::run_graph(orig, {{"x/in:0", x}});
  const model::TensorMap b = model::run_graph(back, {{"x/in:0", x}});
  ASSERT_EQ(a.size(), b.size());
  for (const auto& [name, t] : a) EXPECT_EQ(t, b.at(name)) << name;
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace npuforge::compiler
