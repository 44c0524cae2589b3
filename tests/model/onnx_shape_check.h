#pragma once
// Cross-check of npuforge's shape inference with ONNX's own C++ implementation (libonnx):
// every value both infer with known dimensions must agree in dtype and shape.
#include <string>
#include <vector>

#include <fmt/core.h>
#include <onnx/shape_inference/implementation.h>

#include "model/ir.h"
#include "onnx_builder.h"

namespace npuforge::model::testing {

struct ShapeCheck {
  int compared = 0;                   // values both sides know
  std::vector<std::string> mismatches;
  std::string onnx_error;             // ONNX's inference threw (not our problem; reported)
};

// `model` is the file's ModelProto; `graph` is npuforge's inferred graph of it (input
// shapes as npuforge fixed them are written into the ModelProto before ONNX infers).
inline ShapeCheck compare_with_onnx_inference(onnx::ModelProto model, const Graph& graph) {
  ShapeCheck r;
  auto* g = model.mutable_graph();
  for (auto& in : *g->mutable_input()) {
    const ValueInfo* info = graph.find_value(in.name());
    if (!info || !info->shape_known() || graph.is_constant(in.name())) continue;
    auto* shape = in.mutable_type()->mutable_tensor_type()->mutable_shape();
    shape->clear_dim();
    for (int64_t d : info->shape) shape->add_dim()->set_dim_value(d);
  }
  g->clear_value_info();
  try {
    onnx::ShapeInferenceOptions options(false, 0, true);
    onnx::shape_inference::InferShapes(model, onnx::OpSchemaRegistry::Instance(), options);
  } catch (const std::exception& e) {
    r.onnx_error = e.what();
    return r;
  }
  const auto compare = [&](const onnx::ValueInfoProto& v) {
    const ValueInfo* ours = graph.find_value(v.name());
    if (!ours || !ours->has_shape || !v.type().has_tensor_type()) return;
    const auto& tt = v.type().tensor_type();
    if (!tt.has_shape()) return;
    Shape theirs;
    for (const auto& d : tt.shape().dim()) {
      if (!d.has_dim_value()) return;  // ONNX did not know it: nothing to compare
      theirs.push_back(d.dim_value());
    }
    ++r.compared;
    if (theirs != ours->shape || onnx_type(ours->dtype) != tt.elem_type())
      r.mismatches.push_back(fmt::format("'{}': npuforge {} {}, ONNX type {} shape {}", v.name(),
                                         dtype_name(ours->dtype), shape_str(ours->shape), tt.elem_type(),
                                         shape_str(theirs)));
  };
  for (const auto& v : g->value_info()) compare(v);
  for (const auto& v : g->output()) compare(v);
  return r;
}

}  // namespace npuforge::model::testing
