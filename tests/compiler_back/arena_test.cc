// Lifetimes from the schedule (reference counts, aliases sharing bytes), the arena problem,
// --export-lifetimes / --arena-plan round trips, wrong outside plans reported but not refused,
// and the DDR layout.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "compiler/arena.h"
#include "planner/plan_io.h"
#include "qgraph_builder.h"
#include "util/error.h"

namespace npuforge::compiler {
namespace {

// x -> conv c1 -> maxpool p1 -> conv c2; add(p1, c2) -> alias r1 -> gemm g1 (model output).
QGraph small_graph() {
  testing::QGraphBuilder b;
  const TensorId x = b.image("x", 6, 6, 4);
  b.input(x);
  Window w3;
  w3.kernel_h = w3.kernel_w = 3;
  w3.pad_top = w3.pad_left = w3.pad_bottom = w3.pad_right = 1;
  const TensorId c1 = b.conv(x, "c1", w3, 1, 8);
  Window w2;
  w2.kernel_h = w2.kernel_w = w2.stride_h = w2.stride_w = 2;
  const TensorId p1 = b.pool(c1, "p1", PoolOp::Kind::kMax, w2);
  const TensorId c2 = b.conv(p1, "c2", Window{}, 1, 8);
  const TensorId a1 = b.eltwise(EltwiseOp::Kind::kAdd, p1, c2, "a1");
  const TensorId r1 = b.alias(a1, "r1", {1, 72}, Layout::kRowMajor);
  const TensorId g1 = b.gemm(r1, "g1", 10);
  b.output(g1);
  return b.done();
}

std::filesystem::path temp_file(const std::string& name) {
  return std::filesystem::temp_directory_path() / ("npuforge_arena_" + std::to_string(::getpid()) + "_" + name);
}

TEST(Lifetimes, FromTheScheduleWithAliasesSharingBytes) {
  const QGraph g = small_graph();
  const Lifetimes l = derive_lifetimes(g, 64);
  ASSERT_EQ(l.arena.size(), 4u);  // c1, p1, c2, a1 (+ r1); x is an input, g1 an output
  EXPECT_EQ(l.arena[0].name, "c1");
  EXPECT_EQ(l.arena[0].life, (planner::Lifespan{0, 2}));
  EXPECT_EQ(l.arena[0].bytes, 320u);  // 6 * 6 * 8 = 288 padded to 64
  EXPECT_EQ(l.arena[1].name, "p1");
  EXPECT_EQ(l.arena[1].life, (planner::Lifespan{1, 4}));
  EXPECT_EQ(l.arena[2].name, "c2");
  EXPECT_EQ(l.arena[2].life, (planner::Lifespan{2, 4}));
  EXPECT_EQ(l.arena[3].name, "a1");  // its alias r1 is read by the gemm at step 5
  EXPECT_EQ(l.arena[3].life, (planner::Lifespan{3, 6}));
  const TensorId r1 = g.find("r1"), a1 = g.find("a1");
  EXPECT_EQ(l.root[r1.value], a1);
  EXPECT_EQ(l.arena_of[r1.value], 3);
  EXPECT_EQ(l.region[g.find("x").value], Region::kInput);
  EXPECT_EQ(l.region[g.find("g1").value], Region::kOutput);
  ASSERT_EQ(l.input_roots.size(), 1u);
  ASSERT_EQ(l.output_roots.size(), 1u);
}

TEST(Lifetimes, ADeadOutputLivesOneStepAndAnAliasedOutputMovesItsGroup) {
  testing::QGraphBuilder b;
  const TensorId x = b.matrix("x", 2, 8);
  b.input(x);
  const TensorId dead = b.gemm(x, "dead", 4);
  const TensorId y = b.gemm(x, "y", 8);
  const TensorId z = b.alias(y, "z", {16}, Layout::kRowMajor);
  b.output(z);
  const QGraph g = b.done();
  const Lifetimes l = derive_lifetimes(g, 16);
  ASSERT_EQ(l.arena.size(), 1u);
  EXPECT_EQ(l.arena[0].name, "dead");
  EXPECT_EQ(l.arena[0].life, (planner::Lifespan{0, 1}));
  EXPECT_EQ(l.region[y.value], Region::kOutput);  // y's bytes are the model output z's
  EXPECT_EQ(l.region[z.value], Region::kOutput);
  (void)dead;
}

TEST(ArenaPlan, ExportedLifetimesPlanElsewhereAndComeBack) {
  const QGraph g = small_graph();
  const Lifetimes l = derive_lifetimes(g, 64);
  const planner::PlanProblem p = arena_problem(l, 64);
  const std::string csv = planner::write_plan_csv(p);
  EXPECT_NE(csv.find("c1,0,2,320,64"), std::string::npos) << csv;
  // Another compiler plans the exported problem...
  const planner::PlanProblem outside = planner::read_plan_csv(csv, "t.csv");
  const ArenaPlan mine = plan_arena(outside, "greedy-size", 1.0);
  const auto path = temp_file("plan.csv");
  planner::save_plan_file(planner::with_offsets(outside, mine.offsets), path);
  // ... and npuforge takes its offsets.
  const ArenaPlan back = read_arena_plan(p, path);
  EXPECT_EQ(back.offsets, mine.offsets);
  EXPECT_TRUE(back.clean) << back.verdict;
  EXPECT_EQ(back.peak, mine.peak);
  EXPECT_EQ(back.lower_bound, planner::lower_bound(p).value);
  EXPECT_EQ(back.planner, "outside:" + path.filename().string());
  std::filesystem::remove(path);
}

TEST(ArenaPlan, AWrongOutsidePlanIsReportedNotRefused) {
  const QGraph g = small_graph();
  const planner::PlanProblem p = arena_problem(derive_lifetimes(g, 64), 64);
  // c1 and p1 are both live at step 1: give them the same bytes.
  const auto path = temp_file("bad.csv");
  std::ofstream(path) << "id,lower,upper,size,offset\nc1,0,2,320,0\np1,1,4,128,0\nc2,2,4,128,512\na1,3,6,128,1024\n";
  const ArenaPlan plan = read_arena_plan(p, path);
  EXPECT_FALSE(plan.clean);
  EXPECT_NE(plan.verdict.find("c1"), std::string::npos) << plan.verdict;
  EXPECT_NE(plan.verdict.find("p1"), std::string::npos) << plan.verdict;
  EXPECT_EQ(plan.offsets, (std::vector<uint64_t>{0, 0, 512, 1024}));
  std::filesystem::remove(path);
}

TEST(ArenaPlan, PlansThatDoNotNameTheTensorsAreErrors) {
  const QGraph g = small_graph();
  const planner::PlanProblem p = arena_problem(derive_lifetimes(g, 64), 64);
  auto error_of = [&](const std::string& text) {
    const auto path = temp_file("e.csv");
    std::ofstream(path) << text;
    std::string what = "(no error)";
    try {
      read_arena_plan(p, path);
    } catch (const Error& e) {
      what = e.what();
    }
    std::filesystem::remove(path);
    return what;
  };
  const std::string missing = error_of("id,lower,upper,size,offset\nc1,0,2,320,0\np1,1,4,128,512\nc2,2,4,128,1024\n");
  EXPECT_NE(missing.find("no row for the arena tensor 'a1'"), std::string::npos) << missing;
  EXPECT_NE(missing.find("e.csv"), std::string::npos) << missing;
  const std::string extra = error_of(
      "id,lower,upper,size,offset\nc1,0,2,320,0\np1,1,4,128,512\nc2,2,4,128,1024\na1,3,6,128,2048\nzz,0,1,64,0\n");
  EXPECT_NE(extra.find("'zz' is not an arena tensor"), std::string::npos) << extra;
  const std::string no_offset = error_of("id,lower,upper,size,offset\nc1,0,2,320,\n");
  EXPECT_NE(no_offset.find("'c1' has no offset"), std::string::npos) << no_offset;
}

TEST(ArenaPlan, TheDefaultChoiceIsNoWorseThanAnyFastPlanner) {
  const QGraph g = small_graph();
  const planner::PlanProblem p = arena_problem(derive_lifetimes(g, 64), 64);
  const ArenaPlan best = plan_arena(p, "", 1.0);
  EXPECT_TRUE(best.clean) << best.verdict;
  EXPECT_FALSE(best.planner.empty());
  for (const char* name : {"greedy-size", "linked-list", "naive"}) EXPECT_LE(best.peak, plan_arena(p, name, 1.0).peak);
  EXPECT_GE(best.peak, best.lower_bound);
  EXPECT_THROW(plan_arena(p, "no-such-planner", 1.0), Error);
}

TEST(DdrLayout, RegionsInOrderAlignedAndCheckedAgainstTheDdr) {
  const QGraph g = small_graph();
  const Lifetimes l = derive_lifetimes(g, 64);
  const ArenaPlan plan = plan_arena(arena_problem(l, 64), "greedy-size", 1.0);
  const isa::NpuConfig npu;
  const DdrLayout d = layout_ddr(g, l, plan, 1000, npu);
  EXPECT_EQ(d.weights.base, 0u);
  EXPECT_EQ(d.weights.bytes, 1024u);
  EXPECT_EQ(d.inputs.base, 1024u);
  EXPECT_EQ(d.inputs.bytes, 192u);  // 6 * 6 * 4 = 144 padded
  EXPECT_EQ(d.arena.base, d.inputs.end());
  EXPECT_EQ(d.outputs.base, d.arena.end());
  EXPECT_EQ(d.addr[g.find("x").value], d.inputs.base);
  EXPECT_EQ(d.addr[g.find("g1").value], d.outputs.base);
  EXPECT_EQ(d.addr[g.find("r1").value], d.addr[g.find("a1").value]);
  for (size_t i = 0; i < l.arena.size(); ++i) EXPECT_EQ(d.addr[l.arena[i].root.value], d.arena.base + plan.offsets[i]);
  const isa::NpuConfig tiny = isa::NpuConfig::load_string("sram_bytes: 1024\nddr_bytes: 4096\n", "tiny.yaml");
  try {
    layout_ddr(g, l, plan, 4000, tiny);
    ADD_FAILURE() << "a model larger than the DDR was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("ddr_bytes 4096"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace npuforge::compiler
