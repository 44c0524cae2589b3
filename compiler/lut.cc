#include "compiler/lut.h"

#include <fmt/format.h>

#include "compiler/convert.h"
#include "model/infer.h"
#include "model/interpreter.h"
#include "util/error.h"

namespace npuforge::compiler {

LutTable region_table(const model::Graph& graph, const std::vector<size_t>& nodes, const std::string& input,
                      const std::string& output, float in_scale, float out_scale) {
  model::Graph sub;
  sub.source = graph.source;
  sub.name = graph.name + "~lut";
  sub.opset = graph.opset;
  sub.inputs = {input};
  sub.outputs = {output};
  const model::ValueInfo* info = graph.find_value(input);
  const size_t rank = info && info->has_shape ? info->shape.size() : 1;
  model::Shape shape(std::max<size_t>(rank, 1), 1);
  shape.back() = 256;
  model::ValueInfo in_info;
  in_info.dtype = model::DType::kFloat32;
  in_info.has_shape = true;
  in_info.shape = shape;
  sub.values[input] = in_info;
  for (size_t i : nodes) {
    const model::Node& n = graph.nodes.at(i);
    for (const std::string& in : n.inputs)
      if (const model::Tensor* c = graph.find_constant(in)) sub.constants[in] = *c;
    sub.nodes.push_back(n);
  }
  model::infer_shapes(sub);
  model::Tensor x(model::DType::kFloat32, shape);
  for (int q = -128; q < 128; ++q) x.values<float>()[q + 128] = static_cast<float>(q) * in_scale;
  model::TensorMap in;
  in[input] = std::move(x);
  const model::TensorMap out = model::run_graph(sub, std::move(in));
  const model::Tensor& y = out.at(output);
  if (y.numel() != 256 || y.dtype() != model::DType::kFloat32)
    throw Error(fmt::format("{}: the element-wise region ending in '{}' did not give 256 float values", graph.source, output));
  LutTable t{};
  for (int i = 0; i < 256; ++i) t[static_cast<size_t>(i)] = quantize_value(y.values<float>()[i], out_scale);
  return t;
}

LutTable rescale_table(float in_scale, float out_scale) {
  LutTable t{};
  for (int q = -128; q < 128; ++q)
    t[static_cast<size_t>(q + 128)] = quantize_value(static_cast<float>(q) * in_scale, out_scale);
  return t;
}

}  // namespace npuforge::compiler
