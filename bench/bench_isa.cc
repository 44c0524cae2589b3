// ISA throughput: encode+decode and assemble, in instructions per second.
#include <benchmark/benchmark.h>

#include "isa/assembler.h"
#include "isa/instruction.h"

namespace {
using namespace npuforge::isa;

// A mix of every opcode, as text and as instructions.
const std::string& sample_text() {
  static const std::string text =
      "load 0x40, ddr:0x1000, rows=4, row_bytes=256, stride=256, signal=compute\n"
      "gemm 0x1000, 0x2000, 0x3000, m=16, n=16, k=64, scale=3, shift=8, relu, wait=load\n"
      "im2col 0x4000, 0x1000, h=8, w=8, c=8, kh=3, kw=3, pad=1\n"
      "eltwise 0x5000, 0x4000, b=0x6000, len=512, op=add, scale=2, shift=1\n"
      "pool 0x7000, 0x5000, h=8, w=8, c=8, window=2, stride=2, mode=avg, signal=store\n"
      "move 0x8000, 0x7000, len=128\n"
      "store ddr:0x9000, 0x8000, rows=2, row_bytes=64, stride=128, wait=compute\n"
      "sync\nnop\nhalt\n";
  return text;
}

void BM_EncodeDecode(benchmark::State& state) {
  const Isa& isa = builtin_isa();
  const auto prog = assemble(isa, sample_text(), "bench.s").instrs;
  std::vector<uint8_t> word(isa.width_bytes());
  for (auto _ : state) {
    for (const auto& in : prog) {
      encode(in, word);
      benchmark::DoNotOptimize(decode(isa, word));
    }
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(prog.size()));
}
BENCHMARK(BM_EncodeDecode);

void BM_Assemble(benchmark::State& state) {
  const Isa& isa = builtin_isa();
  std::string text;
  for (int i = 0; i < 100; ++i) text += sample_text();
  for (auto _ : state) benchmark::DoNotOptimize(assemble(isa, text, "bench.s"));
  state.SetItemsProcessed(state.iterations() * 1000);
}
BENCHMARK(BM_Assemble);

void BM_Disassemble(benchmark::State& state) {
  const auto prog = assemble(builtin_isa(), sample_text(), "bench.s").instrs;
  for (auto _ : state)
    for (const auto& in : prog) benchmark::DoNotOptimize(disassemble(in));
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(prog.size()));
}
BENCHMARK(BM_Disassemble);

void BM_Extents(benchmark::State& state) {
  const auto prog = assemble(builtin_isa(), sample_text(), "bench.s").instrs;
  for (auto _ : state)
    for (const auto& in : prog) benchmark::DoNotOptimize(extents(in));
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(prog.size()));
}
BENCHMARK(BM_Extents);

}  // namespace

BENCHMARK_MAIN();
