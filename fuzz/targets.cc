#include "fuzz/fuzz_targets.h"

#include <array>

#include "util/error.h"

namespace npuforge::fuzz {

std::span<const Target> targets() {
  static constexpr std::array kTargets = {
      Target{"asm", fuzz_asm},
      Target{"disasm", fuzz_disasm},
      Target{"isa_yaml", fuzz_isa_yaml},
      Target{"npu_config", fuzz_npu_config},
      Target{"gen_profile", fuzz_gen_profile},
      Target{"plan_csv", fuzz_plan_csv},
      Target{"plan_yaml", fuzz_plan_yaml},
      Target{"memmap", fuzz_memmap},
      Target{"regress_list", fuzz_regress_list},
      Target{"npy", fuzz_npy},
      Target{"onnx", fuzz_onnx},
      Target{"onnx_tensor", fuzz_onnx_tensor},
      Target{"model_yaml", fuzz_model_yaml},
  };
  return kTargets;
}

const Target* find_target(std::string_view name) {
  for (const Target& t : targets())
    if (t.name == name) return &t;
  return nullptr;
}

bool run_input(const Target& target, std::span<const uint8_t> data) {
  try {
    target.run(data);
    return true;
  } catch (const Error&) {
    return false;  // bad input, reported the way the CLI reports it
  }
}

}  // namespace npuforge::fuzz
