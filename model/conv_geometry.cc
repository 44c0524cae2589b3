#include "model/conv_geometry.h"

#include <fmt/core.h>
#include <fmt/ranges.h>

namespace npuforge::model {
namespace {

std::vector<int64_t> ints_of_rank(const Node& node, std::string_view name, size_t count, int64_t fallback,
                                  int64_t minimum) {
  std::vector<int64_t> v = node.attr_ints(name, std::vector<int64_t>(count, fallback));
  if (v.empty()) v.assign(count, fallback);  // some exporters write an empty list for "default"
  if (v.size() != count)
    node.fail(fmt::format("attribute '{}' has {} values, expected {} (one per spatial axis{})", name, v.size(),
                          count, name == "pads" ? ", begin and end" : ""));
  for (int64_t x : v)
    if (x < minimum) node.fail(fmt::format("attribute '{}' = [{}] must be >= {}", name, fmt::join(v, ","), minimum));
  return v;
}

// Output extent of a forward window along one axis with explicit pads.
int64_t explicit_out(const Node& node, size_t axis, const AxisGeometry& g, bool ceil_mode) {
  const int64_t span = g.in + g.pad_begin + g.pad_end - g.effective_kernel();
  if (span < 0)
    node.fail(fmt::format("spatial axis {}: input extent {} (+ pads {},{}) is smaller than the kernel extent {}",
                          axis, g.in, g.pad_begin, g.pad_end, g.effective_kernel()));
  int64_t out = (ceil_mode ? (span + g.stride - 1) / g.stride : span / g.stride) + 1;
  // A last window starting in the end padding covers no input: dropped.
  if (ceil_mode && (out - 1) * g.stride >= g.in + g.pad_begin) --out;
  return out;
}

}  // namespace

std::optional<AutoPad> parse_auto_pad(std::string_view s) {
  if (s == "NOTSET" || s.empty()) return AutoPad::kNotSet;
  if (s == "SAME_UPPER") return AutoPad::kSameUpper;
  if (s == "SAME_LOWER") return AutoPad::kSameLower;
  if (s == "VALID") return AutoPad::kValid;
  return std::nullopt;
}

WindowAttrs read_window_attrs(const Node& node, size_t spatial_rank,
                              const std::optional<std::vector<int64_t>>& weight_kernel, bool with_ceil_mode) {
  if (spatial_rank == 0) node.fail("needs at least one spatial axis (input rank >= 3)");
  WindowAttrs a;
  if (node.has_attr("kernel_shape")) {
    a.kernel = node.attr_ints("kernel_shape");
    if (a.kernel.size() != spatial_rank)
      node.fail(fmt::format("kernel_shape has {} values, the input has {} spatial axes", a.kernel.size(),
                            spatial_rank));
    if (weight_kernel && *weight_kernel != a.kernel)
      node.fail(fmt::format("kernel_shape [{}] does not match the weights' kernel [{}]", fmt::join(a.kernel, ","),
                            fmt::join(*weight_kernel, ",")));
  } else if (weight_kernel) {
    a.kernel = *weight_kernel;
  } else {
    node.fail("missing required attribute 'kernel_shape'");
  }
  for (int64_t k : a.kernel)
    if (k < 1) node.fail(fmt::format("kernel_shape [{}] must be >= 1", fmt::join(a.kernel, ",")));
  a.strides = ints_of_rank(node, "strides", spatial_rank, 1, 1);
  a.dilations = ints_of_rank(node, "dilations", spatial_rank, 1, 1);
  const std::string auto_pad = node.attr_string("auto_pad", "NOTSET");
  const std::optional<AutoPad> parsed = parse_auto_pad(auto_pad);
  if (!parsed) node.fail(fmt::format("auto_pad '{}' is not NOTSET, SAME_UPPER, SAME_LOWER or VALID", auto_pad));
  a.auto_pad = *parsed;
  a.pads = ints_of_rank(node, "pads", 2 * spatial_rank, 0, 0);
  if (with_ceil_mode) a.ceil_mode = node.attr_int("ceil_mode", 0) != 0;
  return a;
}

Shape WindowGeometry::out_shape() const {
  Shape s;
  for (const AxisGeometry& g : axes) s.push_back(g.out);
  return s;
}

int64_t WindowGeometry::out_count() const { return element_count(out_shape()); }

int64_t WindowGeometry::kernel_count() const {
  int64_t n = 1;
  for (const AxisGeometry& g : axes) n *= g.kernel;
  return n;
}

WindowGeometry with_leading_unit_axes(const WindowGeometry& g, size_t rank) {
  WindowGeometry out;
  AxisGeometry unit;
  unit.in = unit.out = 1;
  for (size_t i = g.rank(); i < rank; ++i) out.axes.push_back(unit);
  out.axes.insert(out.axes.end(), g.axes.begin(), g.axes.end());
  return out;
}

WindowGeometry forward_geometry(const Node& node, const WindowAttrs& attrs, const Shape& in_spatial) {
  const size_t rank = attrs.spatial_rank();
  if (in_spatial.size() != rank)
    node.fail(fmt::format("input has {} spatial axes, the kernel {}", in_spatial.size(), rank));
  WindowGeometry geo;
  for (size_t i = 0; i < rank; ++i) {
    AxisGeometry g;
    g.in = in_spatial[i];
    g.kernel = attrs.kernel[i];
    g.stride = attrs.strides[i];
    g.dilation = attrs.dilations[i];
    if (g.in == kUnknownDim) {
      g.out = kUnknownDim;
      geo.axes.push_back(g);
      continue;
    }
    switch (attrs.auto_pad) {
      case AutoPad::kNotSet:
        g.pad_begin = attrs.pads[i];
        g.pad_end = attrs.pads[i + rank];
        g.out = explicit_out(node, i, g, attrs.ceil_mode);
        break;
      case AutoPad::kValid:
        g.out = explicit_out(node, i, g, false);
        break;
      case AutoPad::kSameUpper:
      case AutoPad::kSameLower: {
        g.out = (g.in + g.stride - 1) / g.stride;
        // Not clamped at 0 and split with C++ division, as onnxruntime does: a kernel
        // smaller than the stride gives a negative total and a window start shifted in.
        const int64_t total = (g.out - 1) * g.stride + g.effective_kernel() - g.in;
        g.pad_begin = attrs.auto_pad == AutoPad::kSameUpper ? total / 2 : (total + 1) / 2;
        g.pad_end = total - g.pad_begin;
        if (g.out < 1) node.fail(fmt::format("spatial axis {}: empty input", i));
        break;
      }
    }
    geo.axes.push_back(g);
  }
  return geo;
}

WindowGeometry transpose_geometry(const Node& node, const WindowAttrs& attrs, const Shape& in_spatial,
                                  const std::vector<int64_t>& output_padding,
                                  const std::vector<int64_t>& output_shape) {
  const size_t rank = attrs.spatial_rank();
  if (in_spatial.size() != rank)
    node.fail(fmt::format("input has {} spatial axes, the kernel {}", in_spatial.size(), rank));
  std::vector<int64_t> adj = output_padding.empty() ? std::vector<int64_t>(rank, 0) : output_padding;
  if (adj.size() != rank)
    node.fail(fmt::format("output_padding has {} values, expected {}", adj.size(), rank));
  std::vector<int64_t> explicit_out;
  if (!output_shape.empty()) {
    if (output_shape.size() == rank) explicit_out = output_shape;
    else if (output_shape.size() == rank + 2) explicit_out.assign(output_shape.begin() + 2, output_shape.end());
    else node.fail(fmt::format("output_shape has {} values, expected {}", output_shape.size(), rank));
  }
  WindowGeometry geo;
  for (size_t i = 0; i < rank; ++i) {
    AxisGeometry g;
    g.in = in_spatial[i];
    g.kernel = attrs.kernel[i];
    g.stride = attrs.strides[i];
    g.dilation = attrs.dilations[i];
    if (adj[i] < 0 || (adj[i] >= g.stride && adj[i] >= g.dilation))
      node.fail(fmt::format("output_padding {} on axis {} must be >= 0 and below the stride or the dilation",
                            adj[i], i));
    if (g.in == kUnknownDim) {
      g.out = explicit_out.empty() ? kUnknownDim : explicit_out[i];
      geo.axes.push_back(g);
      continue;
    }
    const int64_t full = (g.in - 1) * g.stride + adj[i] + g.effective_kernel();
    auto split = [&](int64_t total) {
      total = std::max<int64_t>(total, 0);
      g.pad_begin = attrs.auto_pad == AutoPad::kSameUpper ? total / 2 : total - total / 2;
      g.pad_end = total - g.pad_begin;
    };
    if (!explicit_out.empty()) {
      g.out = explicit_out[i];
      split(full - g.out);
      g.pad_end = full - g.out - g.pad_begin;  // negative: output cells no input reaches
    } else if (attrs.auto_pad == AutoPad::kSameUpper || attrs.auto_pad == AutoPad::kSameLower) {
      split(full - g.in * g.stride);
      g.out = full - g.pad_begin - g.pad_end;
    } else {
      if (attrs.auto_pad == AutoPad::kNotSet) {
        g.pad_begin = attrs.pads[i];
        g.pad_end = attrs.pads[i + rank];
      }
      g.out = full - g.pad_begin - g.pad_end;
    }
    if (g.out < 1) node.fail(fmt::format("spatial axis {}: output extent {} is below 1", i, g.out));
    geo.axes.push_back(g);
  }
  return geo;
}

}  // namespace npuforge::model
