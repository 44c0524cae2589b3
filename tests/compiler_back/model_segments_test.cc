// Whole models through both halves of the compiler, every NPU segment run on the golden model
// (every checker on) and compared byte for byte with the int8 reference: the repository's
// example graph in the default and in a small SRAM, and the real models of
// configs/models/models.txt when the model cache holds them (scripts/prepare-models.sh).
#include <cstdlib>
#include <filesystem>

#include <gtest/gtest.h>

#include "compiler/front.h"
#include "model/load.h"
#include "run_compiled.h"

namespace npuforge::compiler {
namespace {

namespace fs = std::filesystem;

CompileFront front_of(const fs::path& file, const model::InputShapes& shapes = {}) {
  return compile_front(model::load_model(file, front_load_options(shapes)));
}

size_t npu_segments(const CompiledModel& m) {
  size_t n = 0;
  for (const CompiledSegment& s : m.segments) n += s.segment.target == Target::kNpu;
  return n;
}

TEST(ModelSegments, SmallConvnetBitExactInTheDefaultAndA16KiBSram) {
  const CompileFront f = front_of(fs::path(NPUFORGE_SOURCE_DIR) / "configs/models/small_convnet.yaml");
  const testing::RunResult whole = testing::run_compiled(f.graph, isa::NpuConfig{}, 21);
  EXPECT_EQ(npu_segments(whole.compiled), 1u);
  const testing::RunResult tiled = testing::run_compiled(f.graph, testing::npu_with_sram(16 * 1024), 22);
  EXPECT_GT(tiled.instructions, whole.instructions);  // more, smaller tiles
  EXPECT_LE(tiled.compiled.sram_peak, 16u * 1024);
}

fs::path cache_dir() {
  if (const char* c = std::getenv("NPUFORGE_MODEL_CACHE")) return c;
  const char* home = std::getenv("HOME");
  return fs::path(home ? home : "/") / ".cache/npuforge/models";
}

// Every real model of configs/models/models.txt npuforge compiles (oww_hey_jarvis is refused on
// purpose: an If sub-graph), at the shapes the list gives.
struct RealModel {
  const char* name;
  const char* shape;  // --input-shape, or "" when the model fixes it
  bool tight = true;  // also in a 64 KiB SRAM (row tiles, N-tiles, channel tiles)
};

class RealModelSegments : public ::testing::TestWithParam<RealModel> {};

TEST_P(RealModelSegments, EveryNpuSegmentBitExact) {
  const RealModel& rm = GetParam();
  const fs::path file = cache_dir() / (std::string(rm.name) + ".onnx");
  if (!fs::exists(file)) GTEST_SKIP() << file << " is missing: run scripts/prepare-models.sh";
  model::InputShapes shapes;
  if (*rm.shape) shapes.insert(model::parse_input_shape(rm.shape));
  const CompileFront f = front_of(file, shapes);
  const testing::RunResult r = testing::run_compiled(f.graph, isa::NpuConfig{}, 31);
  EXPECT_GE(npu_segments(r.compiled), 1u);
  std::printf("%s: %zu segments (%zu NPU), %llu instructions, SRAM peak %llu\n", rm.name, r.compiled.segments.size(),
              npu_segments(r.compiled), static_cast<unsigned long long>(r.instructions),
              static_cast<unsigned long long>(r.compiled.sram_peak));
  if (!rm.tight) return;
  const testing::RunResult t = testing::run_compiled(f.graph, testing::npu_with_sram(64 * 1024), 32);
  EXPECT_LE(t.compiled.sram_peak, 64u * 1024);
  std::printf("%s in 64 KiB: %llu instructions, SRAM peak %llu\n", rm.name,
              static_cast<unsigned long long>(t.instructions), static_cast<unsigned long long>(t.compiled.sram_peak));
}

INSTANTIATE_TEST_SUITE_P(Cache, RealModelSegments,
                         ::testing::Values(RealModel{"tiny_int8_cnn", ""}, RealModel{"tiny_int8_qop", ""},
                                           RealModel{"oww_timer", ""}, RealModel{"oww_hello_deepa", ""},
                                           RealModel{"oww_embedding", "input_1=1x76x32x1"},
                                           RealModel{"oww_melspec", "input=1x1760"},
                                           RealModel{"ppocr_cls", "x=1x3x48x192"}, RealModel{"squeezenet1_1", ""},
                                           RealModel{"mobilenet_v2_int8", ""}, RealModel{"ppocr_det_v4", "x=1x3x64x192"},
                                           RealModel{"ppocr_rec_v4", "x=1x3x48x192", false}),
                         [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace npuforge::compiler
