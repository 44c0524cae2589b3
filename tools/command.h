#pragma once
// Each subcommand lives in its own cmd_<name>.cc and registers itself on the CLI11 app.
// Exit codes for every subcommand: 0 success, 1 a finding or bad input, 2 a usage error.
#include <functional>
#include <memory>

#include <CLI/CLI.hpp>

namespace npuforge::tools {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFinding = 1;
inline constexpr int kExitUsage = 2;

// Set by the chosen subcommand's callback; main() runs it after parsing.
using Runner = std::function<int()>;

// Registers `sub` so that, when chosen, `run` becomes `body` bound to its parsed options.
// Options live in a shared_ptr owned by the callback so that they outlive parsing.
template <typename Options>
void bind_runner(CLI::App* sub, std::shared_ptr<Options> opts, Runner& run,
                 int (*body)(const Options&)) {
  sub->callback([opts, &run, body] { run = [opts, body] { return body(*opts); }; });
}

void add_isa_command(CLI::App& app, Runner& run);
void add_asm_command(CLI::App& app, Runner& run);
void add_disasm_command(CLI::App& app, Runner& run);
void add_demo_command(CLI::App& app, Runner& run);
void add_sim_command(CLI::App& app, Runner& run);
void add_gen_command(CLI::App& app, Runner& run);
void add_plan_command(CLI::App& app, Runner& run);
void add_check_plan_command(CLI::App& app, Runner& run);
void add_regress_command(CLI::App& app, Runner& run);
void add_shrink_command(CLI::App& app, Runner& run);
void add_cover_command(CLI::App& app, Runner& run);
void add_merge_command(CLI::App& app, Runner& run);
void add_run_model_command(CLI::App& app, Runner& run);
void add_model_info_command(CLI::App& app, Runner& run);
void add_npy_command(CLI::App& app, Runner& run);
void add_compile_command(CLI::App& app, Runner& run);
void add_plants_command(CLI::App& app, Runner& run);  // plants, kill-rate

}  // namespace npuforge::tools
