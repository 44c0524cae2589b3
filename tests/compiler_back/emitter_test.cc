// The segment emitter on hand-written OpCodes: tokens follow the byte accesses (a consumer
// waits for its producer in another queue, a reuse of SRAM or DDR bytes for their earlier
// readers), placement through the symbol table, fix-up with offsets, the memory map with DDR
// buffers, and the result passes the generator's program checks and runs on the golden model.
#include <gtest/gtest.h>

#include "bundle/memmap.h"
#include "compiler/emitter.h"
#include "gen/program_check.h"
#include "isa/token_order.h"
#include "planner/plan_check.h"
#include "sim/golden.h"
#include "util/error.h"

namespace npuforge::compiler {
namespace {

const isa::Isa& isa() { return isa::builtin_isa(); }

isa::Instruction dma(const char* mnemonic, uint64_t ddr, int64_t rows, int64_t row_bytes, int64_t stride) {
  const isa::InstrSpec& s = isa().require(mnemonic);
  isa::Instruction in = isa::Instruction::make(s);
  in.set_value(s.require_field(std::string(mnemonic) == "load" ? "src" : "dst"), static_cast<int64_t>(ddr));
  in.set_value(s.require_field("rows"), rows);
  in.set_value(s.require_field("row_bytes"), row_bytes);
  in.set_value(s.require_field("stride"), stride);
  return in;
}

unsigned field(const char* mnemonic, const char* name) { return isa().require(mnemonic).require_field(name); }

// load a (DDR 0, buffer "in") and b (DDR 256, "w"), gemm, store to the arena (DDR 1024, "t").
OpCode producer_op() {
  OpCode c;
  const uint32_t a = c.buffer("t.in@t0", 64), b = c.buffer("t.w", 64), out = c.buffer("t.out@t0", 16);
  c.add(dma("load", 0, 1, 64, 64), 0);
  c.write(a, field("load", "dst"));
  c.add(dma("load", 256, 1, 64, 64), 1);
  c.write(b, field("load", "dst"));
  const isa::InstrSpec& g = isa().require("gemm");
  isa::Instruction gm = isa::Instruction::make(g);
  gm.set_value(g.require_field("m"), 4);
  gm.set_value(g.require_field("n"), 4);
  gm.set_value(g.require_field("k"), 16);
  c.add(gm);
  c.read(a, g.require_field("a")).read(b, g.require_field("b")).write(out, g.require_field("dst"));
  c.add(dma("store", 1024, 1, 16, 16), 2);
  c.read(out, field("store", "src"));
  return c;
}

// Reads the arena tensor back (its second half, through an offset into the buffer) and stores
// it to the output region.
OpCode consumer_op() {
  OpCode c;
  const uint32_t x = c.buffer("y.in@t0", 16);
  c.add(dma("load", 1024, 1, 16, 16), 2);
  c.write(x, field("load", "dst"));
  c.add(dma("store", 2048, 1, 8, 8), 3);
  c.read(x, field("store", "src"), 8);
  return c;
}

// A new tensor in the bytes of "t" (an arena reuse): its STORE must wait for the LOAD above.
OpCode reuse_op() {
  OpCode c;
  const uint32_t z = c.buffer("u.in@t0", 16);
  c.add(dma("load", 0, 1, 16, 16), 0);
  c.write(z, field("load", "dst"));
  c.add(dma("store", 1024, 1, 16, 16), 4);
  c.read(z, field("store", "src"));
  return c;
}

std::vector<DdrBufferSpec> ddr_buffers() {
  return {{"x", "input", 0, 64, true, false},
          {"t.weights", "weights", 256, 64, true, true},
          {"t", "arena", 1024, 64, false, false},
          {"y", "output", 2048, 64, false, true},
          {"u", "arena", 1024, 64, false, true}};
}

SegmentProgram emit_all(const isa::NpuConfig& npu) {
  SegmentEmitter em(isa(), npu, allocator::Policy::FirstFit, ddr_buffers(), 1024, 4096);
  em.emit(producer_op());
  em.emit(consumer_op());
  em.emit(reuse_op());
  return em.finish("test");
}

TEST(SegmentEmitter, TokensOrderEveryCrossQueueAccess) {
  const SegmentProgram p = emit_all(isa::NpuConfig{});
  ASSERT_EQ(p.instrs.size(), 9u);  // 8 + halt
  const isa::TokenOrder order(p.instrs);
  EXPECT_TRUE(order.stuck().empty());
  EXPECT_TRUE(order.unmatched_waits().empty());
  EXPECT_TRUE(order.unmatched_signals().empty());
  // gemm (2) after both loads; store (3) after the gemm.
  EXPECT_TRUE(order.happens_before(1, 2));
  EXPECT_TRUE(order.happens_before(2, 3));
  // the arena tensor's LOAD (4) after its STORE (3): DDR read-after-write across queues.
  EXPECT_TRUE(order.happens_before(3, 4));
  // The reuse: u's STORE (7) after t's LOAD (4) read those DDR bytes.
  EXPECT_TRUE(order.happens_before(4, 7));
  // u's LOAD (6) may reuse the SRAM of y.in only after the store (5) read it.
  EXPECT_TRUE(order.happens_before(5, 6) || p.memmap.buffers[4].offset != p.memmap.buffers[3].offset);
  EXPECT_GT(p.tokens, 0u);
}

TEST(SegmentEmitter, ProgramPassesTheChecksAndRunsOnTheGoldenModel) {
  const isa::NpuConfig npu;
  const SegmentProgram p = emit_all(npu);
  const gen::ProgramCheckResult pc = gen::check_program(p.instrs, p.memmap, npu.ddr_bytes.value);
  EXPECT_TRUE(pc.ok()) << pc.report();
  const planner::PlanCheckResult mc = planner::check_memmap(p.memmap);
  EXPECT_TRUE(mc.ok()) << mc.report();

  bundle::Program prog;
  prog.name = "emitter";
  prog.isa = &isa();
  prog.instrs = p.instrs;
  prog.memmap = p.memmap;
  prog.config = npu;
  prog.ddr_init.assign(4096, 0);
  for (int i = 0; i < 64; ++i) prog.ddr_init[i] = static_cast<uint8_t>(i % 7 - 3);   // a: 4 x 16
  for (int i = 0; i < 64; ++i) prog.ddr_init[256 + i] = static_cast<uint8_t>(i % 5 - 2);  // b: 16 x 4
  const sim::Semantics sem(isa());
  sim::Checkers checks(prog, sem);
  const sim::GoldenResult r = sim::run_golden(prog, sem, &checks);
  EXPECT_TRUE(checks.clean()) << checks.summary();
  // y = the second half of the gemm output (rows 2 and 3), computed here by hand.
  for (int row = 2; row < 4; ++row)
    for (int n = 0; n < 4; ++n) {
      int32_t acc = 0;
      for (int k = 0; k < 16; ++k) acc += ((row * 16 + k) % 7 - 3) * ((k * 4 + n) % 5 - 2);
      const auto want = static_cast<int8_t>(std::clamp(acc, -128, 127));
      EXPECT_EQ(static_cast<int8_t>(r.ddr[2048 + (row - 2) * 4 + n]), want) << row << "," << n;
    }
}

TEST(SegmentEmitter, MemoryMapNamesBuffersAndDdrOwners) {
  const SegmentProgram p = emit_all(isa::NpuConfig{});
  const bundle::MemMap& m = p.memmap;
  ASSERT_EQ(m.buffers.size(), 5u);
  EXPECT_EQ(m.buffers[0].symbol, "t.in@t0");
  EXPECT_EQ(m.buffers[0].producer, 0);
  EXPECT_EQ(m.buffers[0].consumers, (std::vector<int64_t>{2}));
  ASSERT_EQ(m.ddr_buffers.size(), 5u);
  const bundle::MemDdrBuffer& t = m.ddr_buffers[2];
  EXPECT_EQ(t.name, "t");
  EXPECT_EQ(t.writers, (std::vector<int64_t>{3}));
  EXPECT_EQ(t.readers, (std::vector<int64_t>{4}));
  EXPECT_EQ(t.first, 3);
  EXPECT_EQ(t.last, 4);
  const bundle::MemDdrBuffer& x = m.ddr_buffers[0];  // an input: live from 0 to its last read
  EXPECT_EQ(x.first, 0);
  EXPECT_EQ(x.last, 6);
  const bundle::MemDdrBuffer& y = m.ddr_buffers[3];  // an output: live to the end
  EXPECT_EQ(y.first, 5);
  EXPECT_EQ(y.last, 8);
  // The memory map survives its own file format.
  const bundle::MemMap back = bundle::MemMap::load_string(m.to_yaml(), "x");
  EXPECT_EQ(back.to_yaml(), m.to_yaml());
  // The store reads y.in at offset 8: fixed up to the buffer's address + 8.
  EXPECT_EQ(p.instrs[5].get(field("store", "src")), m.buffers[3].offset.value + 8);
}

TEST(SegmentEmitter, AReadBeforeAnyWriteIsAnError) {
  OpCode c;
  const uint32_t x = c.buffer("x", 16);
  c.add(dma("store", 1024, 1, 16, 16));
  c.read(x, field("store", "src"));
  SegmentEmitter em(isa(), isa::NpuConfig{}, allocator::Policy::FirstFit, {}, 0, 0);
  EXPECT_THROW(em.emit(c), Error);
}

TEST(SramFit, ReportsTheBufferThatFindsNoRoom) {
  isa::NpuConfig small = isa::NpuConfig::load_string("sram_bytes: 4096\nddr_bytes: 65536\n", "small.yaml");
  OpCode c;
  const uint32_t a = c.buffer("a", 3000), b = c.buffer("b", 2000);
  c.add(dma("load", 0, 1, 3000, 3000));
  c.write(a, field("load", "dst"));
  c.add(dma("load", 0, 1, 2000, 2000));
  c.write(b, field("load", "dst"));
  c.add(dma("store", 0, 1, 3000, 3000));  // a is still to be read when b is placed
  c.read(a, field("store", "src"));
  c.add(dma("store", 0, 1, 2000, 2000));
  c.read(b, field("store", "src"));
  const SramFit f = sram_fit(c, small, allocator::Policy::FirstFit);
  EXPECT_FALSE(f.fits);
  EXPECT_NE(f.failure.find("'b'"), std::string::npos) << f.failure;
  // Once a is read (and freed) b fits.
  OpCode d;
  const uint32_t a2 = d.buffer("a", 3000), b2 = d.buffer("b", 2000);
  d.add(dma("load", 0, 1, 3000, 3000));
  d.write(a2, field("load", "dst"));
  d.add(dma("store", 0, 1, 3000, 3000));
  d.read(a2, field("store", "src"));
  d.add(dma("load", 0, 1, 2000, 2000));
  d.write(b2, field("load", "dst"));
  d.add(dma("store", 0, 1, 2000, 2000));
  d.read(b2, field("store", "src"));
  const SramFit g = sram_fit(d, small, allocator::Policy::FirstFit);
  EXPECT_TRUE(g.fits) << g.failure;
  EXPECT_EQ(g.peak, 3008u);
}

}  // namespace
}  // namespace npuforge::compiler
