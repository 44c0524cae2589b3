// The checkers log their events and check them in batches (CheckerOptions::batch): the
// findings, their order and the counts must be those of checking each event as it comes
// (batch 1), with findings reported from outside (report()) in their place among them.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "gen/generator.h"
#include "gen/profile.h"
#include "sim/backend.h"
#include "sim/golden.h"
#include "sim/sc_model/sc_backend.h"

namespace npuforge::sim {
namespace {

const Semantics& sem() {
  static const Semantics s(isa::builtin_isa());
  return s;
}

bundle::Program planted(PlantId plant, uint64_t seed, int64_t length) {
  const auto profile = gen::Profile::load_file(std::string(NPUFORGE_SOURCE_DIR) + "/configs/gen/default.yaml");
  gen::GenOptions o;
  o.seed = seed;
  o.length = length;
  o.plant = Plant{plant};
  const isa::NpuConfig npu;
  gen::GeneratedProgram g = gen::generate(isa::builtin_isa(), npu, profile, o);
  g.with_memmap();  // the generator's bundle, with its memory map
  bundle::Program p = std::move(g.bundle);
  p.name = "default/" + std::to_string(seed);
  return p;
}

CheckerOptions with_batch(size_t batch) { return {.max_errors = 0, .batch = batch}; }

// Everything a query shows: the counts and every finding, in order.
std::string everything(const Checkers& c) { return c.summary(); }

const std::vector<size_t> kBatches = {2, 7, 1024, 1u << 20};
const std::vector<PlantId> kPlants = {PlantId::GenOverlapLive, PlantId::GenEarlyFree, PlantId::GenDropToken,
                                      PlantId::GenNoReuseWait};

TEST(CheckersBatch, GoldenAndSequentialFindingsDoNotDependOnTheBatch) {
  uint64_t findings = 0;
  for (PlantId plant : kPlants) {
    for (uint64_t seed = 1; seed <= 3; ++seed) {
      const bundle::Program p = planted(plant, seed, 400);
      Checkers one(p, sem(), with_batch(1));
      const GoldenResult g = run_golden(p, sem(), &one);
      Checkers seq_one(p, sem(), with_batch(1));
      const RunResult r = SequentialBackend(sem()).run(p, seq_one);
      check_ddr(p, sem(), g.ddr, r.ddr, "golden", seq_one);
      findings += one.total() + seq_one.total();
      for (size_t batch : kBatches) {
        Checkers golden(p, sem(), with_batch(batch));
        run_golden(p, sem(), &golden);
        EXPECT_EQ(everything(golden), everything(one)) << p.name << " batch " << batch;
        Checkers seq(p, sem(), with_batch(batch));
        const RunResult rb = SequentialBackend(sem()).run(p, seq);
        check_ddr(p, sem(), g.ddr, rb.ddr, "golden", seq);
        EXPECT_EQ(everything(seq), everything(seq_one)) << p.name << " batch " << batch;
      }
    }
  }
  EXPECT_GT(findings, 100u);  // the comparison is worth something
}

// A finding reported from outside (an executor's out-of-range access) comes after the
// findings of the events before it and before those of the events after it.
TEST(CheckersBatch, ReportedFindingsKeepTheirPlaceAmongTheEvents) {
  const bundle::Program p = planted(PlantId::GenDropToken, 2, 400);
  auto feed = [&](Checkers& c) {
    for (size_t i = 0; i < p.instrs.size(); ++i) {
      c.on_start(i, 10 * i);
      c.on_accesses(i);
      if (i % 7 == 0) {
        Finding f;
        f.kind = FindingKind::OutOfRange;
        f.instr = static_cast<int64_t>(i);
        f.detail = "from outside";
        c.report(std::move(f));
      }
      c.on_finish(i, 10 * i + 25);  // overlapping instructions: hazards and order violations
      if (i % 50 == 0) (void)c.total();  // a query mid-run
    }
    c.on_end();
  };
  Checkers one(p, sem(), with_batch(1));
  feed(one);
  ASSERT_GT(one.total() - one.count(FindingKind::OutOfRange), 20u) << everything(one);
  for (size_t batch : kBatches) {
    Checkers c(p, sem(), with_batch(batch));
    feed(c);
    EXPECT_EQ(everything(c), everything(one)) << "batch " << batch;
  }
}

// The concurrent model feeds events in simulated-time order, with reports in between: one
// NPU per batch size in one simulation (the NPUs do not interact), the model planted too.
TEST(CheckersBatch, TlmFindingsDoNotDependOnTheBatch) {
  ASSERT_TRUE(sc_model::can_simulate()) << "one SystemC simulation per process";
  std::vector<bundle::Program> programs;
  for (PlantId plant : kPlants) programs.push_back(planted(plant, 4, 300));
  sc_model::ScOptions model;
  model.plant = Plant{PlantId::ModelStoreEarly};
  std::vector<size_t> batches = {1};
  batches.insert(batches.end(), kBatches.begin(), kBatches.end());
  std::vector<std::unique_ptr<Checkers>> checks;
  std::vector<sc_model::ScJob> jobs;
  for (const bundle::Program& p : programs) {
    for (size_t batch : batches) {
      checks.push_back(std::make_unique<Checkers>(p, sem(), with_batch(batch)));
      jobs.push_back({&p, checks.back().get(), model});
    }
  }
  sc_model::run_together(sem(), jobs);
  uint64_t findings = 0;
  for (size_t k = 0; k < jobs.size(); ++k) {
    const Checkers& one = *checks[k - k % batches.size()];
    findings += checks[k]->total();
    EXPECT_EQ(everything(*checks[k]), everything(one)) << jobs[k].program->name << " batch " << batches[k % batches.size()];
  }
  EXPECT_GT(findings, 100u);
}

}  // namespace
}  // namespace npuforge::sim
