#pragma once
// Shared by the run-model tests: compiling configs/models/small_convnet.yaml with the CLI and
// a seeded input for it.
#include <filesystem>
#include <string>

#include "../cli/cli_util.h"
#include "model/npy.h"
#include "util/rng.h"

namespace npuforge::run_testing {

using cli_testing::CliRun;
using cli_testing::run_cli;
using cli_testing::ScratchDir;

inline std::string small_convnet() { return std::string(NPUFORGE_SOURCE_DIR) + "/configs/models/small_convnet.yaml"; }

// `npuforge compile MODEL --samples 2 <extra> -o dir/out` (MODEL: small_convnet by default).
inline CliRun compile(const ScratchDir& dir, const std::string& out, const std::string& extra = "",
                      const std::string& model = small_convnet()) {
  return run_cli("compile " + model + " --samples 2 -q " + extra + " -o " + dir.path(out));
}

// x.npy: a seeded 1x3xSxS float input in [-1, 1].
inline std::string input(const ScratchDir& dir, uint64_t seed = 11, int64_t size = 32) {
  model::Tensor x(model::DType::kFloat32, {1, 3, size, size});
  Rng rng(seed);
  for (float& v : x.values<float>()) v = static_cast<float>(rng.next() % 2001) / 1000.0f - 1.0f;
  const std::string path = dir.path("x.npy");
  model::write_npy(path, x);
  return path;
}

}  // namespace npuforge::run_testing
