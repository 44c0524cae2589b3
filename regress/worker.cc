// One seed in its own process: generate, sample coverage, simulate via `npuforge sim`.
#include <cctype>
#include <chrono>
#include <fstream>
#include <sstream>

#include <fmt/core.h>

#include "gen/output.h"
#include "gen/placer.h"
#include "isa/error.h"
#include "isa/file_io.h"
#include "regress/proc.h"
#include "regress/runner.h"
#include "regress/shrink.h"
#include "regress/text.h"

namespace npuforge::regress {
namespace {

void write_text(const std::string& path, const std::string& text) { isa::write_file(path, text); }

// A missing log reads as empty (the simulator may have died before writing it).
std::string read_text(const std::string& path) {
  return std::filesystem::exists(path) ? isa::read_file(path, "simulator log") : std::string();
}

// What the per-seed table shows besides pass/fail.
struct SeedFigures {
  uint64_t instructions = 0, buffers = 0, peak_sram = 0, sram_bytes = 0, cycles = 0;
};

void write_result(const std::string& prefix, std::string_view status, const std::string& finding,
                  uint64_t findings, const SeedFigures& f, double gen_s, double sim_s) {
  write_text(prefix + ".result.json",
             fmt::format("{{\"status\": \"{}\", \"finding\": {}, \"kind\": {}, \"findings\": {}, "
                         "\"instructions\": {}, \"buffers\": {}, \"peak_sram\": {}, \"sram_bytes\": {}, "
                         "\"cycles\": {}, \"gen_seconds\": {:.4f}, \"sim_seconds\": {:.4f}}}\n",
                         status, json_quote(finding), json_quote(finding_kind(finding)), findings,
                         f.instructions, f.buffers, f.peak_sram, f.sram_bytes, f.cycles, gen_s, sim_s));
}

// The simulator's verdict line reads "PASS name: N of M instructions, C cycles (...)".
uint64_t parse_cycles(const std::string& out) {
  const size_t at = out.find(" cycles");
  if (at == std::string::npos) return 0;
  size_t begin = at;
  while (begin > 0 && std::isdigit(static_cast<unsigned char>(out[begin - 1]))) --begin;
  return begin == at ? 0 : std::stoull(out.substr(begin, at - begin));
}

// Counts finding lines in the simulator's report.
uint64_t count_findings(const std::string& out) {
  uint64_t n = 0;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) n += !finding_kind(line).empty();
  return n;
}

}  // namespace

int run_worker(const WorkerOptions& o) {
  using Clock = std::chrono::steady_clock;
  const auto t0 = Clock::now();
  const isa::Isa& isa = isa::builtin_isa();
  gen::GeneratedProgram prog;
  gen::Profile profile;
  try {
    profile = gen::Profile::load_file(o.job.profile);
    const isa::NpuConfig npu = o.job.npu.empty() ? isa::NpuConfig{} : isa::NpuConfig::load_file(o.job.npu);
    gen::GenOptions opt;
    opt.seed = o.job.seed;
    opt.length = o.job.length;
    if (!o.job.npu.empty()) opt.npu_source = o.job.npu;
    std::unique_ptr<allocator::Allocator> alloc;
    std::unique_ptr<gen::OverlappingPlacer> placer;
    if (o.job.plant_overlap > 0) {  // test hook: the allocator bug the checkers must catch
      alloc = std::make_unique<allocator::Allocator>(SramAddr{0}, npu.sram_bytes, npu.alignment, profile.fit);
      placer = std::make_unique<gen::OverlappingPlacer>(*alloc, o.job.plant_overlap);
      opt.placer = placer.get();
    }
    prog = gen::generate(isa, npu, profile, opt);
    gen::write_outputs(isa, prog, o.prefix);
    const Coverage cov = sample(isa, prog, prog.memmap(), profile.oom);
    write_text(o.coverage_path.empty() ? o.prefix + ".cov.json" : o.coverage_path, cov.to_json());
  } catch (const std::exception& e) {
    write_result(o.prefix, "error", fmt::format("generate: {}", e.what()), 0, SeedFigures{},
                 std::chrono::duration<double>(Clock::now() - t0).count(), 0);
    return 2;
  }
  const double gen_s = std::chrono::duration<double>(Clock::now() - t0).count();
  std::vector<std::string> argv{o.exe, "sim", o.prefix + ".bin", "--memmap", o.prefix + ".memmap.yaml",
                                "--ddr", o.prefix + ".ddr.bin", "--max-errors", "20"};
  if (!o.job.npu.empty()) argv.insert(argv.end(), {"--npu", o.job.npu});
  if (o.job.rtl) argv.push_back("--rtl");
  const std::string log = o.prefix + ".sim.log";
  const ProcResult r = run_process(argv, log, log);
  const std::string out = read_text(log);
  const uint64_t n = count_findings(out);
  const std::string first = first_finding(out);
  const SeedFigures figures{prog.instrs.size(), prog.summary.buffers, prog.summary.peak_sram,
                            prog.npu.sram_bytes.value, parse_cycles(out)};
  if (r.exit_code == 0) {
    write_result(o.prefix, "pass", "", 0, figures, gen_s, r.seconds);
    return 0;
  }
  if (r.exit_code == 1 && out.find("FAIL") != std::string::npos) {
    write_result(o.prefix, "fail", first.empty() ? "FAIL without a finding line" : first, n, figures, gen_s,
                 r.seconds);
    return 1;
  }
  std::string tail = out.substr(out.size() > 300 ? out.size() - 300 : 0);
  write_result(o.prefix, "error",
               fmt::format("simulator exit {} signal {}: {}", r.exit_code, r.signal, tail), n, figures, gen_s,
               r.seconds);
  return 2;
}

}  // namespace npuforge::regress
