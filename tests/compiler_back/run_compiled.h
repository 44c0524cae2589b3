#pragma once
// The core check of the back half: a QGraph compiled for an NPU config, every NPU segment run
// on the golden model (sequential semantics, every checker on) from the DDR image the bundle
// would hold, must leave exactly the bytes of the int8 reference (qref) for every tensor it
// writes; the programs pass the static program checks and the memory maps the plan check;
// the SRAM high water stays within the config.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include <fmt/core.h>

#include "compiler/backend.h"
#include "compiler/bundle.h"
#include "compiler/qref.h"
#include "gen/program_check.h"
#include "planner/plan_check.h"
#include "qgraph_builder.h"
#include "sim/golden.h"

namespace npuforge::compiler::testing {

inline isa::NpuConfig npu_with_sram(uint64_t sram_bytes) {
  return isa::NpuConfig::load_string(fmt::format("sram_bytes: {}\n", sram_bytes), "test-npu.yaml");
}

struct RunResult {
  CompiledModel compiled;
  uint64_t instructions = 0;
};

// Compiles `g`, runs it segment by segment and checks everything above (gtest failures).
// With the naive arena (no reuse) every tensor is still in DDR when its segment ends and is
// compared on its own; with a planner that reuses bytes, a tensor later overwritten is checked
// through its readers and the final image.
inline RunResult run_compiled(const QGraph& g, const isa::NpuConfig& npu, uint64_t seed = 7,
                              allocator::Policy policy = allocator::Policy::FirstFit,
                              const std::string& arena_algo = "naive") {
  const isa::Isa& isa = isa::builtin_isa();
  BackendOptions o;
  o.npu = npu;
  o.policy = policy;
  o.header = "test";
  o.arena_algo = arena_algo;
  RunResult r;
  r.compiled = compile_backend(g, isa, o);
  const CompiledModel& m = r.compiled;
  const QrefResult ref = run_qref(g, random_inputs(g, seed));
  std::vector<uint8_t> image = initial_image(g, m, ref.values);
  const sim::Semantics sem(isa);
  for (size_t si = 0; si < m.segments.size(); ++si) {
    const CompiledSegment& cs = m.segments[si];
    if (cs.segment.target != Target::kNpu) {
      apply_outputs(g, m, g.ops[cs.segment.first], ref.values, image);
      continue;
    }
    const SegmentProgram& p = cs.program;
    r.instructions += p.instrs.size();
    EXPECT_LE(p.sram_peak, npu.sram_bytes.value) << "segment " << si;
    const gen::ProgramCheckResult pc = gen::check_program(p.instrs, p.memmap, npu.ddr_bytes.value);
    EXPECT_TRUE(pc.ok()) << "segment " << si << ": " << pc.report();
    const planner::PlanCheckResult mc = planner::check_memmap(p.memmap);
    EXPECT_TRUE(mc.ok()) << "segment " << si << ": " << mc.report();
    bundle::Program prog;
    prog.name = fmt::format("seg{}", si);
    prog.isa = &isa;
    prog.instrs = p.instrs;
    prog.memmap = p.memmap;
    prog.config = npu;
    prog.ddr_init = image;
    EXPECT_EQ(prog.validate(), "");
    sim::Checkers checks(prog, sem);
    const sim::GoldenResult gold = sim::run_golden(prog, sem, &checks);
    EXPECT_TRUE(checks.clean()) << "segment " << si << ":\n" << checks.summary();
    for (uint32_t i = cs.segment.first; i < cs.segment.end; ++i) apply_outputs(g, m, g.ops[i], ref.values, image);
    for (uint32_t i = cs.segment.first; i < cs.segment.end; ++i) {
      if (std::holds_alternative<AliasOp>(g.ops[i])) continue;
      for (TensorId t : op_outputs(g.ops[i])) {
        const uint64_t addr = m.ddr.addr[t.value];
        const auto want = ref.values[t.value].bytes();
        if (std::memcmp(image.data() + addr, want.data(), want.size()) != 0) continue;  // overwritten later
        size_t bad = 0, first_bad = SIZE_MAX;
        for (size_t b = 0; b < want.size(); ++b) {
          const uint8_t got = addr + b < gold.ddr.size() ? gold.ddr[addr + b] : 0;
          if (got != static_cast<uint8_t>(want[b])) {
            ++bad;
            if (first_bad == SIZE_MAX) first_bad = b;
          }
        }
        EXPECT_EQ(bad, 0u) << "tensor '" << g.tensor(t).name << "' (op " << i << "): " << bad << " of " << want.size()
                           << " bytes differ from qref, first at byte " << first_bad;
      }
    }
    const bundle::DdrDiff diff = bundle::compare_images(image, gold.ddr);
    EXPECT_EQ(diff.bytes, 0u) << "segment " << si << ": DDR differs from the expected image at 0x" << std::hex
                              << diff.addr;
  }
  return r;
}

// LOADs of a DDR buffer (by name) over every NPU segment.
inline size_t loads_of(const CompiledModel& m, const std::string& name) {
  size_t n = 0;
  for (const CompiledSegment& cs : m.segments)
    for (const bundle::MemDdrBuffer& b : cs.program.memmap.ddr_buffers)
      if (b.name == name) n += b.readers.size();
  return n;
}

// SRAM buffers of the whole model whose name contains `part`.
inline size_t buffers_named(const CompiledModel& m, const std::string& part) {
  size_t n = 0;
  for (const CompiledSegment& cs : m.segments)
    for (const bundle::MemBuffer& b : cs.program.memmap.buffers)
      if (b.symbol.find(part) != std::string::npos) ++n;
  return n;
}

}  // namespace npuforge::compiler::testing
