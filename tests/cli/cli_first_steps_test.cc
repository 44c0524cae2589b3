// What a new user does first without writing any Python or knowing the tree: make a model's
// input with `npuforge npy` (seeded, byte-reproducible, shape and dtype from the model) and
// name the shipped profiles and NPU configs by name from any directory.
#include <gtest/gtest.h>

#include "tests/cli/cli_util.h"

namespace npuforge::cli_testing {
namespace {

const std::string kSource = NPUFORGE_SOURCE_DIR;
const std::string kConvnet = kSource + "/configs/models/small_convnet.yaml";

TEST(Npy, SameSeedSameBytesAndTheModelRunsOnIt) {
  const ScratchDir d("npy");
  const CliRun a = run_cli("npy " + kConvnet + " --seed 7 -o " + d.path("a.npy"));
  ASSERT_EQ(a.code, 0) << a.out;
  EXPECT_NE(a.out.find("float32 1x3x32x32 in [-1, 1)"), std::string::npos) << a.out;
  ASSERT_EQ(run_cli("npy " + kConvnet + " --seed 7 -o " + d.path("b.npy")).code, 0);
  ASSERT_EQ(run_cli("npy " + kConvnet + " --seed 8 -o " + d.path("c.npy")).code, 0);
  const std::string bytes = read_text(d.path("a.npy"));
  EXPECT_EQ(bytes, read_text(d.path("b.npy")));
  EXPECT_NE(bytes, read_text(d.path("c.npy")));
  EXPECT_EQ(bytes.size(), 128u + 1 * 3 * 32 * 32 * 4) << "a v1 header and the float32 values";
  const CliRun run = run_cli("run-model " + kConvnet + " --input " + d.path("a.npy"));
  EXPECT_EQ(run.code, 0) << run.out;
}

TEST(Npy, RangeAndOpenDimensions) {
  const ScratchDir d("npy_range");
  const std::string model = d.write("m.yaml",
                                    "inputs:\n  - {name: x, dtype: int8, shape: [batch, 4]}\n  - {name: y, shape: [2]}\n"
                                    "outputs:\n  - {name: z}\nnodes:\n  - {op: Identity, inputs: [y], outputs: [z]}\n");
  const CliRun open = run_cli("npy " + model + " -o " + d.path("x.npy") + " -o " + d.path("y.npy"));
  EXPECT_EQ(open.code, 1) << open.out;
  EXPECT_NE(open.out.find("--input-shape"), std::string::npos) << "the fix is named: " << open.out;
  const CliRun one = run_cli("npy " + model + " --input-shape x=3x4 -o " + d.path("x.npy"));
  EXPECT_EQ(one.code, 1) << one.out;
  EXPECT_NE(one.out.find("model input 'y' has no -o"), std::string::npos) << one.out;
  const CliRun ok = run_cli("npy " + model + " --input-shape x=3x4 --low 5 --high 9 -o " + d.path("x.npy") + " -o y=" +
                            d.path("y.npy"));
  ASSERT_EQ(ok.code, 0) << ok.out;
  EXPECT_NE(ok.out.find("x: int8 3x4 in [5, 9]"), std::string::npos) << ok.out;
  const std::string x = read_text(d.path("x.npy"));
  ASSERT_EQ(x.size(), 128u + 12);
  for (size_t i = 128; i < x.size(); ++i) {
    EXPECT_GE(static_cast<int8_t>(x[i]), 5);
    EXPECT_LE(static_cast<int8_t>(x[i]), 9);
  }
  const CliRun bad = run_cli("npy " + model + " --input-shape x=3x4 --low 5 --high 900 -o " + d.path("x.npy") + " -o " +
                             d.path("y.npy"));
  EXPECT_EQ(bad.code, 1) << bad.out;
  EXPECT_NE(bad.out.find("900 is not a valid int8 value"), std::string::npos) << bad.out;
}

TEST(ShippedConfigs, ProfilesAndNpuConfigsByNameFromAnyDirectory) {
  const ScratchDir d("shipped");
  const CliRun r = run_cli("gen --profile near-full --npu default --seed 3 --length 50 -o " + d.path("p"));
  ASSERT_EQ(r.code, 0) << r.out;
  const CliRun by_path = run_cli("gen --profile " + kSource + "/configs/gen/near-full.yaml --npu " + kSource +
                                 "/configs/npu/default.yaml --seed 3 --length 50 -o " + d.path("q"));
  ASSERT_EQ(by_path.code, 0) << by_path.out;
  EXPECT_EQ(read_text(d.path("p.bin")), read_text(d.path("q.bin"))) << "the name stands for the shipped file";
}

TEST(ShippedConfigs, AnUnknownNameListsTheShippedOnesAndWhereTheyLive) {
  const ScratchDir d("shipped_bad");
  const CliRun r = run_cli("gen --profile defualt --seed 1 -o " + d.path("p"));
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("defualt: no such file, and not the name of a shipped profile (--profile); did you mean "
                       "'default'?"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("default, extremes, near-full, stress-fragment, tiny-buffers"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("configs/gen"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace npuforge::cli_testing
