// OUT/qgraph.bin: the compiled QGraph read back is the same graph (same bytes when written
// again, the same int8 reference values on an input) and bad files are clear errors.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>

#include "compiler/driver.h"
#include "compiler/graph_yaml.h"
#include "compiler/qgraph_io.h"
#include "compiler/qref.h"
#include "util/error.h"
#include "util/file_io.h"
#include "util/rng.h"

namespace npuforge::compiler {
namespace {

namespace fs = std::filesystem;

std::string cpu_file(const QGraph& g, size_t op) {
  for (size_t s = 0; s < g.segments.size(); ++s)
    if (g.segments[s].target == Target::kCpu && g.segments[s].first == op) return "seg" + std::to_string(s) + ".cpu.yaml";
  return "?";
}

// The front half's QGraph of small_convnet written as `compile -o` writes it: qgraph.bin and
// each CPU step's graph as segK.cpu.yaml (the back half is not needed for the file).
struct Compiled {
  fs::path dir;
  CompileResult result;
  ~Compiled() { fs::remove_all(dir); }
};

const Compiled& small_convnet() {
  static Compiled x;
  if (!x.dir.empty()) return x;
  {
    x.dir = fs::temp_directory_path() / ("npuforge_qgraph_io_" + std::to_string(::getpid()));
    CompileOptions o;
    o.model = fs::path(NPUFORGE_SOURCE_DIR) / "configs/models/small_convnet.yaml";
    o.front.calibration.random_samples = 2;
    o.npu = isa::load_npu_config("");
    x.result = compile_model(o, isa::builtin_isa());
    const QGraph& g = x.result.front.graph;
    fs::create_directories(x.dir);
    for (size_t s = 0; s < g.segments.size(); ++s) {
      if (g.segments[s].target != Target::kCpu) continue;
      const auto& step = std::get<CpuStepOp>(g.ops[g.segments[s].first]);
      write_graph_yaml(step.graph, x.dir / cpu_file(g, g.segments[s].first), "seg" + std::to_string(s) + ".cpu", "test");
    }
    write_qgraph(x.dir / "qgraph.bin", g, [&g](size_t op) { return cpu_file(g, op); });
  }
  return x;
}

TEST(QGraphFile, RoundTripGivesTheSameGraphAndReference) {
  const Compiled& c = small_convnet();
  const QGraph& g = c.result.front.graph;
  const QGraph back = read_qgraph(c.dir / "qgraph.bin");
  auto files = [&](const QGraph& q) { return [&q](size_t op) { return cpu_file(q, op); }; };
  EXPECT_EQ(encode_qgraph(back, files(back)), encode_qgraph(g, files(g)));
  ASSERT_EQ(back.tensors.size(), g.tensors.size());

  model::Tensor x(model::DType::kFloat32, {1, 3, 32, 32});
  Rng rng(7);
  for (float& v : x.values<float>()) v = static_cast<float>(rng.next() % 2001) / 1000.0f - 1.0f;
  const QrefResult want = run_qref(g, {{"x", x}});
  const QrefResult got = run_qref(back, {{"x", x}});
  for (size_t t = 0; t < g.tensors.size(); ++t) EXPECT_TRUE(got.values[t] == want.values[t]) << g.tensors[t].name;
}

TEST(QGraphFile, BadFilesAreClearErrors) {
  const Compiled& c = small_convnet();
  const std::string text = util::read_file(c.dir / "qgraph.bin");
  const std::vector<uint8_t> bytes(text.begin(), text.end());
  auto message = [&](std::vector<uint8_t> b) {
    try {
      decode_qgraph(b, c.dir / "qgraph.bin");
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message({bytes.begin(), bytes.begin() + 4}).find("not a QGraph file"), std::string::npos);
  EXPECT_NE(message({bytes.begin(), bytes.begin() + static_cast<long>(bytes.size() / 2)}).find("truncated"),
            std::string::npos);
  std::vector<uint8_t> trailing = bytes;
  trailing.push_back(0);
  EXPECT_NE(message(trailing).find("trailing bytes"), std::string::npos);
  std::vector<uint8_t> bad_magic = bytes;
  bad_magic[0] = 'X';
  EXPECT_NE(message(bad_magic).find("qgraph.bin"), std::string::npos);
}

}  // namespace
}  // namespace npuforge::compiler
