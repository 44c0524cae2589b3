// npuforge: generate NPU programs, simulate and check them, validate memory plans.
#include <cstdio>
#include <exception>

#include <fmt/core.h>

#include "util/error.h"
#include "util/suggest.h"
#include "tools/command.h"

// Sanitizer builds: SystemC runs its processes on coroutine stacks it frees when the simulation
// ends, and LeakSanitizer then takes a freed coroutine stack for the main thread's and crashes
// scanning it at exit ("Tracer caught signal 11"). Every path of this program returns from main,
// so no heap block is held only by a stack frame when the exit-time check runs: skip the stacks.
// (Environment LSAN_OPTIONS still override this; normal builds never call it.)
extern "C" const char* __lsan_default_options() { return "use_stacks=0"; }

namespace {

// CLI11 would say only "A subcommand is required": name the word and the subcommands it is close to.
int unknown_subcommand(const CLI::App& app, const std::string& word) {
  std::vector<std::string> names;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App* s) { return !s->get_group().empty(); }))
    names.push_back(sub->get_name());
  std::string hint = npuforge::util::did_you_mean(word, names);
  if (hint.empty()) {
    hint = "the subcommands are";
    for (size_t i = 0; i < names.size(); ++i) hint += fmt::format("{} {}", i ? "," : "", names[i]);
  }
  fmt::print(stderr, "npuforge: error: '{}' is not a subcommand; {} (npuforge --help describes each)\n", word, hint);
  return npuforge::tools::kExitUsage;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace npuforge::tools;
  CLI::App app{"npuforge: constrained-random NPU programs, simulation and memory-plan checks"};
  app.require_subcommand(1);
  Runner run;
  add_isa_command(app, run);
  add_asm_command(app, run);
  add_disasm_command(app, run);
  add_demo_command(app, run);
  add_sim_command(app, run);
  add_gen_command(app, run);
  add_plan_command(app, run);
  add_check_plan_command(app, run);
  add_regress_command(app, run);
  add_shrink_command(app, run);
  add_cover_command(app, run);
  add_merge_command(app, run);
  add_run_model_command(app, run);
  add_model_info_command(app, run);
  add_npy_command(app, run);
  add_compile_command(app, run);
  add_plants_command(app, run);
  if (argc > 1 && argv[1][0] != '-' &&
      app.get_subcommands([&](const CLI::App* s) { return s->check_name(argv[1]); }).empty())
    return unknown_subcommand(app, argv[1]);
  try {
    app.parse(argc, argv);
  } catch (const npuforge::Error& e) {  // an input file checked while parsing (tools/input_file.h)
    fmt::print(stderr, "npuforge: error: {}\n", e.what());
    return kExitFinding;
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return kExitUsage;
  }
  try {
    return run ? run() : kExitUsage;
  } catch (const npuforge::Error& e) {
    fmt::print(stderr, "npuforge: error: {}\n", e.what());
    return kExitFinding;
  } catch (const std::exception& e) {
    fmt::print(stderr, "npuforge: internal error: {}\n", e.what());
    return kExitFinding;
  }
}
