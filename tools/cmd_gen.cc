// `npuforge gen`: a constrained-random program from a profile, an NPU config and a seed.
#include <fmt/core.h>

#include "gen/generator.h"
#include "gen/output.h"
#include "gen/profile.h"
#include "util/yaml_util.h"
#include "tools/command.h"
#include "tools/io_util.h"

namespace npuforge::tools {
namespace {

struct GenOptions {
  std::string profile;
  std::string npu = std::string(NPUFORGE_SOURCE_DIR) + "/configs/npu/default.yaml";
  uint64_t seed = 1;
  int64_t length = 0;
  std::string output;
};

int run_gen(const GenOptions& o) {
  const gen::Profile profile = gen::Profile::load_file(o.profile);
  const std::string npu_text = read_text(o.npu);
  const isa::NpuConfig npu = isa::NpuConfig::load_string(npu_text, o.npu);
  gen::GenOptions g;
  g.seed = o.seed;
  g.length = o.length;
  g.npu_source = o.npu;
  g.npu_hash = util::fnv1a64(npu_text);
  const gen::GeneratedProgram program = gen::generate(isa::builtin_isa(), npu, profile, g);
  gen::write_outputs(isa::builtin_isa(), program, o.output);
  fmt::print("{}\n", gen::summary_line(program));
  return kExitOk;
}

}  // namespace

void add_gen_command(CLI::App& app, Runner& run) {
  auto opts = std::make_shared<GenOptions>();
  auto* sub = app.add_subcommand(
      "gen", "Generate a constrained-random program: PREFIX.s .bin .hex .memmap.yaml .ddr.bin and a summary line");
  sub->add_option("--profile", opts->profile, "Generator profile (configs/gen/*.yaml)")
      ->required()
      ->check(CLI::ExistingFile);
  sub->add_option("--npu", opts->npu, "NPU config (default configs/npu/default.yaml)")->check(CLI::ExistingFile);
  sub->add_option("--seed", opts->seed, "Random seed")->required();
  sub->add_option("--length", opts->length, "Instructions, halt included (default: the profile's length)")
      ->check(CLI::Range(int64_t{1}, int64_t{100'000'000}));
  sub->add_option("-o,--output", opts->output, "Output prefix")->required();
  bind_runner(sub, opts, run, &run_gen);
}

}  // namespace npuforge::tools
