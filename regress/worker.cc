// One seed: generate, sample coverage, simulate, either in this process (the in-process path,
// a child forked by the runner) or via `npuforge sim` on the written files (--isolate-seeds).
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>

#include <fmt/core.h>

#include "gen/output.h"
#include "gen/placer.h"
#include "gen/profile.h"
#include "isa/npu_config.h"
#include "util/plant.h"
#include "util/error.h"
#include "util/sysinfo.h"
#include "util/file_io.h"
#include "regress/proc.h"
#include "regress/runner.h"
#include "regress/seed_kind.h"
#include "sim/verify/verdict_json.h"
#include "sim/verify/verify.h"
#include "util/text.h"
#include "util/yaml_util.h"

namespace npuforge::regress {
namespace {

constexpr uint64_t kMaxErrors = 20;  // findings each seed's simulator report lists

void write_text(const std::string& path, const std::string& text) { util::write_file(path, text); }

// A missing log reads as empty (the simulator may have died before writing it).
std::string read_text(const std::string& path) {
  return std::filesystem::exists(path) ? util::read_file(path, "simulator log") : std::string();
}

// What the per-seed table shows besides pass/fail.
struct SeedFigures {
  uint64_t instructions = 0, buffers = 0, peak_sram = 0, sram_bytes = 0, cycles = 0;
};

void write_result(const std::string& prefix, std::string_view status, const std::string& finding, const SeedKind& kind,
                  uint64_t findings, const SeedFigures& f, double gen_s, double sim_s) {
  write_text(prefix + ".result.json",
             fmt::format("{{\"status\": \"{}\", \"finding\": {}, \"kind\": {}, {}, \"findings\": {}, "
                         "\"instructions\": {}, \"buffers\": {}, \"peak_sram\": {}, \"sram_bytes\": {}, "
                         "\"cycles\": {}, \"gen_seconds\": {:.4f}, \"sim_seconds\": {:.4f}}}\n",
                         status, util::json_quote(finding), util::json_quote(tag(kind)), kind_json_fields(kind),
                         findings, f.instructions, f.buffers, f.peak_sram, f.sram_bytes, f.cycles, gen_s, sim_s));
}

// A simulated seed's result from its verdict: the one judgement of both paths (in-process and
// --isolate-seeds). Returns the worker's exit code.
int write_verdict(const std::string& prefix, const sim::verify::Verdict& v, SeedFigures figures, double gen_s,
                  double sim_s) {
  figures.cycles = v.cycles;
  if (v.pass) {
    write_result(prefix, "pass", "", SeedKind{}, 0, figures, gen_s, sim_s);
    return 0;
  }
  const std::string first = v.first() ? sim::format(*v.first()) : "FAIL without a finding (run incomplete or RTL mismatch)";
  write_result(prefix, "fail", first, kind_of(v), v.findings, figures, gen_s, sim_s);
  return 1;
}

SeedInputs load_inputs(const WorkerOptions& o) {
  if (o.preloaded) return *o.preloaded;
  return SeedInputs{gen::Profile::load_file(o.job.profile), isa::load_npu_config(o.job.npu)};
}

// Generates the job's program exactly as `npuforge gen` would (same header, same files).
gen::GeneratedProgram generate_seed(const WorkerOptions& o, const gen::Profile& profile,
                                    const isa::NpuConfigSource& npu) {
  gen::GenOptions opt;
  opt.seed = o.job.seed;
  opt.length = o.job.length;
  opt.max_memory = util::default_memory_limit();  // a list asking for too long a program: an error, not an OOM kill
  opt.npu_source = npu.source;
  opt.npu_hash = util::fnv1a64(npu.text);
  opt.plant = parse_plant(o.job.plant);
  return gen::generate(isa::builtin_isa(), npu.config, profile, opt);
}

// What `npuforge sim` is given for a job (the --isolate-seeds path passes the same as flags).
sim::verify::Options sim_options(const Job& job) {
  sim::verify::Options v;
  v.rtl = job.rtl;
  v.plant = parse_plant(job.plant);
  v.max_errors = kMaxErrors;
  return v;
}

// In-process path: the program never leaves memory unless the seed fails (or --keep).
int simulate_here(const WorkerOptions& o, gen::GeneratedProgram& prog, SeedFigures figures, double gen_s) {
  using Clock = std::chrono::steady_clock;
  const auto t0 = Clock::now();
  const isa::Isa& isa = isa::builtin_isa();
  sim::verify::Verdict v;
  try {
    prog.bundle.name = std::filesystem::path(o.prefix).filename().string();
    const bundle::Program& program = prog.with_memmap();
    if (const std::string err = program.validate(); !err.empty()) throw Error(err);
    v = sim::verify::run(program, sim_options(o.job));
  } catch (const std::exception& e) {
    if (!o.keep) gen::write_outputs(isa, prog, o.prefix);
    write_result(o.prefix, "error", fmt::format("simulator: {}", e.what()), SeedKind{Cause::Simulator}, 0, figures,
                 gen_s, std::chrono::duration<double>(Clock::now() - t0).count());
    return 2;
  }
  const double sim_s = std::chrono::duration<double>(Clock::now() - t0).count();
  if (!v.pass || o.keep) {  // what `npuforge sim --json` leaves on the --isolate-seeds path
    write_text(o.prefix + ".sim.log", sim::verify::report(v));
    write_text(o.prefix + ".sim.json", sim::verify::to_json(v));
  }
  if (!v.pass && !o.keep) gen::write_outputs(isa, prog, o.prefix);  // a failing seed keeps its files
  return write_verdict(o.prefix, v, figures, gen_s, sim_s);
}

}  // namespace

int run_worker(const WorkerOptions& o) {
  using Clock = std::chrono::steady_clock;
  const auto t0 = Clock::now();
  const isa::Isa& isa = isa::builtin_isa();
  gen::GeneratedProgram prog;
  try {
    const SeedInputs in = load_inputs(o);
    prog = generate_seed(o, in.profile, in.npu);
    if (!o.in_process || o.keep) gen::write_outputs(isa, prog, o.prefix);
    const Coverage cov = sample(isa, prog, *prog.with_memmap().memmap, in.profile.oom);
    write_text(o.coverage_path.empty() ? o.prefix + ".cov.json" : o.coverage_path, cov.to_json());
  } catch (const std::exception& e) {
    write_result(o.prefix, "error", fmt::format("generate: {}", e.what()), SeedKind{Cause::Generate}, 0, SeedFigures{},
                 std::chrono::duration<double>(Clock::now() - t0).count(), 0);
    return 2;
  }
  if (o.plant_kill != 0 && o.plant_kill == o.job.seed) ::raise(SIGKILL);  // test hook: a worker dies mid-seed
  while (o.plant_hang != 0 && o.plant_hang == o.job.seed) ::pause();       // test hook: a worker hangs
  const double gen_s = std::chrono::duration<double>(Clock::now() - t0).count();
  SeedFigures figures{prog.bundle.instrs.size(), prog.summary.buffers, prog.summary.peak_sram,
                      prog.bundle.config.sram_bytes.value, 0};
  if (!prog.allocator_check.empty()) {  // the allocator's own consistency check failed
    if (o.in_process && !o.keep) gen::write_outputs(isa, prog, o.prefix);  // a failing seed keeps its files
    write_result(o.prefix, "fail", "[allocator/invariant] " + prog.allocator_check, SeedKind{Cause::Allocator}, 1,
                 figures, gen_s, 0);
    return 1;
  }
  if (o.in_process) return simulate_here(o, prog, figures, gen_s);
  std::vector<std::string> argv{o.exe, "sim", o.prefix + ".bin", "--memmap", o.prefix + ".memmap.yaml",
                                "--ddr", o.prefix + ".ddr.bin", "--max-errors", std::to_string(kMaxErrors)};
  if (!o.job.npu.empty()) argv.insert(argv.end(), {"--npu", o.job.npu});
  if (o.job.rtl) argv.push_back("--rtl");
  if (!o.job.plant.empty()) argv.insert(argv.end(), {"--plant", o.job.plant});
  const std::string log = o.prefix + ".sim.log";
  const std::string verdict_path = o.prefix + ".sim.json";
  argv.insert(argv.end(), {"--json", verdict_path});
  std::filesystem::remove(verdict_path);
  const ProcResult r = run_process(argv, log, log);
  // The simulator's verdict; absent when it crashed or refused its input.
  if ((r.exit_code == 0 || r.exit_code == 1) && std::filesystem::exists(verdict_path)) {
    const auto v = sim::verify::parse_json(util::read_file(verdict_path, "simulator verdict"), verdict_path);
    return write_verdict(o.prefix, v, figures, gen_s, r.seconds);
  }
  const std::string out = read_text(log);
  std::string tail = out.substr(out.size() > 300 ? out.size() - 300 : 0);
  write_result(o.prefix, "error", fmt::format("simulator exit {} signal {}: {}", r.exit_code, r.signal, tail),
               SeedKind{r.signal != 0 ? Cause::SimulatorCrash : Cause::Simulator}, 0, figures, gen_s, r.seconds);
  return 2;
}

}  // namespace npuforge::regress
