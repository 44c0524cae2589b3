// Simulated instructions (and cycles) per second of the SystemC model in TLM mode, in --rtl
// mode with the Verilated scratchpad + decoder only (`rtl`) and with the RTL compute unit in
// the loop too (`rtl+compute`: GEMM and ELTWISE through npu_compute), with the checkers off and all on, on two 100k-instruction
// programs: `generated` (the generator, configs/gen/default.yaml, seed 1) and `pipeline` (a
// legal load -> gemm -> store loop over 4 rotating buffer slots with the tokens that make the
// reuse safe, small DMAs). The sequential (non-SystemC) backend is the reference.
//
// SystemC elaborates once per process, so every measurement runs in a forked child (the
// program is built once in the parent) and reports its wall time back through a pipe
// (manual time: the CPU time of backend.run() alone).
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <ctime>
#include <cstdio>
#include <string>

#include <benchmark/benchmark.h>

#include "gen/generator.h"
#include "gen/profile.h"
#include "isa/isa.h"
#include "util/rng.h"
#include "sim/backend.h"
#include "sim/checkers.h"
#include "sim/sc_model/sc_backend.h"

namespace npuforge::sim {
namespace {

constexpr unsigned kSlots = 4;
constexpr unsigned kLoadBit = 1, kComputeBit = 2, kStoreBit = 4;

bundle::MemBuffer buffer(std::string name, uint32_t offset, uint64_t size, int64_t first, int64_t last) {
  bundle::MemBuffer b;
  b.symbol = std::move(name);
  b.offset = SramAddr{offset};
  b.size = Bytes{size};
  b.first = first;
  b.last = last;
  b.producer = first;
  return b;
}

// load w; then per tile t: load x[t%4] -> gemm y[t%4] = x * w -> store y. Slot reuse is
// ordered by back-pressure tokens (gemm -> load, store -> compute) for all but the last 4 tiles.
bundle::Program build_program(size_t instructions) {
  const isa::Isa& isa = isa::builtin_isa();
  const isa::InstrSpec& load = isa.require("load");
  const isa::InstrSpec& gemm = isa.require("gemm");
  const isa::InstrSpec& store = isa.require("store");
  bundle::Program p;
  p.name = "bench_pipeline";
  p.isa = &isa;
  bundle::MemMap map;
  map.sram_bytes = p.config.sram_bytes;
  map.alignment = p.config.alignment;
  const uint32_t w_addr = 0x8000, w_ddr = 0x1000;
  auto make_dma = [&](const isa::InstrSpec& spec, uint32_t sram, uint32_t ddr, uint32_t bytes, uint32_t wait,
                      uint32_t signal) {
    isa::Instruction in = isa::Instruction::make(spec);
    in.set(spec.require_field(spec.mnemonic == "load" ? "dst" : "src"), sram);
    in.set(spec.require_field(spec.mnemonic == "load" ? "src" : "dst"), ddr);
    in.set(spec.require_field("rows"), 1);
    in.set(spec.require_field("row_bytes"), bytes);
    in.set(spec.require_field("stride"), bytes);
    in.set(isa::kWaitSlot, wait);
    in.set(isa::kSignalSlot, signal);
    return in;
  };
  p.instrs.push_back(make_dma(load, w_addr, w_ddr, 1024, 0, 0));
  const size_t tiles = (instructions - 2) / 3;
  int64_t w_last = 0;
  for (size_t t = 0; t < tiles; ++t) {
    const uint32_t slot = static_cast<uint32_t>(t % kSlots);
    const uint32_t x = slot * 0x400, y = 0x4000 + slot * 0x400;
    const bool reused = t >= kSlots, reused_later = t + kSlots < tiles;
    const auto i = static_cast<int64_t>(p.instrs.size());
    p.instrs.push_back(make_dma(load, x, static_cast<uint32_t>((t % 16) * 256), 256, reused ? kComputeBit : 0, kComputeBit));
    isa::Instruction g = isa::Instruction::make(gemm);
    g.set(gemm.require_field("dst"), y);
    g.set(gemm.require_field("a"), x);
    g.set(gemm.require_field("b"), w_addr);
    g.set(gemm.require_field("m"), 4);
    g.set(gemm.require_field("n"), 16);
    g.set(gemm.require_field("k"), 64);
    g.set(gemm.require_field("scale"), 3);
    g.set(gemm.require_field("shift"), 7);
    g.set(isa::kWaitSlot, kLoadBit | (reused ? kStoreBit : 0));
    g.set(isa::kSignalSlot, kStoreBit | (reused_later ? kLoadBit : 0));
    p.instrs.push_back(g);
    p.instrs.push_back(make_dma(store, y, static_cast<uint32_t>(0x2000 + (t % 64) * 64), 64, kComputeBit,
                                reused_later ? kComputeBit : 0));
    map.buffers.push_back(buffer("x" + std::to_string(t), x, 256, i, i + 1));
    map.buffers.push_back(buffer("y" + std::to_string(t), y, 64, i + 1, i + 2));
    w_last = i + 1;
  }
  map.buffers.push_back(buffer("w", w_addr, 1024, 0, w_last));
  p.instrs.push_back(isa::Instruction::make(isa.require("halt")));
  map.instructions = static_cast<int64_t>(p.instrs.size());
  p.memmap = std::move(map);
  Rng rng(42);
  p.ddr_init.resize(0x1400);
  for (auto& b : p.ddr_init) b = static_cast<uint8_t>(rng.next());
  return p;
}

bundle::Program generated_program(int64_t instructions) {
  const isa::Isa& isa = isa::builtin_isa();
  const gen::Profile profile = gen::Profile::load_file(NPUFORGE_SOURCE_DIR "/configs/gen/default.yaml");
  gen::GenOptions go;
  go.seed = 1;
  go.length = instructions;
  gen::GeneratedProgram g = gen::generate(isa, isa::NpuConfig{}, profile, go);
  g.bundle.name = "generated_seed1";
  g.with_memmap();
  return std::move(g.bundle);
}

enum Kind { kPipeline, kGenerated };

const bundle::Program& program(Kind kind) {
  static const bundle::Program pipeline = build_program(100'000);
  static const bundle::Program generated = generated_program(100'000);
  return kind == kPipeline ? pipeline : generated;
}

struct Sample {
  double seconds = 0;
  uint64_t instructions = 0, cycles = 0, findings = 0;
  uint64_t compute_cycles = 0;  // RTL compute-unit cycles (rtl+compute: shows it was in the loop)
  uint64_t page_faults = 0;     // minor faults inside the run: first touches are CPU time not seen in Ir
  int ok = 0;
};

enum Mode { kSequential, kTlm, kRtl, kRtlCompute };

// CPU time of this process: the machine is shared, so wall time would measure the neighbours.
double cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

uint64_t minor_faults() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<uint64_t>(ru.ru_minflt);
}

Sample run_once(Kind kind, Mode mode, bool checkers_on) {
  const bundle::Program& p = program(kind);
  const Semantics sem(*p.isa);
  CheckerOptions co;
  co.shadow = co.overlap = co.hazard = checkers_on;
  Checkers checks(p, sem, co);
  sc_model::ScOptions so;
  so.sram = mode >= kRtl ? sc_model::SramModel::Rtl : sc_model::SramModel::Tlm;
  so.rtl_compute = mode == kRtlCompute;
  sc_model::ScBackend sc(sem, so);
  SequentialBackend seq(sem);
  Backend& backend = mode == kSequential ? static_cast<Backend&>(seq) : sc;
  const uint64_t f0 = minor_faults();
  const double t0 = cpu_seconds();
  const RunResult r = backend.run(p, checks);
  const double t1 = cpu_seconds();
  return {t1 - t0,          r.instructions,        r.cycles, checks.total(), sc.stats().compute_cycles,
          minor_faults() - f0, r.completed ? 1 : 0};
}

// Runs run_once in a child process (a fresh SystemC kernel) and returns its sample.
Sample run_forked(Kind kind, Mode mode, bool checkers_on) {
  int fds[2];
  if (pipe(fds) != 0) return {};
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    const Sample s = run_once(kind, mode, checkers_on);
    const ssize_t n = write(fds[1], &s, sizeof s);
    _exit(n == sizeof s ? 0 : 1);
  }
  close(fds[1]);
  Sample s;
  const ssize_t n = read(fds[0], &s, sizeof s);
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (n != sizeof s) s = {};
  return s;
}

void BM_Sim(benchmark::State& state) {
  const auto kind = static_cast<Kind>(state.range(0));
  const auto mode = static_cast<Mode>(state.range(1));
  const bool checkers_on = state.range(2) != 0;
  program(kind);  // built once, before the first fork
  Sample s;
  for (auto _ : state) {
    s = run_forked(kind, mode, checkers_on);
    if (!s.ok) {
      state.SkipWithError("simulation failed or did not complete");
      return;
    }
    state.SetIterationTime(s.seconds);
  }
  state.counters["instr_per_s"] = benchmark::Counter(static_cast<double>(s.instructions) / s.seconds);
  state.counters["instructions"] = static_cast<double>(s.instructions);
  state.counters["sim_cycles"] = static_cast<double>(s.cycles);
  state.counters["cycles_per_s"] = benchmark::Counter(static_cast<double>(s.cycles) / s.seconds);
  state.counters["findings"] = static_cast<double>(s.findings);
  state.counters["compute_cycles"] = static_cast<double>(s.compute_cycles);
  state.counters["page_faults"] = static_cast<double>(s.page_faults);
  const char* mode_name = mode == kSequential ? "sequential" : mode == kTlm ? "tlm" : mode == kRtl ? "rtl" : "rtl+compute";
  state.SetLabel(std::string(kind == kPipeline ? "pipeline " : "generated ") + mode_name +
                 (checkers_on ? " checkers=on" : " checkers=off"));
}

BENCHMARK(BM_Sim)
    ->ArgNames({"program", "mode", "checkers"})
    ->ArgsProduct({{kGenerated, kPipeline}, {kSequential, kTlm, kRtl, kRtlCompute}, {0, 1}})
    ->UseManualTime()
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace npuforge::sim

BENCHMARK_MAIN();
