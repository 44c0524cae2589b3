// npuforge npy: seeded random input files for a model, so that `run-model` and `compile
// --calibrate` can be tried without writing any Python. Shapes and dtypes come from the model.
#include <filesystem>
#include <optional>

#include <fmt/core.h>

#include "model/bindings.h"
#include "model/load.h"
#include "model/npy.h"
#include "model/random_tensor.h"
#include "tools/command.h"
#include "tools/input_file.h"
#include "util/error.h"
#include "util/rng.h"

namespace npuforge::tools {
namespace {

using namespace npuforge::model;

struct NpyOptions {
  std::string model;
  std::vector<std::string> outputs, input_shapes;
  uint64_t seed = 1;
  std::optional<double> low, high;
};

int make_npy(const NpyOptions& o) {
  LoadOptions load;
  for (const std::string& text : o.input_shapes) {
    auto [name, shape] = parse_input_shape(text);
    if (!load.input_shapes.emplace(name, shape).second)
      throw Error(fmt::format("--input-shape: input '{}' is given twice", name));
  }
  const Graph graph = load_model(o.model, load);  // an open dimension is an error naming the input and the fix
  const auto files = bind_files(graph.inputs, o.outputs, "-o");
  for (const std::string& name : graph.inputs)
    if (!files.count(name))
      throw Error(fmt::format("npy: model input '{}' has no -o FILE.npy (give one per input, in order, or "
                              "{}=FILE.npy)", name, name));
  Rng rng(o.seed);
  for (const std::string& name : graph.inputs) {
    const ValueInfo& info = *graph.find_value(name);
    Tensor t(info.dtype, info.shape);
    RandomRange range = default_random_range(info.dtype);
    if (o.low) range.low = *o.low;
    if (o.high) range.high = *o.high;
    try {
      fill_random(t, rng, range);  // inputs drawn in the model's order from one stream
    } catch (const Error& e) {
      throw Error(fmt::format("input '{}' ({}): --low/--high: {}", name, dtype_name(info.dtype), e.what()));
    }
    const auto file = files.find(name);
    write_npy(file->second, t);
    fmt::print("{}: {} {} in [{}, {}{} -> {}\n", name, dtype_name(info.dtype), shape_str(info.shape), range.low,
               range.high, info.dtype == DType::kFloat32 ? ")" : "]", file->second.string());
  }
  return kExitOk;
}

}  // namespace

void add_npy_command(CLI::App& app, Runner& run) {
  auto opts = std::make_shared<NpyOptions>();
  auto* sub = app.add_subcommand("npy", "Write seeded random .npy inputs for a model (shapes and dtypes from the "
                                        "model): same seed, same bytes");
  sub->add_option("model", opts->model, "Model file (.onnx, .yaml)")->required()->check(input_file("model"));
  sub->add_option("-o,--output", opts->outputs, "Output .npy, one per model input in order, or NAME=FILE.npy (repeatable)");
  sub->add_option("--seed", opts->seed, "random seed (default 1)");
  sub->add_option("--input-shape", opts->input_shapes, "Fix an input's open dimensions: NAME=1x3x224x224 (repeatable)");
  sub->add_option("--low", opts->low, "lowest value (default -1 for float32, the dtype's lowest for 8-bit and bool, "
                                      "-1000 for int32/int64)");
  sub->add_option("--high", opts->high, "float32: values below it (default 1); integers: the highest value (default "
                                        "the dtype's highest, 1000 for int32/int64)");
  bind_runner(sub, opts, run, &make_npy);
}

}  // namespace npuforge::tools
