#pragma once
// The entry points of the libFuzzer targets, shared by the fuzz executables (fuzz_main.cc)
// and by the ctest that replays tests/data/fuzz_regressions/<target>/* in every build, so a
// crash found once stays fixed without the clang fuzz build.
//
// Each entry feeds the bytes to a parser through the same functions the CLI uses, then to
// what the CLI does next with the result (check, plan, generate, infer, re-encode). Bad input
// must end in npuforge::Error; run_input swallows that. Anything else (another exception, a
// broken round trip reported as InvariantBroken, a sanitizer report) is a finding.
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string_view>

namespace npuforge::fuzz {

// A property that must hold for every accepted input (e.g. disassemble then assemble gives
// the same instruction) did not. Deliberately not an npuforge::Error.
struct InvariantBroken : std::logic_error {
  using std::logic_error::logic_error;
};

struct Target {
  std::string_view name;  // also the folder name of its corpus and regression inputs
  void (*run)(std::span<const uint8_t> data);
};

std::span<const Target> targets();
const Target* find_target(std::string_view name);

// Runs one input; returns true when the input was accepted, false when it was rejected with
// an npuforge::Error. Every other outcome propagates.
bool run_input(const Target& target, std::span<const uint8_t> data);

// Entries, one per file format (defined in targets_*.cc).
void fuzz_asm(std::span<const uint8_t> data);
void fuzz_disasm(std::span<const uint8_t> data);
void fuzz_isa_yaml(std::span<const uint8_t> data);
void fuzz_npu_config(std::span<const uint8_t> data);
void fuzz_gen_profile(std::span<const uint8_t> data);
void fuzz_plan_csv(std::span<const uint8_t> data);
void fuzz_plan_yaml(std::span<const uint8_t> data);
void fuzz_memmap(std::span<const uint8_t> data);
void fuzz_regress_list(std::span<const uint8_t> data);
void fuzz_npy(std::span<const uint8_t> data);
void fuzz_onnx(std::span<const uint8_t> data);
void fuzz_onnx_tensor(std::span<const uint8_t> data);
void fuzz_model_yaml(std::span<const uint8_t> data);

}  // namespace npuforge::fuzz
