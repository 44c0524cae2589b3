// `npuforge run-model OUT/` end to end on small_convnet (NPU segments on the SystemC model,
// the Softmax CPU step on the interpreter): a clean run is bit-exact with the int8 reference,
// a tight legal outside arena plan runs clean, an overlapping one is caught on the simulated
// NPU naming both tensors, and check-plan says the same statically.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <vector>

#include "compiler/qgraph_io.h"
#include "compiler/qref.h"
#include "run_util.h"

namespace npuforge::run_testing {
namespace {

TEST(RunModel, CompiledModelRunsCleanAndBitExact) {
  ScratchDir dir("run_clean");
  ASSERT_EQ(compile(dir, "out").code, 0);
  const std::string x = input(dir);
  const CliRun r = run_cli("run-model " + dir.path("out") + " --input " + x + " --output " + dir.path("y.npy"));
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("PASS: every segment clean and bit-exact"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("seg0   npu"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(" cpu "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("arena: planner"), std::string::npos) << r.out;
  // The output file is the int8 reference's output on the same input, exactly.
  const compiler::QGraph g = compiler::read_qgraph(dir.path("out") + "/qgraph.bin");
  const compiler::QrefResult ref = compiler::run_qref(g, {{"x", model::read_npy(x)}});
  EXPECT_TRUE(model::read_npy(dir.path("y.npy")) == ref.outputs.at("probs"));
  // Another input gives another output, still clean.
  const CliRun r2 = run_cli("run-model " + dir.path("out") + " --input " + input(dir, 99) + " --backend sequential");
  EXPECT_EQ(r2.code, 0) << r2.out;
}

TEST(RunModel, CheckPlanOnACompiledMemoryMapChecksTheDdrTensors) {
  ScratchDir dir("run_checkplan");
  ASSERT_EQ(compile(dir, "out").code, 0);
  const CliRun r = run_cli("check-plan " + dir.path("out/seg0.memmap.yaml"));
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("(DDR tensors)"), std::string::npos) << r.out;
}

TEST(RunModel, BadInputsAreClearErrors) {
  ScratchDir dir("run_bad");
  ASSERT_EQ(compile(dir, "out").code, 0);
  model::write_npy(dir.path("small.npy"), model::Tensor(model::DType::kFloat32, {1, 3, 16, 16}));
  CliRun r = run_cli("run-model " + dir.path("out") + " --input " + dir.path("small.npy"));
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.out.find("input 'x' is 1x3x16x16"), std::string::npos) << r.out;
  r = run_cli("run-model " + dir.path("") + " --input " + dir.path("small.npy"));
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.out.find("without manifest.yaml"), std::string::npos) << r.out;
  r = run_cli("run-model " + small_convnet() + " --input " + dir.path("small.npy") + " --rtl");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.out.find("are for compiled models"), std::string::npos) << r.out;
}

struct Row {
  std::string id;
  int64_t lower = 0, upper = 0;
  uint64_t size = 0, offset = 0;
};

// The rows of a plan CSV written by `npuforge plan` (id,lower,upper,size,alignment,offset).
std::vector<Row> read_plan(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  std::vector<Row> rows;
  while (std::getline(in, line)) {
    std::stringstream s(line);
    std::string f;
    std::vector<std::string> v;
    while (std::getline(s, f, ',')) v.push_back(f);
    if (v.size() < 6) continue;
    rows.push_back({v[0], std::stoll(v[1]), std::stoll(v[2]), std::stoull(v[3]), std::stoull(v[5])});
  }
  return rows;
}

void write_plan(const std::string& path, const std::vector<Row>& rows) {
  std::ofstream out(path);
  out << "id,lower,upper,size,offset\n";
  for (const Row& r : rows) out << r.id << ',' << r.lower << ',' << r.upper << ',' << r.size << ',' << r.offset << '\n';
}

TEST(RunModel, TightLegalOutsidePlanRunsCleanAndAnOverlappingOneIsCaught) {
  ScratchDir dir("run_outside");
  const std::string model = std::string(NPUFORGE_SOURCE_DIR) + "/tests/compiler_run/data/residual_cnn.yaml";
  const CliRun exported = run_cli("compile " + model + " --samples 2 -q --export-lifetimes " + dir.path("t.csv"));
  ASSERT_EQ(exported.code, 0) << exported.out;
  // Another compiler's plan: the exact offline planner on the exported lifetimes.
  const CliRun planned =
      run_cli("plan --algo exact --time-limit 5 " + dir.path("t.csv") + " -o " + dir.path("plan.csv"));
  ASSERT_EQ(planned.code, 0) << planned.out;
  ASSERT_EQ(compile(dir, "tight", "--arena-plan " + dir.path("plan.csv"), model).code, 0);
  const std::string x = input(dir, 11, 16);
  const CliRun tight = run_cli("run-model " + dir.path("tight") + " --input " + x);
  EXPECT_EQ(tight.code, 0) << tight.out;
  EXPECT_NE(tight.out.find("outside:plan.csv"), std::string::npos) << tight.out;

  // Two live tensors at one offset: b is produced while a is still read by a later op (the
  // residual: conv2's output on p1's bytes, which the Add reads after). Overlapping a tensor
  // with the output of its last reader can be harmless (an op that loads all its input before
  // it stores), so the test picks a pair where it cannot be.
  std::vector<Row> rows = read_plan(dir.path("plan.csv"));
  ASSERT_GE(rows.size(), 2u);
  size_t a = 0, b = 0;
  for (size_t i = 0; i < rows.size() && !b; ++i)
    for (size_t j = i + 1; j < rows.size() && !b; ++j)
      if (rows[j].lower > rows[i].lower && rows[i].upper - 1 > rows[j].lower) a = i, b = j;
  ASSERT_NE(b, 0u);
  rows[b].offset = rows[a].offset;
  write_plan(dir.path("bad.csv"), rows);
  const CliRun bad_compile = compile(dir, "bad", "--arena-plan " + dir.path("bad.csv"), model);
  ASSERT_EQ(bad_compile.code, 0) << bad_compile.out;  // compiled anyway: the simulator must catch it
  EXPECT_NE(bad_compile.out.find("FINDINGS"), std::string::npos) << bad_compile.out;

  const CliRun run = run_cli("run-model " + dir.path("bad") + " --input " + x + " --max-errors 50");
  EXPECT_EQ(run.code, 1) << run.out;
  const std::string& ta = rows[a].id;
  const std::string& tb = rows[b].id;
  // A finding of the DDR checker on the simulated NPU, naming both tensors.
  bool named_both = false;
  std::stringstream lines(run.out);
  for (std::string line; std::getline(lines, line);)
    if (line.find("[ddr/ddr-") != std::string::npos && line.find("%" + ta) != std::string::npos &&
        line.find("%" + tb) != std::string::npos && line.find("at cycle") != std::string::npos)
      named_both = true;
  EXPECT_TRUE(named_both) << "tensors " << ta << " and " << tb << "\n" << run.out;

  // check-plan on the segment's memory map says the same statically.
  bool static_found = false;
  for (int s = 0; s < 4 && !static_found; ++s) {
    const std::string map = dir.path("bad") + "/seg" + std::to_string(s) + ".memmap.yaml";
    if (!std::filesystem::exists(map)) continue;
    const CliRun check = run_cli("check-plan " + map);
    static_found = check.code == 1 && check.out.find("'" + ta + "'") != std::string::npos &&
                   check.out.find("'" + tb + "'") != std::string::npos;
  }
  EXPECT_TRUE(static_found);
}

}  // namespace
}  // namespace npuforge::run_testing
