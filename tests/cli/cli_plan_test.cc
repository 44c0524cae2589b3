// `npuforge plan` and `npuforge check-plan` end to end: every planner on small instances
// (its CSV then checked by check-plan), each check-plan outcome with its exit code, bad input
// and usage errors, and the --svg pictures parsed for well-formedness.
#include <gtest/gtest.h>

#include <regex>

#include "bundle/memmap.h"
#include "cli_util.h"
#include "planner/plan_io.h"
#include "planner/planner.h"

namespace npuforge::planner {
namespace {

using namespace cli_testing;

const std::string kExample = std::string(NPUFORGE_SOURCE_DIR) + "/tests/data/minimalloc/examples/input.12.csv";

// Ten buffers with power-of-two alignments: planners must keep every offset aligned.
const char* kAligned =
    "id,lower,upper,size,alignment\n"
    "w0,0,10,96,32\nw1,0,4,40,8\nt2,1,3,64,64\nt3,2,6,24,8\nt4,3,9,100,4\n"
    "t5,4,7,16,16\nt6,5,10,72,8\nt7,6,8,8,1\nt8,7,10,48,16\nt9,8,10,32,32\n";

// The number after `label` in `text` ("peak 12 bytes" -> 12), or -1.
int64_t number_after(const std::string& text, const std::string& label) {
  std::smatch m;
  if (!std::regex_search(text, m, std::regex(label + " ([0-9]+)"))) return -1;
  return std::stoll(m[1].str());
}

// Every --algo on the MiniMalloc example and on an aligned set: exit 0, the written plan
// keeps every buffer as given and places each one, the reported peak is the plan's, and
// check-plan accepts the CSV and the YAML it wrote.
TEST(CliPlan, EveryAlgoWritesAPlanThatCheckPlanAccepts) {
  ScratchDir tmp("cli_plan");
  const std::vector<std::pair<std::string, std::string>> inputs = {
      {"example", kExample}, {"aligned", tmp.write("aligned.csv", kAligned)}};
  for (const auto& [label, input] : inputs) {
    const PlanProblem problem = load_plan_file(input);
    for (const std::string& algo : planner_names()) {
      SCOPED_TRACE(label + " --algo " + algo);
      const std::string csv = tmp.path(label + "." + algo + ".csv");
      const std::string yaml = tmp.path(label + "." + algo + ".yaml");
      const CliRun r = run_cli("plan --algo " + algo + " " + input + " -o " + csv + " -o " + yaml);
      ASSERT_EQ(r.code, 0) << r.out;
      EXPECT_NE(r.out.find(algo + " " + std::to_string(problem.buffers.size()) + " buffers"), std::string::npos)
          << r.out;
      EXPECT_EQ(number_after(r.out, "lower bound"), int64_t(lower_bound(problem).value)) << r.out;

      const PlanProblem plan = load_plan_file(csv);
      ASSERT_EQ(plan.buffers.size(), problem.buffers.size());
      for (size_t i = 0; i < plan.buffers.size(); ++i) {
        PlanBuffer placed = plan.buffers[i];
        ASSERT_TRUE(placed.offset.has_value()) << placed.id;
        EXPECT_EQ(*placed.offset % placed.alignment.value, 0u) << placed.id;
        placed.offset.reset();
        EXPECT_EQ(placed, problem.buffers[i]);
      }
      EXPECT_EQ(number_after(r.out, "peak"), int64_t(plan_peak(plan).value)) << r.out;
      EXPECT_EQ(load_plan_file(yaml), plan);
      for (const std::string& out : {csv, yaml}) {
        const CliRun check = run_cli("check-plan " + out);
        EXPECT_EQ(check.code, 0) << check.out;
        EXPECT_NE(check.out.find("plan OK"), std::string::npos) << check.out;
        EXPECT_NE(check.out.find(", 0 findings"), std::string::npos) << check.out;
      }
    }
  }
}

TEST(CliPlan, ExactFindsTheOptimumAndProvesOneByteLessImpossible) {
  const CliRun fits = run_cli("plan --algo exact --capacity 12 " + kExample);
  EXPECT_EQ(fits.code, 0) << fits.out;
  EXPECT_EQ(number_after(fits.out, "peak"), 12) << fits.out;
  EXPECT_NE(fits.out.find("optimal"), std::string::npos) << fits.out;

  const CliRun none = run_cli("plan --algo exact --capacity 11 " + kExample);
  EXPECT_EQ(none.code, 1) << none.out;
  EXPECT_NE(none.out.find("5 buffers cannot be placed within capacity 11"), std::string::npos) << none.out;
}

// best: the portfolio names the planner whose placement it kept and says "optimal" only
// with a proof (here the peak equals the load bound, 12).
TEST(CliPlan, BestReportsTheWinnerAndTheProof) {
  const CliRun r = run_cli("plan --algo best --time-limit 5 " + kExample);
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(number_after(r.out, "peak"), 12) << r.out;
  EXPECT_NE(r.out.find("optimal (proven)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(" won ("), std::string::npos) << r.out;
  const CliRun zero = run_cli("plan --algo best --time-limit 0 " + kExample);
  EXPECT_EQ(zero.code, 2) << zero.out;  // a budget must be positive
}

TEST(CliPlan, AHeuristicAboveTheCapacityExitsOne) {
  ScratchDir tmp("cli_plan_cap");
  const std::string out = tmp.path("naive.csv");
  const CliRun r = run_cli("plan --algo naive --capacity 12 " + kExample + " -o " + out);
  EXPECT_EQ(r.code, 1) << r.out;  // naive stacks every buffer: peak 20
  EXPECT_NE(r.out.find("out of capacity"), std::string::npos) << r.out;
}

TEST(CliPlan, BadInputExitsOneNamingTheProblem) {
  ScratchDir tmp("cli_plan_bad");
  const struct {
    std::string args, message;
  } cases[] = {
      {"--algo nope " + kExample, "unknown planner 'nope'"},
      {tmp.write("x.csv", "id,lower,upper,size\na,0,3,8\nb,1,x4,8\n"),
       "x.csv:3:5: expected an integer for 'upper', got 'x4'"},
      {tmp.write("back.csv", "id,lower,upper,size\na,5,3,8\n"), "back.csv:2:1: buffer 'a' has lower 5 > upper 3"},
      {"--capacity 12k " + kExample, "--capacity: expected a number"},
      {"--algo exact " + tmp.write("fixed.csv", "id,lower,upper,size,offset\na,0,3,8,0\nb,0,3,8,\n"),
       "only naive and greedy-size keep fixed offsets"},
  };
  for (const auto& c : cases) {
    const CliRun r = run_cli("plan " + c.args);
    EXPECT_EQ(r.code, 1) << c.args << "\n" << r.out;
    EXPECT_NE(r.out.find(c.message), std::string::npos) << c.args << "\n" << r.out;
    EXPECT_NE(r.out.find("error"), std::string::npos) << r.out;
  }
}

TEST(CliPlan, UsageErrorsExitTwo) {
  const std::vector<std::string> usage_errors = {"plan", "plan --no-such-option " + kExample, "check-plan",
                                                 "check-plan --instances x " + kExample};
  for (const std::string& args : usage_errors) {
    const CliRun r = run_cli(args);
    EXPECT_EQ(r.code, 2) << args << "\n" << r.out;
  }
  // A missing input file is bad input, not a usage error (tests/cli/cli_exit_codes_test.cc).
  for (const std::string args : {"plan /no/such/file.csv", "check-plan /no/such/plan.csv"}) {
    const CliRun r = run_cli(args);
    EXPECT_EQ(r.code, 1) << args << "\n" << r.out;
  }
}

// check-plan: a clean plan exits 0; each kind of finding exits 1 with its line.
TEST(CliCheckPlan, EachOutcomeAndItsExitCode) {
  ScratchDir tmp("cli_check");
  const struct {
    std::string name, csv, options;
    int code;
    std::vector<std::string> lines;
  } cases[] = {
      {"ok.csv", "id,lower,upper,size,offset\na,0,4,8,0\nb,4,8,8,0\nc,0,8,8,8\n", "", 0,
       {"plan OK: 3 buffers, peak 16 bytes, lower bound 16 bytes (1.0000x), 0 findings"}},
      {"overlap.csv", "id,lower,upper,size,offset\na,0,4,8,0\nb,3,8,8,4\n", "", 1,
       {"overlap: buffers 'a' at [0x0, 0x8) live [0, 4) and 'b' at [0x4, 0xc) live [3, 8) share bytes [0x4, 0x8)",
        "plan BAD"}},
      {"misaligned.csv", "id,lower,upper,size,alignment,offset\na,0,4,8,8,4\n", "", 1,
       {"misaligned: buffer 'a' at [0x4, 0xc) live [0, 4): offset is not a multiple of its alignment 8"}},
      {"capacity.csv", "id,lower,upper,size,offset\na,0,4,8,0\nb,0,4,8,8\n", "--capacity 12", 1,
       {"out of capacity: buffer 'b' at [0x8, 0x10) live [0, 4): ends past the capacity 0xc (12 bytes)"}},
      {"capacity.csv", "", "--capacity 16", 0, {"plan OK"}},
      {"missing.csv", "id,lower,upper,size,offset\na,0,4,8,0\nb,0,4,8,\n", "", 1,
       {"missing offset: buffer 'b' has no offset"}},
      {"inclusive.csv", "id,lower,upper,size,offset\na,0,4,8,0\nb,4,8,8,0\n", "--inclusive", 1,
       {"'a' at [0x0, 0x8) live [0, 5) and 'b' at [0x0, 0x8) live [4, 9)"}},  // [0, 4] and [4, 8] meet at 4
  };
  for (const auto& c : cases) {
    if (!c.csv.empty()) tmp.write(c.name, c.csv);
    const CliRun r = run_cli("check-plan " + tmp.path(c.name) + " " + c.options);
    EXPECT_EQ(r.code, c.code) << c.name << " " << c.options << "\n" << r.out;
    for (const auto& line : c.lines) EXPECT_NE(r.out.find(line), std::string::npos) << c.name << "\n" << r.out;
  }
  // A backwards lifetime never reaches the checker from a file: the reader refuses it.
  const CliRun back = run_cli("check-plan " + tmp.write("back.csv", "id,lower,upper,size,offset\na,5,3,8,0\n"));
  EXPECT_EQ(back.code, 1) << back.out;
  EXPECT_NE(back.out.find("back.csv:2:1: buffer 'a' has lower 5 > upper 3"), std::string::npos) << back.out;
}

// A generator memory map: inclusive lifetimes, the map's capacity and alignment, symbols named.
TEST(CliCheckPlan, MemoryMaps) {
  ScratchDir tmp("cli_check_memmap");
  bundle::MemMap m;
  m.sram_bytes = Bytes{512};
  m.alignment = Bytes{64};
  m.instructions = 10;
  m.buffers = {{"act0", SramAddr{0}, Bytes{128}, 0, 4, 0, {4}},
               {"act1", SramAddr{0}, Bytes{128}, 5, 9, 5, {9}},
               {"w", SramAddr{128}, Bytes{256}, 0, 9, 0, {9}}};
  const std::string good = tmp.path("good.memmap.yaml");
  m.save_file(good);
  const CliRun ok = run_cli("check-plan " + good);
  EXPECT_EQ(ok.code, 0) << ok.out;
  EXPECT_NE(ok.out.find("plan OK: 3 buffers, peak 384 bytes"), std::string::npos) << ok.out;

  m.buffers[1].first = 4;  // act1 produced by the instruction that last reads act0
  const std::string overlap = tmp.path("overlap.memmap.yaml");
  m.save_file(overlap);
  const CliRun r = run_cli("check-plan " + overlap);
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("'act0'"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("'act1'"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("live [4, 10)"), std::string::npos) << r.out;  // inclusive [4, 9], written half-open

  m.buffers[1].first = 5;
  m.buffers[2].offset = SramAddr{160};  // not a multiple of the map's 64-byte alignment
  m.buffers[2].size = Bytes{384};       // and past the 512-byte SRAM
  const std::string bad = tmp.path("bad.memmap.yaml");
  m.save_file(bad);
  const CliRun b = run_cli("check-plan " + bad);
  EXPECT_EQ(b.code, 1) << b.out;
  EXPECT_NE(b.out.find("misaligned: buffer 'w'"), std::string::npos) << b.out;
  EXPECT_NE(b.out.find("out of capacity: buffer 'w'"), std::string::npos) << b.out;

  // first > last is refused when the map is read, naming the file and the field.
  std::string text = read_text(good);
  const size_t at = text.find("first: 5");
  ASSERT_NE(at, std::string::npos) << text;
  text.replace(at, 8, "first: 12");
  const CliRun back = run_cli("check-plan " + tmp.write("back.memmap.yaml", text));
  EXPECT_EQ(back.code, 1) << back.out;
  EXPECT_NE(back.out.find("back.memmap.yaml"), std::string::npos) << back.out;
  EXPECT_NE(back.out.find("buffers[1].last"), std::string::npos) << back.out;
}

TEST(CliCheckPlan, AddressesLayInstancesSideBySide) {
  ScratchDir tmp("cli_check_addr");
  const std::string plan = tmp.write("p.csv", "id,lower,upper,size,offset\na,0,4,8,0\nb,0,8,8,8\n");
  const std::string out = tmp.path("addr.csv");
  const CliRun r = run_cli("check-plan " + plan + " --addresses " + out + " --base 0x1000 --instances 2");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(read_text(out), "instance,id,address,size\n0,a,0x1000,8\n0,b,0x1008,8\n1,a,0x1010,8\n1,b,0x1018,8\n");
  // No addresses after a failed check.
  const std::string bad = tmp.write("bad.csv", "id,lower,upper,size,offset\na,0,4,8,0\nb,0,8,8,4\n");
  const std::string out2 = tmp.path("addr2.csv");
  EXPECT_EQ(run_cli("check-plan " + bad + " --addresses " + out2).code, 1);
  EXPECT_FALSE(fs::exists(out2));
}

// The well-formedness check itself, on broken documents.
TEST(CliSvg, TheXmlCheckCatchesBrokenDocuments) {
  EXPECT_EQ(xml_problem("<svg a='1'><g><rect x=\"2\"/></g>&amp;</svg>\n", "svg"), "");
  for (const char* bad : {"<svg><g></svg>", "<svg><g>", "<svg a=1/>", "<svg>&x</svg>", "<svg/><svg/>",
                          "<html/>", "<svg a='<'/>", "<svg>a > b</svg>", "x<svg/>", "<svg></g></svg>"})
    EXPECT_NE(xml_problem(bad, "svg"), "") << bad;
}

// --svg on an overlapping plan: well formed, one group per buffer, the buffers of each overlap
// outlined in red and one red rectangle per overlap; ids are escaped.
TEST(CliSvg, OverlapsAreRedAndTheDocumentIsWellFormed) {
  ScratchDir tmp("cli_svg");
  const std::string plan = tmp.write(
      "p.csv", "id,lower,upper,size,offset\nx<&>y,0,4,8,0\nb,2,6,8,4\nc,0,9,8,12\nd,6,9,4,0\n");
  const std::string svg = tmp.path("p.svg");
  const CliRun r = run_cli("check-plan " + plan + " --svg " + svg);
  EXPECT_EQ(r.code, 1) << r.out;  // x<&>y and b share bytes [4, 8) at times [2, 4); no other pair
  const std::string text = read_text(svg);
  EXPECT_EQ(xml_problem(text, "svg"), "") << text;
  EXPECT_EQ(count_of(text, "<g>"), 4u) << text;
  EXPECT_EQ(count_of(text, "stroke='red'"), 2u) << text;  // x<&>y and b
  EXPECT_EQ(count_of(text, "fill='red'"), 1u) << text;    // their shared bytes
  EXPECT_NE(text.find("x&lt;&amp;&gt;y"), std::string::npos) << text;
  EXPECT_EQ(text.find("x<&>y"), std::string::npos) << text;

  // The same buffers planned by the CLI: no red at all.
  const std::string input = tmp.write("in.csv", "id,lower,upper,size\nx<&>y,0,4,8\nb,2,6,8\nc,0,9,8\nd,6,9,4\n");
  const std::string planned = tmp.path("planned.svg");
  const CliRun p = run_cli("plan --algo greedy-size " + input + " --svg " + planned);
  EXPECT_EQ(p.code, 0) << p.out;
  const std::string clean = read_text(planned);
  EXPECT_EQ(xml_problem(clean, "svg"), "") << clean;
  EXPECT_EQ(count_of(clean, "<g>"), 4u) << clean;
  EXPECT_EQ(count_of(clean, "red"), 0u) << clean;
  EXPECT_NE(clean.find("peak " + std::to_string(number_after(p.out, "peak"))), std::string::npos) << clean;
}

// Many overlaps: twelve buffers at offset 0, all live at time 0, so all 66 pairs overlap
// (fewer than the 100 findings kept): 66 red rectangles, every buffer outlined in red.
TEST(CliSvg, EveryOverlapOfADensePlanIsDrawn) {
  ScratchDir tmp("cli_svg_dense");
  std::string csv = "id,lower,upper,size,offset\n";
  for (int i = 0; i < 12; ++i) csv += "b" + std::to_string(i) + ",0," + std::to_string(1 + i % 5) + ",16,0\n";
  const std::string plan = tmp.write("dense.csv", csv);
  const std::string svg = tmp.path("dense.svg");
  const CliRun r = run_cli("check-plan " + plan + " --svg " + svg);
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_EQ(count_of(r.out, "overlap: "), 66u) << r.out;
  EXPECT_NE(r.out.find(", 66 findings"), std::string::npos) << r.out;
  const std::string text = read_text(svg);
  EXPECT_EQ(xml_problem(text, "svg"), "") << text;
  EXPECT_EQ(count_of(text, "<g>"), 12u);
  EXPECT_EQ(count_of(text, "stroke='red'"), 12u);
  EXPECT_EQ(count_of(text, "fill='red'"), 66u);
}

}  // namespace
}  // namespace npuforge::planner
