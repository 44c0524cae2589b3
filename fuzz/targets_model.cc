// Entries for the model formats: .npy tensors, ONNX models and tensors, YAML model graphs.
#include <filesystem>
#include <string_view>

#include "fuzz/fuzz_targets.h"
#include "model/load.h"
#include "model/npy.h"
#include "model/onnx_import.h"
#include "model/yaml_import.h"

namespace npuforge::fuzz {

void fuzz_npy(std::span<const uint8_t> data) {
  const model::Tensor t = model::parse_npy(data, "fuzz.npy");
  if (!(model::parse_npy(model::encode_npy(t), "<encoded>") == t))
    throw InvariantBroken(".npy does not read back as written");
}

// `npuforge model-info` / `run-model`: import, then shape inference and constant folding.
void fuzz_onnx(std::span<const uint8_t> data) {
  model::Graph graph = model::import_onnx_bytes(data, "fuzz.onnx");
  model::prepare_graph(graph);
}

void fuzz_onnx_tensor(std::span<const uint8_t> data) {
  model::parse_tensor_pb(data, "fuzz.pb");
}

void fuzz_model_yaml(std::span<const uint8_t> data) {
  const std::string_view text(reinterpret_cast<const char*>(data.data()), data.size());
  // `file:` constants resolve against a folder that holds nothing.
  model::Graph graph = model::import_yaml_string(text, "fuzz_model.yaml", "/nonexistent-npuforge-fuzz");
  model::prepare_graph(graph);
}

}  // namespace npuforge::fuzz
