// The npuforge binary's run-model and model-info: outputs, and every bad input exiting 1
// with a clear message. Models here use only Identity (always registered), so the tests do
// not depend on the op families; the YAML example runs once its ops are registered.
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include <sys/wait.h>

#include <gtest/gtest.h>

#include "model/npy.h"
#include "model/op.h"
#include "onnx_builder.h"
#include "util/rng.h"

namespace npuforge::model {
namespace {

using testing::floats;
using testing::OnnxBuilder;

#define EXPECT_CONTAINS(text, part) EXPECT_NE(std::string(text).find(part), std::string::npos) << (text)

struct Result {
  int code;
  std::string output;
};

Result run(const std::string& args) {
  const std::string cmd = std::string(NPUFORGE_CLI) + " " + args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  std::string out;
  std::array<char, 4096> buf;
  while (size_t n = fread(buf.data(), 1, buf.size(), p)) out.append(buf.data(), n);
  const int status = pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

std::string path_of(const std::filesystem::path& p) { return p.string(); }

// x -> Identity -> y, x declared Nx3.
OnnxBuilder passthrough(std::vector<int64_t> dims = {-1, 3}) {
  OnnxBuilder b;
  b.input("x", DType::kFloat32, dims);
  b.node("Identity", {"x"}, {"y"}, "pass");
  b.output("y", DType::kFloat32, dims);
  return b;
}

TEST(ModelCli, RunModelReadsAndWritesNpy) {
  const auto model = passthrough().save("pass.onnx");
  const auto dir = testing::temp_dir();
  write_npy(dir / "x.npy", floats({2, 3}, {1, 2, 3, 4, 5, 6}));
  const Result r = run("run-model " + path_of(model) + " --input " + path_of(dir / "x.npy") + " --output " +
                       path_of(dir / "y.npy"));
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_CONTAINS(r.output, "y: float32 2x3: min 1 max 6 mean 3.5 -> ");
  EXPECT_EQ(read_npy(dir / "y.npy"), floats({2, 3}, {1, 2, 3, 4, 5, 6}));
  // Named bindings and --dump-dir.
  const Result named = run("run-model " + path_of(model) + " --input x=" + path_of(dir / "x.npy") +
                           " --output y=" + path_of(dir / "y2.npy") + " --dump-dir " + path_of(dir / "dump"));
  ASSERT_EQ(named.code, 0) << named.output;
  EXPECT_EQ(read_npy(dir / "y2.npy"), floats({2, 3}, {1, 2, 3, 4, 5, 6}));
  EXPECT_TRUE(std::filesystem::exists(dir / "dump" / "x.npy"));
}

TEST(ModelCli, ModelInfoPrintsTheSummary) {
  const auto model = passthrough({1, 3}).save("info.onnx");
  const Result r = run("model-info " + path_of(model));
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_CONTAINS(r.output, "inputs:\n  x: float32 1x3\n");
  EXPECT_CONTAINS(r.output, "outputs:\n  y: float32 1x3\n");
  EXPECT_CONTAINS(r.output, "  Identity                      1\n");
  EXPECT_CONTAINS(r.output, "parameters: 0");
  EXPECT_CONTAINS(r.output, "activations: 2 values, 24 B in total (24 bytes)");
}

TEST(ModelCli, BadModelsExitOneWithAClearError) {
  const std::string good = passthrough({1, 3}).bytes();
  Result r = run("model-info " + path_of(testing::write_temp("cut.onnx", good.substr(0, good.size() / 2))));
  EXPECT_EQ(r.code, 1);
  EXPECT_CONTAINS(r.output, "npuforge: error: ");
  EXPECT_CONTAINS(r.output, "cut.onnx: not ");
  std::string junk(777, '\0');
  Rng rng(5);
  for (char& c : junk) c = static_cast<char>(rng.below(256));
  r = run("model-info " + path_of(testing::write_temp("junk.onnx", junk)));
  EXPECT_EQ(r.code, 1);
  EXPECT_CONTAINS(r.output, "junk.onnx: not ");
  r = run("model-info " + path_of(testing::write_temp("empty.onnx", "")));
  EXPECT_EQ(r.code, 1);
  EXPECT_CONTAINS(r.output, "empty.onnx: empty file, not an ONNX model");

  OnnxBuilder unsupported;
  unsupported.input("x", DType::kFloat32, {1});
  unsupported.node("NoSuchOp", {"x"}, {"y"}, "mystery");
  unsupported.output("y", DType::kFloat32, {1});
  r = run("model-info " + path_of(unsupported.save("unsupported.onnx")));
  EXPECT_EQ(r.code, 1);
  EXPECT_CONTAINS(r.output, "unsupported.onnx: node 'mystery' (NoSuchOp): operator not supported by npuforge");

  OnnxBuilder missing;
  missing.input("x", DType::kFloat32, {1});
  missing.node("Add", {"x", "w"}, {"y"}, "add");
  missing.output("y", DType::kFloat32, {1});
  r = run("model-info " + path_of(missing.save("missing.onnx")));
  EXPECT_EQ(r.code, 1);
  EXPECT_CONTAINS(r.output, "missing.onnx: node 'add' (Add): input 'w' is not a graph input, an initializer or any node's output");

  // The file declares an output shape its graph does not compute.
  OnnxBuilder mismatch;
  mismatch.input("x", DType::kFloat32, {2});
  mismatch.node("Identity", {"x"}, {"y"}, "pass");
  mismatch.output("y", DType::kFloat32, {3});
  r = run("model-info " + path_of(mismatch.save("mismatch.onnx")));
  EXPECT_EQ(r.code, 1);
  EXPECT_CONTAINS(r.output, "mismatch.onnx: node 'pass' (Identity): computes graph output 'y' as float32 2, but the model declares float32 3");
}

TEST(ModelCli, InputShapeAndInputMismatchesExitOne) {
  const auto model = passthrough().save("dyn.onnx");
  Result r = run("model-info " + path_of(model));
  EXPECT_EQ(r.code, 1);
  EXPECT_CONTAINS(r.output, "input 'x' has a dimension that is not known (dims: N, 3); fix it with --input-shape x=DIMS");
  r = run("model-info " + path_of(model) + " --input-shape x=4x3");
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_CONTAINS(r.output, "x: float32 4x3");
  r = run("model-info " + path_of(model) + " --input-shape x=4x3x1");
  EXPECT_EQ(r.code, 1);
  EXPECT_CONTAINS(r.output, "--input-shape x=4x3x1 has rank 3, but input 'x' has rank 2");
  r = run("model-info " + path_of(model) + " --input-shape q=4x3");
  EXPECT_EQ(r.code, 1);
  EXPECT_CONTAINS(r.output, "--input-shape names 'q', which is not an input of the model (its inputs: 'x')");
  r = run("model-info " + path_of(model) + " --input-shape x=4xa");
  EXPECT_EQ(r.code, 1);
  EXPECT_CONTAINS(r.output, "--input-shape 'x=4xa': 'a' is not a non-negative dimension");

  // An .npy of another shape or type than the model's input.
  const auto dir = testing::temp_dir();
  write_npy(dir / "x23.npy", floats({2, 3}, {1, 2, 3, 4, 5, 6}));
  write_npy(dir / "xi.npy", Tensor(DType::kInt32, {4, 3}));
  r = run("run-model " + path_of(model) + " --input-shape x=4x3 --input " + path_of(dir / "x23.npy"));
  EXPECT_EQ(r.code, 1);
  EXPECT_CONTAINS(r.output, "dyn.onnx: input 'x' is float32 2x3, the model expects float32 4x3");
  r = run("run-model " + path_of(model) + " --input-shape x=4x3 --input " + path_of(dir / "xi.npy"));
  EXPECT_EQ(r.code, 1);
  EXPECT_CONTAINS(r.output, "input 'x' is int32 4x3, the model expects float32 4x3");
  r = run("run-model " + path_of(model) + " --input-shape x=2x3");
  EXPECT_EQ(r.code, 1);
  EXPECT_CONTAINS(r.output, "no --input given for model input 'x'");
  r = run("run-model " + path_of(model) + " --input-shape x=2x3 --input " +
          path_of(testing::write_temp("bad.npy", "not numpy")));
  EXPECT_EQ(r.code, 1);
  EXPECT_CONTAINS(r.output, "bad.npy: not a .npy file");
  r = run("run-model " + path_of(dir));
  EXPECT_EQ(r.code, 1);
  EXPECT_CONTAINS(r.output, "is a directory");
  r = run("run-model");
  EXPECT_EQ(r.code, 2);
}

bool all_registered(std::initializer_list<const char*> ops) {
  for (const char* op : ops)
    if (!builtin_ops().find("", op)) return false;
  return true;
}

TEST(ModelCli, RunsTheYamlExample) {
  ASSERT_TRUE(all_registered({"Conv", "BatchNormalization", "Relu", "MaxPool", "HardSigmoid", "Mul", "AveragePool",
                              "GlobalAveragePool", "Flatten", "Gemm", "Softmax"}))
      << "the example's ops are not all in the registry";
  const std::string model = std::string(NPUFORGE_SOURCE_DIR) + "/configs/models/small_convnet.yaml";
  Result r = run("model-info " + model);
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_CONTAINS(r.output, "probs: float32 1x10");
  const auto dir = testing::temp_dir();
  Tensor x(DType::kFloat32, {1, 3, 32, 32});
  Rng rng(1);
  for (float& v : x.values<float>()) v = static_cast<float>(rng.range(-1000, 1000)) / 1000.0f;
  write_npy(dir / "img.npy", x);
  r = run("run-model " + model + " --input " + path_of(dir / "img.npy") + " --output " + path_of(dir / "probs.npy"));
  ASSERT_EQ(r.code, 0) << r.output;
  const Tensor probs = read_npy(dir / "probs.npy");
  ASSERT_EQ(probs.shape(), (Shape{1, 10}));
  double sum = 0;
  for (float p : probs.values<float>()) {
    EXPECT_GT(p, 0.0f);
    sum += p;
  }
  EXPECT_NEAR(sum, 1.0, 1e-5);
}

}  // namespace
}  // namespace npuforge::model
