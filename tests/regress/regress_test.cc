// Regression runner: report escaping, seed lists and shards, coverage merge, ddmin, and an
// end-to-end regression over a planted allocator bug with reproduction and shrinking.
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include "gen/generator.h"
#include "gen/profile.h"
#include "util/error.h"
#include "regress/coverage.h"
#include "regress/ddmin.h"
#include "regress/jobs.h"
#include "regress/proc.h"
#include "regress/report.h"
#include "regress/seed_kind.h"
#include "regress/shrink.h"
#include "sim/verify/verdict_json.h"
#include "util/rng.h"
#include "util/text.h"

namespace npuforge::regress {
namespace {

namespace fs = std::filesystem;

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A minimal XML well-formedness check: tags nest, attributes are quoted, and '&' only starts
// one of the five entities. Enough to catch missing escaping.
std::string xml_problem(const std::string& x) {
  std::vector<std::string> stack;
  for (size_t i = 0; i < x.size(); ++i) {
    if (x[i] == '&') {
      bool ok = false;
      for (const char* e : {"&amp;", "&lt;", "&gt;", "&quot;", "&apos;"}) ok = ok || x.compare(i, strlen(e), e) == 0;
      if (!ok) return "bad entity at " + std::to_string(i);
    } else if (x[i] == '>') {
      return "stray '>' at " + std::to_string(i);
    } else if (x[i] == '<') {
      const size_t end = x.find('>', i);
      if (end == std::string::npos) return "unclosed tag";
      std::string tag = x.substr(i + 1, end - i - 1);
      if (tag.find('<') != std::string::npos) return "'<' inside a tag at " + std::to_string(i);
      size_t quotes = 0;
      for (char c : tag) quotes += c == '"';
      if (quotes % 2) return "unbalanced quotes in <" + tag + ">";
      i = end;
      if (tag[0] == '?') continue;
      const bool closing = tag[0] == '/', empty = tag.back() == '/';
      const std::string name = tag.substr(closing, tag.find_first_of(" /", closing) - closing);
      if (closing) {
        if (stack.empty() || stack.back() != name) return "mismatched </" + name + ">";
        stack.pop_back();
      } else if (!empty) {
        stack.push_back(name);
      }
    }
  }
  return stack.empty() ? "" : "unclosed <" + stack.back() + ">";
}

TEST(Text, EscapesXmlJsonAndShell) {
  EXPECT_EQ(util::xml_escape("a<b>&\"c'\x01"), "a&lt;b&gt;&amp;&quot;c&apos;?");
  EXPECT_EQ(util::json_quote("a\"b\\c\n\x02"), "\"a\\\"b\\\\c\\n\\u0002\"");
  EXPECT_EQ(util::shell_quote("plain/path-1.yaml"), "plain/path-1.yaml");
  EXPECT_EQ(util::shell_quote("it's here"), "'it'\\''s here'");
}

TEST(Junit, WellFormedWithHostileFindings) {
  std::vector<SeedResult> rs(3);
  for (size_t i = 0; i < rs.size(); ++i) {
    rs[i].job.run = i == 2 ? "other<&>" : "default";
    rs[i].job.seed = i + 1;
  }
  rs[1].status = Status::Fail;
  rs[1].finding = "[hazard/hazard] #3 gemm %a<b> & \"x\" 'y' sram[0x0, 0x40)\x07";
  rs[1].kind = finding_kind(sim::FindingKind::Hazard);
  rs[1].repro = "npuforge regress --seeds 2 --out 'a b'";
  rs[2].status = Status::Error;
  rs[2].finding = "simulator exit 134 <core dumped>";
  Totals t = count(rs);
  const std::string x = junit_xml(rs, t);
  EXPECT_EQ(xml_problem(x), "") << x;
  EXPECT_NE(x.find("<failure message=\"[hazard/hazard] #3 gemm %a&lt;b&gt; &amp; &quot;x&quot;"), std::string::npos) << x;
  EXPECT_NE(x.find("<error message=\"simulator exit 134 &lt;core dumped&gt;\""), std::string::npos);
  EXPECT_NE(x.find("tests=\"3\" failures=\"1\" errors=\"1\""), std::string::npos);
  // The checker really rejects unescaped text.
  EXPECT_NE(xml_problem("<a b=\"1\">x & y</a>"), "");
  EXPECT_NE(xml_problem("<a><b></a></b>"), "");
  // summary.json parses and carries the failures.
  const YAML::Node j = YAML::Load(summary_json(rs, t));
  EXPECT_EQ(j["fail"].as<int>(), 1);
  ASSERT_EQ(j["failures"].size(), 2u);
  EXPECT_EQ(j["failures"][0]["finding"].as<std::string>(), rs[1].finding);
}

TEST(Seeds, ParsesListsAndRejectsJunk) {
  EXPECT_EQ(parse_seeds("1-3,7,2,9-10"), (std::vector<uint64_t>{1, 2, 3, 7, 9, 10}));
  EXPECT_THROW(parse_seeds("5-1"), Error);
  EXPECT_THROW(parse_seeds("1-x"), Error);
  EXPECT_THROW(parse_seeds(""), Error);
  EXPECT_THROW(parse_shard("0/3"), Error);
  EXPECT_THROW(parse_shard("4/3"), Error);
  EXPECT_THROW(parse_shard("3"), Error);
}

TEST(Shard, EverySeedExactlyOnce) {
  for (unsigned n : {1u, 2u, 3u, 7u, 50u}) {
    std::vector<Job> jobs;
    for (uint64_t s : parse_seeds("1-97")) jobs.push_back(Job{"r", "p", "", s});
    std::multiset<uint64_t> seen;
    size_t smallest = SIZE_MAX, largest = 0;
    for (unsigned k = 1; k <= n; ++k) {
      const auto part = select_shard(jobs, parse_shard(std::to_string(k) + "/" + std::to_string(n)));
      smallest = std::min(smallest, part.size());
      largest = std::max(largest, part.size());
      for (const auto& j : part) seen.insert(j.seed);
    }
    EXPECT_EQ(seen.size(), 97u);
    for (uint64_t s = 1; s <= 97; ++s) EXPECT_EQ(seen.count(s), 1u) << "seed " << s << " of " << n << " shards";
    EXPECT_LE(largest - smallest, 1u);  // balanced
  }
}

TEST(List, ShippedListsLoad) {
  for (const char* name : {"nightly.yaml", "nightly-2k.yaml", "smoke.yaml"}) {
    const auto jobs = load_list(fs::path(NPUFORGE_SOURCE_DIR) / "configs/regress" / name);
    EXPECT_FALSE(jobs.empty()) << name;
    std::set<std::string> ids;
    for (const auto& j : jobs) {
      EXPECT_TRUE(fs::exists(j.profile)) << j.profile;
      EXPECT_TRUE(ids.insert(j.id()).second) << "duplicate " << j.id();
    }
  }
}

TEST(Coverage, MergeAddsAndRecordsCompletion) {
  const isa::Isa& isa = isa::builtin_isa();
  Coverage total(isa);
  const auto& ops = total.groups()[0];
  ASSERT_EQ(ops.name, "opcode");
  // Seed k hits opcode k only: the group completes after exactly |opcodes| seeds.
  for (size_t k = 0; k < ops.bins.size(); ++k) {
    Coverage one(isa);
    one.hit("opcode", isa.instructions()[k].mnemonic, 2);
    one.hit("alloc", "split");
    one.set_seeds(1);
    total.merge(Coverage::from_json(one.to_json(), "seed"));  // round trip through JSON
  }
  EXPECT_EQ(total.seeds(), ops.bins.size());
  EXPECT_EQ(total.groups()[0].covered(), ops.bins.size());
  EXPECT_EQ(total.groups()[0].complete_after, ops.bins.size());
  EXPECT_EQ(total.count("alloc", "split"), ops.bins.size());
  EXPECT_EQ(total.count("opcode", isa.instructions()[0].mnemonic), 2u);
  const std::string r = total.report(true);
  EXPECT_NE(r.find("alloc.exact_fit"), std::string::npos) << r;   // a hole is listed
  EXPECT_EQ(r.find("opcode."), std::string::npos) << r;          // a full group is not
  EXPECT_THROW(total.hit("opcode", "no-such-op"), Error);
  EXPECT_THROW(Coverage::from_json("[1, 2]", "x"), Error);
}

// The coverage goal: 1,000 seeds of the shipped profiles (250 each) reach every bin
// of the opcode, allocator-event and ISA v2 field-feature groups. Coverage comes from the generator alone, so no
// simulation is needed here; the seeds each group needed are printed for the record.
TEST(Coverage, ThousandSeedsOfTheShippedProfilesCloseOpcodeAndAllocatorGroups) {
  const isa::Isa& isa = isa::builtin_isa();
  const isa::NpuConfig npu;
  Coverage total(isa);
  for (const char* name : {"default", "near-full", "stress-fragment", "tiny-buffers"}) {
    const auto profile =
        gen::Profile::load_file(std::string(NPUFORGE_SOURCE_DIR) + "/configs/gen/" + name + ".yaml");
    for (uint64_t seed = 1; seed <= 250; ++seed) {
      gen::GenOptions opt;
      opt.seed = seed;
      opt.length = 400;
      const auto prog = gen::generate(isa, npu, profile, opt);
      Coverage one = sample(isa, prog, prog.memmap(), profile.oom);
      one.set_seeds(1);
      total.merge(one);
    }
  }
  for (const auto& g : total.groups()) {
    std::printf("coverage %-10s %zu/%zu complete after %llu seeds\n", g.name.c_str(), g.covered(), g.bins.size(),
                static_cast<unsigned long long>(g.complete_after));
    if (g.name == "opcode" || g.name == "alloc" || g.name == "fields") {
      EXPECT_TRUE(g.complete()) << total.report(true);
    }
  }
}

// The reuse sampler's sweep against the definition: every pair compared.
TEST(Coverage, PreviousOwnerSweepMatchesPairwiseDefinition) {
  Rng rng(15);
  for (int round = 0; round < 200; ++round) {
    std::vector<bundle::MemBuffer> bufs(rng.below(60));
    const uint64_t unit = round % 5 == 0 ? 1 + rng.below(7) : 64;
    for (auto& b : bufs) {
      b.offset = SramAddr{uint32_t(unit * rng.below(64))};
      b.size = Bytes{unit * (1 + rng.below(16))};
      b.first = int64_t(rng.below(200));
      b.last = b.first + int64_t(rng.below(50));
    }
    std::vector<int64_t> expect(bufs.size(), -1);
    for (size_t i = 0; i < bufs.size(); ++i)
      for (const auto& b : bufs) {
        const bool overlap = b.offset.value < bufs[i].offset.value + bufs[i].size.value &&
                             bufs[i].offset.value < b.offset.value + b.size.value;
        if (overlap && b.last < bufs[i].first) expect[i] = std::max(expect[i], b.last);
      }
    ASSERT_EQ(previous_owner_last(bufs), expect) << "round " << round;
  }
}

TEST(Ddmin, FindsTheMinimalFailingSubset) {
  // Fails when it contains 3, 17 and 40: ddmin must return exactly those.
  std::vector<size_t> items(64);
  for (size_t i = 0; i < items.size(); ++i) items[i] = i;
  auto fails = [](const std::vector<size_t>& s) {
    const std::set<size_t> in(s.begin(), s.end());
    return in.count(3) && in.count(17) && in.count(40);
  };
  DdminStats st;
  EXPECT_EQ(ddmin(items, fails, &st), (std::vector<size_t>{3, 17, 40}));
  EXPECT_LT(st.tests, 300u);
  // A single culprit; and a predicate needing everything keeps everything.
  EXPECT_EQ(ddmin(items, [](auto& s) { return std::find(s.begin(), s.end(), 63) != s.end(); }), std::vector<size_t>{63});
  std::vector<size_t> four{0, 1, 2, 3};
  EXPECT_EQ(ddmin(four, [](auto& s) { return s.size() == 4; }), four);
}

TEST(Shrink, RestrictKeepsTokensPaired) {
  const isa::Isa& isa = isa::builtin_isa();
  auto mk = [&](const char* m, uint32_t wait, uint32_t sig) {
    auto in = isa::Instruction::make(isa.require(m));
    in.set(isa::kWaitSlot, wait);
    in.set(isa::kSignalSlot, sig);
    return in;
  };
  ShrinkProgram p;
  p.instrs = {mk("load", 0, 2), mk("gemm", 1, 4), mk("store", 2, 0), mk("halt", 0, 0)};
  p.map.sram_bytes = Bytes{524288};
  p.map.alignment = Bytes{64};
  p.map.instructions = 4;
  // Drop the load: the gemm's wait on it must go; the gemm->store pair stays.
  const auto r = restrict_to(p, {1, 2});
  ASSERT_EQ(r.instrs.size(), 3u);
  EXPECT_EQ(r.instrs[0].wait_mask(), 0u);
  EXPECT_EQ(r.instrs[0].signal_mask(), 4u);
  EXPECT_EQ(r.instrs[1].wait_mask(), 2u);
  EXPECT_EQ(r.instrs[2].spec->mnemonic, "halt");
  // Drop the store: the gemm's signal to it must go.
  const auto s = restrict_to(p, {0, 1});
  EXPECT_EQ(s.instrs[1].signal_mask(), 0u);
  EXPECT_EQ(s.instrs[1].wait_mask(), 1u);
  EXPECT_EQ(s.map.instructions, 3);
}

// A seed's kind is a value; its tag (what the reports show) reads back to the same value.
TEST(SeedKinds, TagsReadBackAndCausesAreNamed) {
  EXPECT_EQ(tag(finding_kind(sim::FindingKind::LiveOverlap)), "overlap/live-overlap");
  EXPECT_EQ(tag(SeedKind{Cause::Allocator}), "allocator/invariant");
  EXPECT_EQ(tag(SeedKind{Cause::Timeout}), "runner/timeout");
  EXPECT_EQ(tag(SeedKind{Cause::Generate}), "");
  for (size_t k = 0; k < sim::kNumFindingKinds; ++k) {
    const SeedKind kind = finding_kind(static_cast<sim::FindingKind>(k));
    EXPECT_EQ(kind_of_tag(tag(kind), Cause::None), kind) << tag(kind);
    EXPECT_EQ(parse_kind_fields("finding", sim::to_string(kind.finding), "r.json"), kind);
  }
  EXPECT_EQ(kind_of_tag("", Cause::NoFinding), SeedKind{Cause::NoFinding});
  EXPECT_EQ(kind_of_tag("runner/bad-result", Cause::None), SeedKind{Cause::BadResult});
  EXPECT_FALSE(kind_of_tag("hazard/live-overlap", Cause::None));  // the checker must match the kind
  EXPECT_FALSE(kind_of_tag("hazard/nonsense", Cause::None));
  for (Cause c : {Cause::None, Cause::NoFinding, Cause::Allocator, Cause::Generate, Cause::Simulator,
                  Cause::SimulatorCrash, Cause::WorkerKilled, Cause::WorkerExited, Cause::Timeout, Cause::BadResult})
    EXPECT_EQ(parse_kind_fields(to_string(c), "", "r.json"), SeedKind{c}) << to_string(c);
  EXPECT_THROW(parse_kind_fields("crashed", "", "r.json"), Error);
  EXPECT_THROW(parse_kind_fields("finding", "hazzard", "r.json"), Error);
}

#ifdef NPUFORGE_BIN
// End to end: a regression over the planted overlapping allocator fails with working
// reproduction commands, and shrinking keeps the failure in at most 10 instructions.
TEST(EndToEnd, PlantedOverlapIsReportedReproducedAndShrunk) {
  const fs::path out = fs::temp_directory_path() / ("npuforge_regress_e2e_" + std::to_string(::getpid()));
  fs::remove_all(out);
  const std::string profile = std::string(NPUFORGE_SOURCE_DIR) + "/configs/gen/default.yaml";
  const std::string log = (out.string() + ".log");
  auto run = [&](std::vector<std::string> argv) { return run_process(argv, log, log, 300); };
  const auto r = run({NPUFORGE_BIN, "regress", "--profile", profile, "--seeds", "1-6", "--length", "200",
                      "-j", "2", "--plant", "gen-overlap-live", "--shrink", "--shrink-max", "1", "-q",
                      "--out", out.string()});
  EXPECT_EQ(r.exit_code, 1) << slurp(log);
  const std::string junit = slurp(out / "junit.xml");
  EXPECT_EQ(xml_problem(junit), "");
  EXPECT_NE(junit.find("<failure message=\"["), std::string::npos) << junit;
  const YAML::Node sum = YAML::Load(slurp(out / "summary.json"));
  ASSERT_GT(sum["fail"].as<int>(), 0);
  const YAML::Node f = sum["failures"][0];
  const std::string kind = f["kind"].as<std::string>();
  EXPECT_FALSE(kind.empty());
  // The report lists a failing seed's first findings, read from its verdict (PREFIX.sim.json).
  EXPECT_NE(slurp(out / "index.html").find("<summary>first findings</summary><pre>" +
                                           util::xml_escape(f["finding"].as<std::string>())),
            std::string::npos);
  // The reproduction command alone fails the same way.
  const std::string repro = f["repro"].as<std::string>();
  EXPECT_EQ(std::system((repro + " -q > /dev/null 2>&1").c_str()) >> 8, 1) << repro;
  const fs::path rdir = repro.substr(repro.find("--out ") + 6, repro.find(' ', repro.find("--out ") + 6) - repro.find("--out ") - 6);
  const YAML::Node again = YAML::Load(slurp(rdir / "summary.json"));
  EXPECT_EQ(again["failures"][0]["finding"].as<std::string>(), f["finding"].as<std::string>());
  // The shrunk program: at most 10 instructions, and the simulator still reports that kind.
  const std::string shrunk = f["shrunk"].as<std::string>();
  ASSERT_FALSE(shrunk.empty());
  const std::string base = shrunk.substr(0, shrunk.size() - 2);
  const std::string verdict = (out / "shrunk.json").string();
  const auto sim = run({NPUFORGE_BIN, "sim", base + ".bin", "--memmap", base + ".memmap.yaml", "--ddr", base + ".ddr.bin",
                        "--json", verdict});
  EXPECT_EQ(sim.exit_code, 1);
  EXPECT_EQ(tag(kind_of(sim::verify::parse_json(slurp(verdict), verdict))), kind);
  EXPECT_FALSE(fs::exists(out / "shrink-work"));
  EXPECT_LE(fs::file_size(base + ".bin") / isa::builtin_isa().width_bytes(), 10u);
  // And a clean regression passes (the checkers do not fire on a correct allocator).
  const auto ok = run({NPUFORGE_BIN, "regress", "--profile", profile, "--seeds", "1-3", "--length", "200",
                       "-j", "2", "-q", "--out", (out / "clean").string()});
  EXPECT_EQ(ok.exit_code, 0) << slurp(log);
  // cover reads the results back.
  const auto cov = run({NPUFORGE_BIN, "cover", (out / "clean").string()});
  EXPECT_EQ(cov.exit_code, 0);
  EXPECT_NE(slurp(log).find("opcode"), std::string::npos);
  fs::remove_all(out);
  fs::remove(log);
}

// --shrink reproduces simulator-side plants: the in-process oracle simulates every candidate
// with the seed's plant (and --rtl), so a model plant and an RTL plant both shrink to a
// program that `npuforge sim --plant` still fails with the same kind, and no work folder is
// left behind.
TEST(EndToEnd, SimulatorSidePlantsShrink) {
  const fs::path out = fs::temp_directory_path() / ("npuforge_regress_shrink_" + std::to_string(::getpid()));
  fs::remove_all(out);
  const std::string profile = std::string(NPUFORGE_SOURCE_DIR) + "/configs/gen/default.yaml";
  const std::string log = out.string() + ".log";
  auto run = [&](std::vector<std::string> argv) { return run_process(argv, log, log, 300); };
  for (const auto& [plant, rtl] : {std::pair<std::string, bool>{"model-store-short", false}, {"rtl-decoder-field-bit", true}}) {
    SCOPED_TRACE(plant);
    const fs::path dir = out / plant;
    std::vector<std::string> argv{NPUFORGE_BIN, "regress", "--profile", profile, "--seeds", "1-2", "--length", "300",
                                  "-j", "2", "--plant", plant, "--shrink", "--shrink-max", "1", "-q", "--out", dir.string()};
    if (rtl) argv.push_back("--rtl");
    EXPECT_EQ(run(argv).exit_code, 1) << slurp(log);
    EXPECT_FALSE(fs::exists(dir / "shrink-work")) << slurp(log);
    const YAML::Node f = YAML::Load(slurp(dir / "summary.json"))["failures"][0];
    ASSERT_TRUE(f) << slurp(log);
    const std::string shrunk = f["shrunk"].as<std::string>();
    ASSERT_FALSE(shrunk.empty()) << slurp(log);
    const std::string base = shrunk.substr(0, shrunk.size() - 2), verdict = base + ".sim.json";
    std::vector<std::string> sim{NPUFORGE_BIN, "sim", base + ".bin", "--memmap", base + ".memmap.yaml", "--ddr",
                                 base + ".ddr.bin", "--plant", plant, "--json", verdict};
    if (rtl) sim.push_back("--rtl");
    EXPECT_EQ(run(sim).exit_code, 1) << slurp(log);
    EXPECT_EQ(tag(kind_of(sim::verify::parse_json(slurp(verdict), verdict))), f["kind"].as<std::string>());
    EXPECT_LT(fs::file_size(base + ".bin"), 300u * isa::builtin_isa().width_bytes());
  }
  fs::remove_all(out);
  fs::remove(log);
}
#endif

}  // namespace
}  // namespace npuforge::regress
