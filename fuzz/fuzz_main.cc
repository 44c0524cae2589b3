// One libFuzzer executable per target; NPUFORGE_FUZZ_TARGET names it (fuzz/CMakeLists.txt).
#include <cstdlib>

#include "fuzz/fuzz_targets.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const npuforge::fuzz::Target* target = npuforge::fuzz::find_target(NPUFORGE_FUZZ_TARGET);
  if (target == nullptr) std::abort();
  npuforge::fuzz::run_input(*target, {data, size});
  return 0;
}
