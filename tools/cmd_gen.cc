// `npuforge gen`: a constrained-random program from a profile, an NPU config and a seed;
// `--check` runs the static checks on it (program, memory map, map against the NPU).
#include <memory>

#include <fmt/core.h>

#include "util/plant.h"
#include "gen/generator.h"
#include "gen/output.h"
#include "gen/profile.h"
#include "gen/program_check.h"
#include "planner/plan_check.h"
#include "util/sysinfo.h"
#include "util/yaml_util.h"
#include "tools/command.h"
#include "tools/input_file.h"
#include "tools/io_util.h"

namespace npuforge::tools {
namespace {

struct GenOptions {
  std::string profile;
  std::string npu;  // empty: the built-in configs/npu/default.yaml
  uint64_t seed = 1;
  int64_t length = 0;
  std::string output;
  bool check = false;
  std::string plant;  // a planted allocator/generator bug by name (npuforge plants)
  uint64_t max_memory = util::default_memory_limit().value;
};

// The static checks of a generated program; prints the first findings of each and their
// count. True when clean.
bool check_generated(gen::GeneratedProgram& g, const std::string& name) {
  constexpr size_t kShown = 20;
  g.bundle.name = name;
  const bundle::Program& program = g.with_memmap();
  const bundle::MemMap& map = *program.memmap;
  bool clean = true;
  // The consistency checks `npuforge sim` runs on its inputs.
  if (const std::string err = program.validate(); !err.empty()) {
    fmt::print("check: memory map against the NPU config: {}\n", err);
    clean = false;
  }
  if (const auto plan = planner::check_memmap(map, {.max_findings = kShown}); !plan.ok()) {
    fmt::print("check: memory map: {}", plan.report());
    clean = false;
  }
  if (const auto prog =
          gen::check_program(program.instrs, map, program.config.ddr_bytes.value, {.max_findings = kShown});
      !prog.ok()) {
    fmt::print("check: program: {}", prog.report());
    clean = false;
  }
  if (!g.allocator_check.empty()) {
    fmt::print("check: allocator: {}\n", g.allocator_check);
    clean = false;
  }
  if (clean)
    fmt::print("check: ok ({} instructions, {} buffers: memory map, program and NPU config agree)\n",
               program.instrs.size(), map.buffers.size());
  return clean;
}

int run_gen(const GenOptions& o) {
  const gen::Profile profile = gen::Profile::load_file(o.profile);
  const isa::NpuConfigSource npu = isa::load_npu_config(o.npu);
  gen::GenOptions g;
  g.seed = o.seed;
  g.length = o.length;
  g.npu_source = npu.source;
  g.npu_hash = util::fnv1a64(npu.text);
  g.max_memory = Bytes{o.max_memory};
  g.plant = parse_plant(o.plant);
  // The files are created first: their assembly is written while the program is generated.
  gen::OutputFiles files(isa::builtin_isa(), o.output);
  g.stream = &files.stream();
  gen::GeneratedProgram program = gen::generate(isa::builtin_isa(), npu.config, profile, g);
  files.finish(program);
  fmt::print("{}\n", gen::summary_line(program));
  if (o.check && !check_generated(program, o.output)) return kExitFinding;
  return kExitOk;
}

}  // namespace

void add_gen_command(CLI::App& app, Runner& run) {
  auto opts = std::make_shared<GenOptions>();
  auto* sub = app.add_subcommand(
      "gen", "Generate a constrained-random program: PREFIX.s .bin .hex .memmap.yaml .ddr.bin and a summary line");
  sub->add_option("--profile", opts->profile, "Generator profile (configs/gen/*.yaml)")
      ->required()
      ->transform(config_file("--profile", ConfigKind::kProfile));
  sub->add_option("--npu", opts->npu, "NPU config (default: the built-in configs/npu/default.yaml)")
      ->transform(config_file("--npu", ConfigKind::kNpu));
  sub->add_option("--seed", opts->seed, "Random seed")->required();
  sub->add_option("--length", opts->length, "Instructions, halt included (default: the profile's length)")
      ->check(CLI::Range(int64_t{1}, int64_t{100'000'000}));
  sub->add_option("--max-memory", opts->max_memory,
                  "Refuse, before starting, a program whose generation would need more memory than this "
                  "(bytes, or with a unit: 512MB, 4GB; 0: no limit)")
      ->transform(CLI::AsSizeValue(false))
      ->default_str(fmt::format("3/4 of physical memory, {} MiB here", util::default_memory_limit().value >> 20));
  sub->add_option("-o,--output", opts->output, "Output prefix")->required();
  sub->add_flag("--check", opts->check,
                "Also check the program statically (operands inside their buffers, tokens paired, no races), "
                "the memory map (overlaps, alignment, capacity) and the map against the NPU config; exit 1 on a finding");
  sub->add_option("--plant", opts->plant, "run with a planted allocator or generator bug (see `npuforge plants`)");
  bind_runner(sub, opts, run, &run_gen);
}

}  // namespace npuforge::tools
