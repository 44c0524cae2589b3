#include "compiler/npu_limits.h"

#include <algorithm>
#include <initializer_list>
#include <limits>
#include <string_view>
#include <utility>

#include <fmt/format.h>

#include "compiler/graph_edit.h"
#include "model/conv_geometry.h"

namespace npuforge::compiler {
namespace {

// The smallest maximum over `fields` ({instruction, field} pairs) of `isa`.
int64_t least_max(const isa::Isa& isa, std::initializer_list<std::pair<std::string_view, std::string_view>> fields) {
  int64_t least = std::numeric_limits<int64_t>::max();
  for (const auto& [mnemonic, field] : fields) least = std::min(least, isa.max_value(mnemonic, field));
  return least;
}

}  // namespace

NpuLimits::NpuLimits(const isa::Isa& isa)
    : max_kernel(least_max(isa, {{"im2col", "kh"}, {"im2col", "kw"}})),
      max_stride(least_max(isa, {{"im2col", "stride_h"}, {"im2col", "stride_w"}, {"pool", "stride_h"},
                                 {"pool", "stride_w"}})),
      max_dilation(least_max(isa, {{"im2col", "dil_h"}, {"im2col", "dil_w"}})),
      max_pad(least_max(isa, {{"im2col", "pad_top"}, {"im2col", "pad_left"}, {"im2col", "pad_bottom"},
                              {"im2col", "pad_right"}, {"pool", "pad_top"}, {"pool", "pad_left"},
                              {"pool", "pad_bottom"}, {"pool", "pad_right"}})),
      max_pool_window(least_max(isa, {{"pool", "window_h"}, {"pool", "window_w"}})),
      max_gemm_dim(least_max(isa, {{"gemm", "n"}, {"gemm", "k"}})),
      max_im2col_channels(isa.max_value("im2col", "c")),
      max_image_width(least_max(isa, {{"im2col", "w"}, {"pool", "w"}})) {}

NpuLimits NpuLimits::unbounded() {
  NpuLimits l;
  for (int64_t* v : {&l.max_kernel, &l.max_stride, &l.max_dilation, &l.max_pad, &l.max_pool_window, &l.max_gemm_dim,
                     &l.max_im2col_channels, &l.max_image_width})
    *v = std::numeric_limits<int32_t>::max();
  return l;
}

std::optional<Window> npu_window(const model::Graph& graph, const model::Node& node, const NpuLimits& limits,
                                 std::string* why) {
  const model::Shape& x = value_shape(graph, node.input(0));
  if (x.size() != 4) {
    *why = "not a 2-D window";
    return std::nullopt;
  }
  const bool conv = node.op_type == "Conv";
  std::optional<std::vector<int64_t>> wk;
  if (conv) {
    const model::Shape& w = value_shape(graph, node.input(1));
    wk = std::vector<int64_t>(w.begin() + 2, w.end());
  }
  const model::WindowAttrs attrs = model::read_window_attrs(node, 2, wk, !conv);
  const model::WindowGeometry geo = model::forward_geometry(node, attrs, {x[2], x[3]});
  const bool avg = node.op_type == "AveragePool";
  const bool count_pad = avg && node.attr_int("count_include_pad", 0) != 0;
  Window w;
  int64_t* kernel[] = {&w.kernel_h, &w.kernel_w};
  int64_t* stride[] = {&w.stride_h, &w.stride_w};
  int64_t* dil[] = {&w.dilation_h, &w.dilation_w};
  int64_t* begin[] = {&w.pad_top, &w.pad_left};
  int64_t* end[] = {&w.pad_bottom, &w.pad_right};
  const int64_t max_kernel = conv ? limits.max_kernel : limits.max_pool_window;
  for (size_t a = 0; a < 2; ++a) {
    const model::AxisGeometry& g = geo.axes[a];
    *kernel[a] = g.kernel;
    *stride[a] = g.stride;
    *dil[a] = g.dilation;
    *begin[a] = g.pad_begin;
    // The pad the window formula needs for ONNX's output size (ceil_mode adds a partial window).
    const int64_t need = (g.out - 1) * g.stride + g.effective_kernel() - g.in - g.pad_begin;
    *end[a] = std::max<int64_t>(std::max<int64_t>(g.pad_end, need), 0);
    if (count_pad && need > g.pad_end) {
      *why = "AveragePool with count_include_pad and a ceil_mode window past the pads";
      return std::nullopt;
    }
    if (g.pad_begin < 0) {
      *why = "a negative pad (SAME with a kernel smaller than the stride)";
      return std::nullopt;
    }
    if ((g.in + *begin[a] + *end[a] - g.effective_kernel()) / g.stride + 1 != g.out) {
      *why = "window geometry the NPU's output size formula does not reproduce";
      return std::nullopt;
    }
    const char* axis = a == 0 ? "h" : "w";
    if (g.kernel > max_kernel) {
      *why = fmt::format("kernel_{} {} above {}", axis, g.kernel, max_kernel);
      return std::nullopt;
    }
    if (g.stride > limits.max_stride) {
      *why = fmt::format("stride_{} {} above {}", axis, g.stride, limits.max_stride);
      return std::nullopt;
    }
    if (g.dilation > (conv ? limits.max_dilation : 1)) {
      *why = fmt::format("dilation_{} {} above {}", axis, g.dilation, conv ? limits.max_dilation : 1);
      return std::nullopt;
    }
    if (*begin[a] > limits.max_pad || *end[a] > limits.max_pad) {
      *why = fmt::format("pad on {} ({}, {}) above {}", axis, *begin[a], *end[a], limits.max_pad);
      return std::nullopt;
    }
  }
  return w;
}

}  // namespace npuforge::compiler
