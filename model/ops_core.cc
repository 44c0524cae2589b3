// Ops the model core itself needs, whatever the op families provide: Identity stays in a
// graph only where the ONNX importer cannot remove it (a graph input passed straight to a
// graph output). Registered after the families, so a family's definition takes precedence.
#include "model/op_families.h"

namespace npuforge::model {
namespace {

InferResult infer_identity(const InferContext& c) { return {.outputs = {c.input(0)}, .values = {}}; }

std::vector<Tensor> run_identity(const RunContext& c) { return {c.input(0)}; }

}  // namespace

void register_core_ops(OpRegistry& r) {
  r.add({.domain = "", .op_type = "Identity", .min_opset = 1, .max_opset = 17, .infer = infer_identity,
         .run = run_identity});
}

}  // namespace npuforge::model
