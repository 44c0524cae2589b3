// sim::verify: one run path for every tool. A verdict equals what the backend, the checkers
// and the golden compare give when called by hand; it survives its JSON unchanged; SystemC
// runs repeat in one process with identical verdicts; the pass rule and the report exist once.
#include <gtest/gtest.h>

#include <string>

#include "bundle/ddr_image.h"
#include "gen/generator.h"
#include "sim/backend.h"
#include "sim/golden.h"
#include "sim/verify/verdict_json.h"
#include "sim/verify/verify.h"
#include "sim_test_util.h"
#include "util/error.h"

namespace npuforge::sim::verify {
namespace {

using testing::gemm_buffers;
using testing::gemm_program;
using testing::make_program;

const Semantics& sem() {
  static const Semantics s(isa::builtin_isa());
  return s;
}

bundle::Program generated(uint64_t seed, int64_t length, Plant plant = {}) {
  const auto profile = gen::Profile::load_file(std::string(NPUFORGE_SOURCE_DIR) + "/configs/gen/default.yaml");
  gen::GenOptions o;
  o.seed = seed;
  o.length = length;
  o.plant = plant;
  const isa::NpuConfig npu;
  gen::GeneratedProgram g = gen::generate(isa::builtin_isa(), npu, profile, o);
  g.with_memmap();  // the generator's bundle, with its memory map
  bundle::Program p = std::move(g.bundle);
  p.name = "default-" + std::to_string(seed);
  return p;
}

Options sequential() {
  Options o;
  o.backend = BackendKind::Sequential;
  return o;
}

// Everything a verdict says, as text (the final DDR aside).
std::string everything(const Verdict& v) {
  std::string s = to_json(v);
  for (const Finding& f : v.kept) s += format(f) + "\n";
  return s + report(v);
}

// Two overlapping buffers: a live-overlap finding (and what follows from it).
bundle::Program overlapping() {
  auto buffers = gemm_buffers();
  buffers[1].offset = SramAddr{0x40};
  return make_program(gemm_program(0, 0x40, 0x100, "wait=load", "wait=none"), buffers);
}

TEST(Verify, SequentialVerdictIsWhatTheBackendCheckersAndGoldenCompareGive) {
  for (const bundle::Program& p : {make_program(gemm_program(), gemm_buffers()), overlapping()}) {
    Checkers checks(p, sem(), CheckerOptions{.max_errors = 20});
    const RunResult r = SequentialBackend(sem()).run(p, checks);
    check_ddr(p, sem(), run_golden(p, sem()).ddr, r.ddr, "the golden model", checks);
    const Verdict v = run(p, sequential());
    EXPECT_EQ(v.pass, checks.clean() && r.completed);
    EXPECT_EQ(v.cycles, r.cycles);
    EXPECT_EQ(v.instructions, r.instructions);
    EXPECT_EQ(v.busy_cycles, r.busy_cycles);
    EXPECT_EQ(v.findings, checks.total());
    ASSERT_EQ(v.kept.size(), checks.findings().size());
    for (size_t i = 0; i < v.kept.size(); ++i) EXPECT_EQ(format(v.kept[i]), format(checks.findings()[i]));
    for (size_t k = 0; k < kNumFindingKinds; ++k) EXPECT_EQ(v.by_kind[k], checks.count(static_cast<FindingKind>(k)));
    EXPECT_EQ(v.backend, "sequential");
    EXPECT_FALSE(v.rtl);
  }
  EXPECT_TRUE(run(make_program(gemm_program(), gemm_buffers()), sequential()).pass);
  EXPECT_FALSE(run(overlapping(), sequential()).pass);
}

TEST(Verify, ReportIsTheSimReport) {
  const Verdict clean = run(make_program(gemm_program(), gemm_buffers()), sequential());
  const std::string r = report(clean);
  EXPECT_EQ(r.rfind("PASS test: 5 of 5 instructions, 186 cycles (sequential backend)\n", 0), 0u) << r;
  EXPECT_NE(r.find("  load     busy        108 cycles   58.1%\n"), std::string::npos) << r;
  EXPECT_NE(r.find("  no findings\n"), std::string::npos) << r;
  Options one = sequential();
  one.max_errors = 1;
  const Verdict bad = run(overlapping(), one);
  const std::string b = report(bad);
  EXPECT_EQ(b.rfind("FAIL test:", 0), 0u) << b;
  EXPECT_NE(b.find("live-overlap 1"), std::string::npos) << b;
  EXPECT_NE(b.find("\n  " + format(*bad.first()) + "\n"), std::string::npos) << b;
  EXPECT_NE(b.find("raise --max-errors"), std::string::npos) << b;
  EXPECT_EQ(bad.kept.size(), 1u);
  EXPECT_GT(bad.findings, 1u);
}

TEST(Verify, PassRuleCountsFindingsCompletionAndTheRtlDecoder) {
  Verdict v;
  v.completed = true;
  EXPECT_TRUE(pass_rule(v));
  v.completed = false;
  EXPECT_FALSE(pass_rule(v));
  v.completed = true;
  v.rtl = sc_model::ScStats{};
  v.rtl->decoded_words = 5;
  EXPECT_TRUE(pass_rule(v));
  v.rtl->decoder_mismatches = 1;  // a mismatch fails the run even without a finding
  EXPECT_FALSE(pass_rule(v));
  v.rtl.reset();
  v.findings = 1;
  EXPECT_FALSE(pass_rule(v));
}

TEST(Verify, ExpectedAndFinalDdr) {
  const bundle::Program p = make_program(gemm_program(), gemm_buffers());
  Options o = sequential();
  o.keep_final_ddr = true;
  const Verdict v = run(p, o);
  EXPECT_EQ(bundle::compare_images(run_golden(p, sem()).ddr, v.final_ddr).total_differing, 0u);
  std::vector<uint8_t> wrong = v.final_ddr;
  wrong.at(0x1000) ^= 1;  // a byte the store writes
  o.expect_ddr = &wrong;
  o.expect_ddr_name = "wrong.ddr.bin";
  const Verdict w = run(p, o);
  EXPECT_FALSE(w.pass);
  ASSERT_EQ(w.count(FindingKind::DdrMismatch), 1u);
  EXPECT_NE(format(*w.first()).find("final DDR differs from wrong.ddr.bin"), std::string::npos) << format(*w.first());
  EXPECT_EQ(w.first()->instr, 3);  // the store
}

TEST(Verify, OptionsThatDoNotGoTogetherAreErrors) {
  const bundle::Program p = make_program(gemm_program(), gemm_buffers());
  Options o = sequential();
  o.rtl = true;
  EXPECT_THROW(run(p, o), Error);
  o = sequential();
  o.plant = parse_plant("model-store-short");
  EXPECT_THROW(run(p, o), Error);
  Options rtl_plant;  // an RTL plant without the RTL in the loop
  rtl_plant.plant = parse_plant("rtl-mac-sign");
  try {
    run(p, rtl_plant);
    ADD_FAILURE() << "accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("simulate with --rtl"), std::string::npos) << e.what();
  }
  EXPECT_EQ(backend_named("sequential"), BackendKind::Sequential);
  EXPECT_EQ(backend_named("systemc"), BackendKind::SystemC);
  EXPECT_THROW(backend_named("verilog"), Error);
}

// Many SystemC runs in one process, each on a fresh kernel: the same program gives the same
// verdict every time, whatever ran before it (a plant, the RTL, a deadlock).
TEST(Verify, SystemCRunsRepeatInOneProcessWithIdenticalVerdicts) {
  const bundle::Program p = generated(3, 300);
  const bundle::Program stuck = make_program(
      gemm_program(0x000, 0x080, 0x100, "wait=load, signal=store", "wait=compute", "signal=none"), gemm_buffers());
  Options planted;
  planted.plant = parse_plant("model-store-short");
  Options rtl;
  rtl.rtl = true;
  const Verdict first = run(p, {});
  EXPECT_TRUE(first.pass) << report(first);
  EXPECT_EQ(first.backend, "systemc-tlm");
  const Verdict bad = run(p, planted);
  EXPECT_FALSE(bad.pass);
  EXPECT_GT(bad.findings, 0u);
  const Verdict dead = run(stuck, rtl);
  EXPECT_FALSE(dead.completed);
  EXPECT_GT(dead.count(FindingKind::Deadlock), 0u) << report(dead);
  const Verdict with_rtl = run(p, rtl);
  EXPECT_TRUE(with_rtl.pass) << report(with_rtl);
  ASSERT_TRUE(with_rtl.rtl);
  EXPECT_EQ(with_rtl.rtl->decoded_words, p.instrs.size());
  EXPECT_NE(report(with_rtl).find("  rtl: "), std::string::npos);
  EXPECT_EQ(everything(run(p, {})), everything(first));
  EXPECT_EQ(everything(run(p, planted)), everything(bad));
  EXPECT_EQ(everything(run(stuck, rtl)), everything(dead));
}

// An error thrown and caught after SystemC runs in the process is an ordinary error. Under
// AddressSanitizer, SystemC's last coroutine switch used to leave ASan taking a freed
// coroutine stack for the process's own, and the next throw was reported as a
// stack-buffer-overflow (sim/sc_model/sc_backend.cc restore_asan_stack).
TEST(Verify, ErrorsAfterSystemCRunsAreOrdinaryErrors) {
  const bundle::Program p = make_program(gemm_program(), gemm_buffers());
  for (int k = 0; k < 3; ++k) {
    EXPECT_TRUE(run(p, {}).pass);
    EXPECT_THROW(parse_json("{\"program\": \"p\"}", "x.json"), Error);
    Options bad;
    bad.plant = parse_plant("rtl-mac-sign");  // refused before any simulation: the throw comes from the backend
    EXPECT_THROW(run(p, bad), Error);
  }
}

TEST(VerdictJson, ReadsBackExactly) {
  Options rtl;
  rtl.rtl = true;
  rtl.plant = parse_plant("rtl-decoder-field-bit");
  Options planted;
  planted.plant = parse_plant("model-dma-off-by-one");
  const bundle::Program p = generated(5, 200);
  for (const Verdict& v : {run(overlapping(), sequential()), run(make_program(gemm_program(), gemm_buffers()), {}),
                           run(p, planted), run(p, rtl)}) {
    SCOPED_TRACE(report(v));
    const Verdict back = parse_json(to_json(v), "v.json");
    EXPECT_EQ(everything(back), everything(v));
    EXPECT_EQ(back.by_kind, v.by_kind);
    EXPECT_EQ(back.busy_cycles, v.busy_cycles);
    EXPECT_EQ(back.rtl.has_value(), v.rtl.has_value());
  }
  const Verdict decoder = run(p, rtl);
  EXPECT_FALSE(decoder.pass);
  EXPECT_GT(decoder.count(FindingKind::RtlMismatch), 0u);
  EXPECT_FALSE(parse_json(to_json(decoder), "d.json").rtl->decoder_messages.empty());
}

TEST(VerdictJson, BadInputNamesTheSourceAndTheField) {
  const std::string good = to_json(run(overlapping(), sequential()));
  auto error_of = [](const std::string& text) {
    try {
      parse_json(text, "x.json");
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  std::string missing = good;
  const size_t at = missing.find("\"cycles\"");
  missing.erase(at, missing.find(", ", at) + 2 - at);
  EXPECT_NE(error_of(missing).find("missing field 'cycles'"), std::string::npos) << error_of(missing);
  EXPECT_NE(error_of(missing).find("x.json"), std::string::npos) << error_of(missing);
  std::string unknown = good;
  unknown.replace(unknown.find("\"live-overlap\""), std::string("\"live-overlap\"").size(), "\"live-overlapp\"");
  EXPECT_NE(error_of(unknown).find("unknown finding kind 'live-overlapp'"), std::string::npos) << error_of(unknown);
  std::string liar = good;
  liar.replace(liar.find("\"pass\": false"), std::string("\"pass\": false").size(), "\"pass\": true");
  EXPECT_NE(error_of(liar).find("'pass'"), std::string::npos) << error_of(liar);
  EXPECT_NE(error_of("{\"program\": [1").find("x.json"), std::string::npos);
  EXPECT_NE(error_of("[]").find("x.json"), std::string::npos);
}

}  // namespace
}  // namespace npuforge::sim::verify
