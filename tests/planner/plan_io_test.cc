// CSV and YAML plan files: round trips, the minimalloc example, and errors with positions.
#include <gtest/gtest.h>

#include <filesystem>
#include <tuple>
#include <vector>

#include "planner/plan_io.h"
#include "util/error.h"
#include "plan_test_util.h"

namespace npuforge::planner {
namespace {

std::string error_of(auto&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(PlanIo, RoundTripsRandomPlans) {
  Rng rng(7);
  for (int k = 0; k < 500; ++k) {
    PlanProblem p = testing::random_problem(rng, 12, 30, 5000, k % 2 == 0);
    for (auto& b : p.buffers)
      if (rng.chance(0.7)) b.offset = uint64_t(rng.range(0, 100000));
    if (k % 3 == 0) p.buffers[0].id = "name: with # odd chars";
    EXPECT_EQ(read_plan_yaml(write_plan_yaml(p), "t.yaml"), p);
    if (k % 3 == 0) continue;  // CSV has no quoting
    PlanProblem q = read_plan_csv(write_plan_csv(p), "t.csv");
    EXPECT_EQ(q, p);
  }
}

TEST(PlanIo, ReadsTheMinimallocExample) {
  const PlanProblem p = load_plan_file(std::filesystem::path(NPUFORGE_SOURCE_DIR) /
                                       "tests/data/minimalloc/examples/input.12.csv");
  ASSERT_EQ(p.buffers.size(), 5u);
  EXPECT_EQ(p.buffers[0].id, "b1");
  EXPECT_EQ(lower_bound(p).value, 12u);
}

// The seven instances in tests/data/minimalloc/: buffer counts and lower bounds as listed in
// its README (a check that the copies are whole and parse as MiniMalloc's own format).
TEST(PlanIo, ReadsTheChallengingInstances) {
  const std::vector<std::tuple<const char*, size_t, uint64_t>> expected = {
      {"A", 154, 1048576}, {"B", 170, 1048576}, {"C", 203, 1039360}, {"D", 213, 986112},
      {"E", 215, 1048576}, {"F", 296, 1048576}, {"G", 308, 1048576}};
  for (const auto& [name, buffers, lb] : expected) {
    const PlanProblem p = load_plan_file(std::filesystem::path(NPUFORGE_SOURCE_DIR) /
                                         "tests/data/minimalloc/challenging" / (std::string(name) + ".1048576.csv"));
    EXPECT_EQ(p.buffers.size(), buffers) << name;
    EXPECT_EQ(lower_bound(p).value, lb) << name;
  }
}

TEST(PlanIo, InclusiveLifetimes) {
  const std::string csv = "id,lower,upper,size\na,0,3,8\n";
  EXPECT_EQ(read_plan_csv(csv, "x.csv").buffers[0].lifespan, (Lifespan{0, 3}));
  EXPECT_EQ(read_plan_csv(csv, "x.csv", {.inclusive = true}).buffers[0].lifespan, (Lifespan{0, 4}));
  // minimalloc's legacy `end` column is inclusive.
  EXPECT_EQ(read_plan_csv("buffer,start,end,size\na,0,3,8\n", "x.csv").buffers[0].lifespan,
            (Lifespan{0, 4}));
  const std::string yaml = "lifetimes: inclusive\nbuffers:\n  - {id: a, lower: 0, upper: 3, size: 8}\n";
  EXPECT_EQ(read_plan_yaml(yaml, "x.yaml").buffers[0].lifespan, (Lifespan{0, 4}));
}

TEST(PlanIo, CsvErrorsNameFileLineColumn) {
  EXPECT_EQ(error_of([] { read_plan_csv("id,lower,upper,size\na,0,3,8\nb,1,x4,8\n", "p.csv"); }),
            "p.csv:3:5: expected an integer for 'upper', got 'x4'");
  EXPECT_EQ(error_of([] { read_plan_csv("id,lower,upper,size,colour\n", "p.csv"); }).substr(0, 35),
            "p.csv:1:21: unknown column 'colour'");
  EXPECT_EQ(error_of([] { read_plan_csv("id,lower,size\n", "p.csv"); }),
            "p.csv:1:1: missing column 'upper'");
  EXPECT_EQ(error_of([] { read_plan_csv("id,lower,upper,size\na,0,3\n", "p.csv"); }),
            "p.csv:2:1: expected 4 fields, got 3");
  EXPECT_EQ(error_of([] { read_plan_csv("id,lower,upper,size\na,0,3,-8\n", "p.csv"); }),
            "p.csv:2:7: 'size' must be >= 0, got -8");
  EXPECT_EQ(error_of([] { read_plan_csv("id,lower,upper,size\na,5,3,8\n", "p.csv"); }),
            "p.csv:2:1: buffer 'a' has lower 5 > upper 3");
  EXPECT_EQ(error_of([] { read_plan_csv("id,lower,upper,size\na,0,3,8\na,0,3,8\n", "p.csv"); }),
            "p.csv:3:1: duplicate buffer id 'a'");
}

TEST(PlanIo, YamlErrorsNameFileLineColumn) {
  EXPECT_EQ(error_of([] {
              read_plan_yaml("buffers:\n  - {id: a, lower: 0, upper: 3, size: big}\n", "p.yaml");
            }),
            "p.yaml:2:39: expected an integer for 'size'");
  EXPECT_EQ(error_of([] { read_plan_yaml("buffers:\n  - {id: a, lower: 0, size: 1}\n", "p.yaml"); }),
            "p.yaml:2:5: buffer is missing the field 'upper'");
  EXPECT_NE(error_of([] { read_plan_yaml("buffers: [\n", "p.yaml"); }).find("p.yaml:"),
            std::string::npos);
  EXPECT_NE(error_of([] { load_plan_file("/nonexistent/plan.csv"); }).find("cannot open"),
            std::string::npos);
}

// Found by fuzz_plan_yaml: yaml-cpp reads bytes that are not UTF-8 but writes U+FFFD in
// their place, so such an id would not read back as written.
TEST(PlanIo, YamlIdsMustBeUtf8) {
  EXPECT_EQ(error_of([] {
              read_plan_yaml("buffers:\n  - {id: \xff\xff\xff\x01, lower: 0, upper: 3, size: 8}\n", "p.yaml");
            }),
            "p.yaml:2:10: buffer id is not valid UTF-8 (bytes ff ff ff 01); YAML text must be UTF-8");
  // Well-formed multi-byte text is an id like any other and round-trips.
  const PlanProblem ok = read_plan_yaml("buffers:\n  - {id: \"\xc3\xa9t\xe2\x82\xac\", lower: 0, upper: 3, size: 8}\n", "p.yaml");
  EXPECT_EQ(ok.buffers.at(0).id, "\xc3\xa9t\xe2\x82\xac");
  EXPECT_EQ(read_plan_yaml(write_plan_yaml(ok), "w.yaml"), ok);
  // CSV holds any bytes; converting such a plan to YAML is refused, not silently changed.
  const PlanProblem bytes = read_plan_csv("id,lower,upper,size\n\xc3\x28,0,3,8\n", "p.csv");
  EXPECT_EQ(read_plan_csv(write_plan_csv(bytes), "w.csv"), bytes);
  EXPECT_EQ(error_of([&] { write_plan_yaml(bytes); }),
            "plan YAML: buffer id (bytes c3 28) is not valid UTF-8, which YAML cannot hold; write the plan as CSV "
            "instead");
}

TEST(PlanIo, InstantiateSideBySide) {
  PlanProblem p;
  p.buffers = {{"a", {0, 2}, {100}, {1}, Offset{0}}, {"b", {0, 2}, {28}, {1}, Offset{100}}};
  const auto addrs = instantiate(p, 0x1000, 3, Bytes{64});
  ASSERT_EQ(addrs.size(), 3u);
  EXPECT_EQ(addrs[0], (std::vector<uint64_t>{0x1000, 0x1064}));
  EXPECT_EQ(addrs[2], (std::vector<uint64_t>{0x1000 + 256, 0x1064 + 256}));  // stride 128
}

}  // namespace
}  // namespace npuforge::planner
