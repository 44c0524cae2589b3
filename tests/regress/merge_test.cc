// Shards and their merge, the Slurm driver's parsing and script, and the HTML report: pure
// functions and files, no simulation (tests/slurm runs the real cluster end to end).
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/core.h>
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include "planner/plan_svg.h"
#include "regress/failure_window.h"
#include "regress/html_report.h"
#include "regress/merge.h"
#include "regress/results.h"
#include "regress/slurm.h"
#include "util/error.h"
#include "util/file_io.h"

namespace npuforge::regress {
namespace {

namespace fs = std::filesystem;

struct TempDir {
  TempDir() : path(fs::temp_directory_path() / ("npuforge_merge_" + std::to_string(::getpid()))) {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
  fs::path path;
};

// A list of `n` jobs over two runs, with a result for each (seed 5 fails, seed 9 errors).
std::vector<SeedResult> fake_results(size_t n) {
  std::vector<SeedResult> rs(n);
  for (size_t i = 0; i < n; ++i) {
    SeedResult& r = rs[i];
    r.job.run = i < n / 2 ? "alpha" : "beta";
    r.job.profile = "/p/default.yaml";
    r.job.seed = i + 1;
    r.job.index = i;
    r.job.length = 100;
    r.instructions = 100 + i;
    r.cycles = 1000 * (i + 1);
    r.seconds = 0.25;
    r.sram_bytes = 1024;
    r.peak_sram = 512;
    if (r.job.seed == 5) {
      r.status = Status::Fail;
      r.kind = finding_kind(sim::FindingKind::LiveOverlap);
      r.finding = "[overlap/live-overlap] #3 gemm %g3 sram[0x40, 0x80): \"quoted\" <b>; other: %ld2";
    }
    if (r.job.seed == 9) {
      r.status = Status::Error;
      r.finding = "simulator exit 134 signal 6: </script> & more";
    }
  }
  return rs;
}

// Writes shard k of n as the runner would (shard.json, results.jsonl, per-seed coverage).
void write_shard(const fs::path& dir, const std::vector<SeedResult>& all, unsigned k, unsigned n, bool finished = true) {
  std::vector<Job> jobs;
  for (const auto& r : all) jobs.push_back(r.job);
  const auto mine = select_shard(jobs, {k, n});
  std::vector<SeedResult> rs;
  fs::create_directories(dir / "coverage");
  const isa::Isa& isa = isa::builtin_isa();
  for (const auto& j : mine) {
    rs.push_back(all[j.index]);
    Coverage c(isa);
    c.hit("opcode", isa.instructions()[j.index % isa.instructions().size()].mnemonic);
    c.set_seeds(1);
    util::write_file(dir / "coverage" / (j.name() + ".json"), c.to_json());
  }
  RunInfo info{{k, n}, all.size(), rs.size(), "/bin/npuforge", 1000.0 + k, finished ? 1010.0 + k : 0};
  util::write_file(dir / "shard.json", run_info_json(info));
  if (finished) util::write_file(dir / "results.jsonl", results_jsonl(rs));
}

TEST(Results, RoundTripThroughJsonLines) {
  const auto rs = fake_results(12);
  const auto back = parse_results(results_jsonl(rs), "r.jsonl");
  ASSERT_EQ(back.size(), rs.size());
  for (size_t i = 0; i < rs.size(); ++i) {
    EXPECT_EQ(result_json(back[i]), result_json(rs[i]));
  }
  EXPECT_THROW(parse_results("{\"index\": 1}\n", "bad.jsonl"), Error);
  try {
    parse_results(results_jsonl(rs) + "{nope\n", "x.jsonl");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("x.jsonl:13"), std::string::npos) << e.what();
  }
  const RunInfo info = parse_run_info(run_info_json({{3, 8}, 100, 13, "/x", 5.5, 7.25}), "s.json");
  EXPECT_EQ(info.shard.k, 3u);
  EXPECT_EQ(info.shard.n, 8u);
  EXPECT_EQ(info.shard_jobs, 13u);
  EXPECT_DOUBLE_EQ(info.finished, 7.25);
}

TEST(Merge, ShardsMergeBackInListOrderWithCoverageSeedBySeed) {
  TempDir t;
  const auto all = fake_results(20);
  for (unsigned k = 1; k <= 3; ++k) write_shard(t.path / ("shard-" + std::to_string(k)), all, k, 3);
  MergeOptions m;
  for (unsigned k = 3; k >= 1; --k) m.inputs.push_back((t.path / ("shard-" + std::to_string(k))).string());
  m.out = (t.path / "merged").string();
  const MergeOutcome res = merge_shards(m);
  EXPECT_TRUE(res.report.problems.empty());
  ASSERT_EQ(res.report.results.size(), all.size());
  for (size_t i = 0; i < all.size(); ++i) EXPECT_EQ(res.report.results[i].job.seed, all[i].job.seed);
  EXPECT_EQ(res.report.totals.fail, 1u);
  EXPECT_EQ(res.report.totals.error, 1u);
  EXPECT_DOUBLE_EQ(res.report.totals.seconds, 1013.0 - 1001.0);
  // The same coverage as merging the seeds one by one in list order.
  Coverage expect;
  const isa::Isa& isa = isa::builtin_isa();
  for (size_t i = 0; i < all.size(); ++i) {
    Coverage c(isa);
    c.hit("opcode", isa.instructions()[i % isa.instructions().size()].mnemonic);
    c.set_seeds(1);
    expect.merge(c);
  }
  EXPECT_EQ(res.report.coverage.to_json(), expect.to_json());
  // Reports written; repro lines point into the merged directory.
  for (const char* f : {"junit.xml", "summary.json", "coverage.json", "failures.txt", "results.jsonl", "index.html"}) {
    EXPECT_TRUE(fs::exists(t.path / "merged" / f)) << f;
  }
  const std::string failures = util::read_file(t.path / "merged" / "failures.txt");
  EXPECT_NE(failures.find((t.path / "merged" / "repro" / "alpha-5").string()), std::string::npos) << failures;
}

TEST(Merge, MissingAndUnfinishedShardsAreNamedNeverDropped) {
  TempDir t;
  const auto all = fake_results(16);
  write_shard(t.path / "shard-1", all, 1, 4);
  write_shard(t.path / "shard-2", all, 2, 4, /*finished=*/false);  // killed mid-run
  write_shard(t.path / "shard-4", all, 4, 4);
  MergeOptions m{{(t.path / "shard-1").string(), (t.path / "shard-2").string(), (t.path / "shard-4").string()},
                 (t.path / "merged").string(), 0};
  const MergeOutcome res = merge_shards(m);
  EXPECT_EQ(res.missing, (std::vector<unsigned>{2, 3}));
  ASSERT_EQ(res.report.problems.size(), 2u);
  EXPECT_NE(res.report.problems[0].find("shard 2/4"), std::string::npos) << res.report.problems[0];
  EXPECT_NE(res.report.problems[1].find("shard 3/4"), std::string::npos) << res.report.problems[1];
  EXPECT_EQ(res.report.results.size(), 8u);
  const std::string junit = util::read_file(t.path / "merged" / "junit.xml");
  EXPECT_NE(junit.find("type=\"merge/missing-shard\""), std::string::npos);
  const YAML::Node sum = YAML::Load(util::read_file(t.path / "merged" / "summary.json"));
  EXPECT_EQ(sum["problems"].size(), 2u);
  // Expecting more shards than the inputs say is a mismatch, not a silent pass.
  m.expect_shards = 5;
  EXPECT_THROW(merge_shards(m), Error);
  // The same shard twice, and nothing to merge at all, are errors.
  MergeOptions twice{{(t.path / "shard-1").string(), (t.path / "shard-1").string()}, (t.path / "m2").string(), 0};
  EXPECT_THROW(merge_shards(twice), Error);
  MergeOptions none{{(t.path / "nothing-here").string()}, (t.path / "m3").string(), 0};
  EXPECT_THROW(merge_shards(none), Error);
}

TEST(Slurm, ParsesSqueueAndScontrol) {
  EXPECT_EQ(parse_task_ranges("[3-5,8%2]"), (std::vector<unsigned>{3, 4, 5, 8}));
  EXPECT_EQ(parse_task_ranges("7"), std::vector<unsigned>{7});
  EXPECT_THROW(parse_task_ranges("x-2"), Error);
  const auto q = parse_squeue("1 COMPLETED None\n2 RUNNING None\n3 PENDING Resources\nN/A PENDING None\n");
  ASSERT_EQ(q.size(), 3u);
  EXPECT_EQ(q[2].task, 3u);
  EXPECT_EQ(q[2].state, "PENDING");
  EXPECT_EQ(q[2].reason, "Resources");
  const auto s = parse_scontrol(
      "JobId=12 ArrayJobId=10 ArrayTaskId=2 JobName=npuforge-regress JobState=FAILED Reason=NonZeroExitCode "
      "Dependency=(null) ExitCode=1:0\n"
      "JobId=13 ArrayJobId=10 ArrayTaskId=3 JobState=CANCELLED Reason=None ExitCode=0:15\n"
      "JobId=10 ArrayJobId=10 ArrayTaskId=4-5 JobState=PENDING Reason=Resources ExitCode=0:0\n");
  ASSERT_EQ(s.size(), 4u);
  EXPECT_EQ(s[0].task, 2u);
  EXPECT_EQ(s[0].state, "FAILED");
  EXPECT_EQ(s[0].exit_code, 1);
  EXPECT_EQ(s[1].signal, 15);
  EXPECT_EQ(s[3].task, 5u);
  EXPECT_TRUE(is_terminal("CANCELLED"));
  EXPECT_TRUE(is_terminal("TIMEOUT"));
  EXPECT_FALSE(is_terminal("RUNNING"));
  EXPECT_FALSE(is_terminal("PENDING"));
}

TEST(Slurm, ScriptRunsOneShardPerArrayTask) {
  SlurmOptions o;
  o.out = "/r/out dir";
  o.shards = 8;
  o.partition = "night";
  o.cpus_per_task = 2;
  o.shard_args = {"/lists/nightly.yaml", "--timeout", "600"};
  o.exe = "/opt/npuforge/bin/npuforge";
  o.workdir = "/w";
  const std::string s = sbatch_script(o);
  EXPECT_NE(s.find("#SBATCH --array=1-8\n"), std::string::npos) << s;
  EXPECT_NE(s.find("#SBATCH --partition=night\n"), std::string::npos);
  EXPECT_NE(s.find("#SBATCH --cpus-per-task=2\n"), std::string::npos);
  EXPECT_NE(s.find("regress /lists/nightly.yaml --timeout 600 -j 2 -q --shard \"$k/8\" --out '/r/out dir'/shard-\"$k\""),
            std::string::npos)
      << s;
  EXPECT_EQ(merge_command(o), "/opt/npuforge/bin/npuforge merge '/r/out dir'/shard-* --out '/r/out dir' --shards 8");
}

TEST(Html, ShowsFailuresReproCoverageAndEscapes) {
  TempDir t;
  RegressReport rep;
  rep.results = fake_results(10);
  rep.results[4].repro = "npuforge regress --seeds 5 --out '/tmp/a b'";
  rep.results[4].prefix = (t.path / "seeds" / "alpha-5").string();
  fs::create_directories(t.path / "seeds");
  util::write_file(rep.results[4].prefix + ".memmap.yaml",
                   "sram_bytes: 1024\nalignment: 64\ninstructions: 6\nbuffers:\n"
                   "  - {symbol: ld2, offset: 0x0, size: 128, first: 0, last: 4, producer: 0, consumers: [4]}\n"
                   "  - {symbol: g3, offset: 0x40, size: 64, first: 3, last: 5, producer: 3, consumers: [5]}\n");
  rep.totals = count(rep.results);
  rep.totals.seconds = 2;
  rep.coverage = Coverage(isa::builtin_isa());
  rep.problems = {"shard 3/4: no results directory"};
  const std::string h = html_report(rep, t.path);
  EXPECT_NE(h.find("alpha:5"), std::string::npos);
  EXPECT_NE(h.find("npuforge regress --seeds 5 --out &apos;/tmp/a b&apos;"), std::string::npos);
  EXPECT_NE(h.find("onclick='copyRepro(this)'"), std::string::npos);
  EXPECT_NE(h.find("shard 3/4: no results directory"), std::string::npos);
  EXPECT_NE(h.find("&quot;quoted&quot; &lt;b&gt;; other"), std::string::npos);  // finding escaped in HTML
  EXPECT_LT(h.find("id='seed-data'"), h.find("<b>; other"));  // raw only inside the JSON data
  EXPECT_EQ(h.find("</script> & more"), std::string::npos);   // JSON data cannot close its element
  EXPECT_NE(h.find("<\\/script> &"), std::string::npos);
  // The timeline: both buffers overlap (outlined red), the finding's buffers filled red.
  EXPECT_NE(h.find("<svg viewBox="), std::string::npos);
  EXPECT_NE(h.find("fill='#e53935'"), std::string::npos);
  EXPECT_NE(h.find("Filled red: %g3, %ld2"), std::string::npos);
  EXPECT_NE(h.find("hole"), std::string::npos);  // an all-zero coverage model has holes
  EXPECT_EQ(finding_symbols("[x] #1 gemm %a_1 sram[0, 4); other: %b.2 and %a_1"), (std::vector<std::string>{"a_1", "b.2"}));
}


// A program of `n` instructions: one short buffer per instruction at rising offsets (wrapping
// at 64 KiB), so a whole-program picture makes each buffer a sliver.
planner::PlanProblem long_program(int n) {
  planner::PlanProblem p;
  for (int i = 0; i < n; ++i) {
    planner::PlanBuffer b;
    b.id = fmt::format("b{}", i);
    b.lifespan = {i, i + 3};
    b.size = Bytes{256};
    b.offset = static_cast<uint64_t>(i % 256) * 256;
    p.buffers.push_back(b);
  }
  return p;
}

TEST(FailureWindow, AroundTheFindingsInstructionWithItsBuffersAndNeighbours) {
  const planner::PlanProblem p = long_program(2000);
  // b1201 at 0xb100 and b1203 at 0xb300; b1202 lies between them, b1200 and b1204 next to them.
  const auto w = failure_window(p, "[shadow/write-outside] #1203 gemm %b1203 sram[0xb300, 0xb400): other: %b1201", 16);
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(w->view.t0, 1187);
  EXPECT_EQ(w->view.t1, 1220);
  EXPECT_EQ(w->view.marker, 1203);
  EXPECT_EQ(w->faulting, (std::vector<std::string>{"b1203", "b1201"}));
  for (const char* id : {"b1201", "b1202", "b1203", "b1200", "b1204"})
    EXPECT_NE(std::find(w->labelled.begin(), w->labelled.end(), id), w->labelled.end()) << id;
  EXPECT_LE(w->view.lo, 0xb000u);
  EXPECT_GE(w->view.hi, 0xb500u);
  EXPECT_LT(w->view.hi - w->view.lo, 0x1000u) << "the window is a few buffers high, not the whole SRAM";
}

TEST(FailureWindow, WithoutAnInstructionTheFirstNamedBufferPlacesIt) {
  const planner::PlanProblem p = long_program(100);
  const auto w = failure_window(p, "[allocator/invariant] %b50 freed twice", 8);
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(w->view.t0, 42);
  EXPECT_FALSE(w->view.marker.has_value());
  EXPECT_FALSE(failure_window(p, "[runner/timeout] worker timed out", 8).has_value());
}

TEST(PlanSvg, AWindowDrawsOnlyItsBuffersLabelledAndMarksTheFinding) {
  const planner::PlanProblem p = long_program(2000);
  planner::SvgOptions o;
  // Live in [1190, 1200): b1188..b1199 at 0xa400..0xaf00; of those b1192..b1195 touch [0xa800, 0xac00).
  o.window = planner::SvgWindow{1190, 1200, 0xa800, 0xac00, 1195, "#1195 (first finding)"};
  o.highlight = {"b1195"};
  o.labelled = {"b1195", "b1194"};
  const std::string svg = planner::plan_svg(p, nullptr, o);
  size_t drawn = 0;
  for (size_t at = svg.find("<g><title>"); at != std::string::npos; at = svg.find("<g><title>", at + 1)) ++drawn;
  EXPECT_EQ(drawn, 4u) << svg;
  EXPECT_NE(svg.find("font-weight='bold'>b1195</text>"), std::string::npos) << svg;
  EXPECT_NE(svg.find(">b1194</text>"), std::string::npos);
  EXPECT_NE(svg.find("class='marker'"), std::string::npos);
  EXPECT_NE(svg.find("#1195 (first finding)"), std::string::npos);
  EXPECT_NE(svg.find(">0xa800</text>"), std::string::npos);
  EXPECT_EQ(svg.find(">LB "), std::string::npos) << "the whole plan's bound lines are not the window's";
}

TEST(PlanSvg, LowerBoundAndPeakLabelsDoNotPrintOverEachOther) {
  planner::PlanProblem p;
  planner::PlanBuffer b;
  b.id = "a";
  b.lifespan = {0, 2};
  b.size = Bytes{64};
  b.offset = 0;
  p.buffers.push_back(b);  // lower bound == peak == 64
  const std::string svg = planner::plan_svg(p, nullptr);
  auto label_y = [&](const std::string& label) {
    const size_t at = svg.find("'>" + label + " 64</text>");
    EXPECT_NE(at, std::string::npos) << svg;
    const size_t y = svg.rfind("y='", at);
    return std::stod(svg.substr(y + 3));
  };
  EXPECT_GE(std::abs(label_y("LB") - label_y("peak")), 11.0) << svg;
}

TEST(PlanSvg, HighlightFillsTheNamedBuffersOnly) {
  planner::PlanProblem p;
  for (const char* id : {"a", "b"}) {
    planner::PlanBuffer b;
    b.id = id;
    b.lifespan = {0, 2};
    b.size = Bytes{64};
    b.offset = std::string(id) == "a" ? 0 : 64;
    p.buffers.push_back(b);
  }
  const std::string plain = planner::plan_svg(p, nullptr);
  EXPECT_EQ(plain.find("#e53935"), std::string::npos);
  planner::SvgOptions o;
  o.highlight = {"b"};
  const std::string svg = planner::plan_svg(p, nullptr, o);
  EXPECT_EQ(svg.find("#e53935"), svg.rfind("#e53935"));  // exactly one buffer
  EXPECT_LT(svg.find("<title>a "), svg.find("#e53935"));
  EXPECT_GT(svg.find("#e53935"), svg.find("<title>b "));
}

}  // namespace
}  // namespace npuforge::regress
