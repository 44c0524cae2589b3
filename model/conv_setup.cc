#include "model/conv_setup.h"

#include <fmt/core.h>

namespace npuforge::model {
namespace {

int64_t read_group(const Node& node) {
  const int64_t group = node.attr_int("group", 1);
  if (group < 1) node.fail(fmt::format("group {} must be >= 1", group));
  return group;
}

std::vector<int64_t> output_shape_attr(const Node& node) { return node.attr_ints("output_shape", std::vector<int64_t>{}); }
std::vector<int64_t> output_padding_attr(const Node& node) {
  return node.attr_ints("output_padding", std::vector<int64_t>{});
}

WindowGeometry geometry_for(const Node& node, const WindowAttrs& attrs, const Shape& in_spatial, ConvKind kind) {
  if (kind == ConvKind::kForward) return forward_geometry(node, attrs, in_spatial);
  return transpose_geometry(node, attrs, in_spatial, output_padding_attr(node), output_shape_attr(node));
}

}  // namespace

void require_dtype(const Node& node, size_t i, DType actual, std::initializer_list<DType> allowed) {
  std::string names;
  for (DType t : allowed) {
    if (t == actual) return;
    names += names.empty() ? "" : " or ";
    names += dtype_name(t);
  }
  node.fail(fmt::format("input {} has type {}, expected {}", i, dtype_name(actual), names));
}

ConvProblem conv_problem(const Node& node, const Shape& x, const Shape& w, ConvKind kind) {
  if (x.size() < 3 || x.size() > 5)
    node.fail(fmt::format("input shape {} is not N x C x spatial with 1 to 3 spatial axes", shape_str(x)));
  if (w.size() != x.size())
    node.fail(fmt::format("weight shape {} does not have the rank of the input {}", shape_str(w), shape_str(x)));
  ConvProblem p;
  p.batch = x[0];
  p.in_channels = x[1];
  p.groups = read_group(node);
  if (p.in_channels % p.groups != 0)
    node.fail(fmt::format("{} input channels are not divisible by group {}", p.in_channels, p.groups));
  if (kind == ConvKind::kForward) {
    p.out_channels = w[0];
    if (w[1] * p.groups != p.in_channels)
      node.fail(fmt::format("weight shape {} expects {} input channels per group, the input has {} in {} groups",
                            shape_str(w), w[1], p.in_channels, p.groups));
    if (p.out_channels % p.groups != 0)
      node.fail(fmt::format("{} output channels are not divisible by group {}", p.out_channels, p.groups));
  } else {
    if (w[0] != p.in_channels)
      node.fail(fmt::format("weight shape {} expects {} input channels, the input has {}", shape_str(w), w[0],
                            p.in_channels));
    p.out_channels = w[1] * p.groups;
  }
  const std::vector<int64_t> kernel(w.begin() + 2, w.end());
  const WindowAttrs attrs = read_window_attrs(node, x.size() - 2, kernel, false);
  p.geometry = geometry_for(node, attrs, Shape(x.begin() + 2, x.end()), kind);
  return p;
}

Shape conv_output_shape(const ConvProblem& p) {
  Shape s{p.batch, p.out_channels};
  for (const AxisGeometry& a : p.geometry.axes) s.push_back(a.out);
  return s;
}

ValueInfo conv_output_info(const InferContext& ctx, size_t w_input, DType dtype, ConvKind kind) {
  const Node& node = ctx.node;
  const ValueInfo& x = ctx.input(0);
  const ValueInfo& w = ctx.input(w_input);
  ValueInfo out;
  out.dtype = dtype;
  if (!x.has_shape && !w.has_shape) return out;
  const size_t rank = x.has_shape ? x.shape.size() : w.shape.size();
  if (x.has_shape && w.has_shape && x.shape_known() && w.shape_known()) {
    return known(dtype, conv_output_shape(conv_problem(node, x.shape, w.shape, kind)));
  }
  // Partly unknown: derive what the known dimensions allow.
  if (rank < 3 || rank > 5) node.fail(fmt::format("input rank {} is not 3 to 5", rank));
  const int64_t group = node.attr_int("group", 1);
  Shape s(rank, kUnknownDim);
  if (x.has_shape) s[0] = x.shape[0];
  if (w.has_shape && w.shape.size() == rank) {
    if (kind == ConvKind::kForward) s[1] = w.shape[0];
    else if (w.shape[1] != kUnknownDim) s[1] = w.shape[1] * group;
  }
  std::optional<std::vector<int64_t>> kernel;
  if (w.has_shape && w.shape.size() == rank) {
    kernel = std::vector<int64_t>(w.shape.begin() + 2, w.shape.end());
    for (int64_t k : *kernel)
      if (k == kUnknownDim) kernel.reset();
  }
  if (kernel || node.has_attr("kernel_shape")) {
    const WindowAttrs attrs = read_window_attrs(node, rank - 2, kernel, false);
    const Shape in_spatial = x.has_shape ? Shape(x.shape.begin() + 2, x.shape.end()) : Shape(rank - 2, kUnknownDim);
    const Shape spatial = geometry_for(node, attrs, in_spatial, kind).out_shape();
    std::copy(spatial.begin(), spatial.end(), s.begin() + 2);
  }
  out.has_shape = true;
  out.shape = s;
  return out;
}

}  // namespace npuforge::model
