#pragma once
// The sliding-window geometry that Conv, ConvTranspose, ConvInteger, QLinearConv and the
// pools share: kernel, strides, dilations, pads, auto_pad and ceil_mode as ONNX defines
// them, and the output size and effective pads they give for a concrete input. The
// interpreter and the model compiler (IM2COL tiling) both use it, so both agree on every
// edge case.
//
// Conventions, per spatial axis i (ONNX's): the effective kernel is (k - 1) * d + 1;
//   NOTSET   out = floor((in + pb + pe - eff) / s) + 1  (ceil with ceil_mode, see below)
//   VALID    pads 0, out = floor((in - eff) / s) + 1
//   SAME_*   out = ceil(in / s); total pad = max(0, (out - 1) * s + eff - in), split in two
//            halves with the odd element at the end (SAME_UPPER) or the beginning (SAME_LOWER)
// With ceil_mode a last window that would start in the end padding is dropped (ONNX since
// opset 19 spells this out; PyTorch and onnxruntime do it).
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "model/ir.h"
#include "model/tensor.h"

namespace npuforge::model {

enum class AutoPad { kNotSet, kSameUpper, kSameLower, kValid };

// Parses an ONNX auto_pad string; nullopt for anything else.
std::optional<AutoPad> parse_auto_pad(std::string_view s);

// The window attributes of one node, checked and with ONNX defaults filled in.
struct WindowAttrs {
  std::vector<int64_t> kernel;     // spatial kernel extent per axis
  std::vector<int64_t> strides;    // >= 1
  std::vector<int64_t> dilations;  // >= 1
  std::vector<int64_t> pads;       // [begin_0.., end_0..], >= 0; used with kNotSet only
  AutoPad auto_pad = AutoPad::kNotSet;
  bool ceil_mode = false;

  size_t spatial_rank() const { return kernel.size(); }
};

// Reads kernel_shape, strides, dilations, pads, auto_pad (and ceil_mode when
// `with_ceil_mode`) from `node` for `spatial_rank` axes. `weight_kernel` is the kernel
// taken from the weight tensor's shape (Conv family; nullopt for pools, whose
// kernel_shape is required). Every inconsistency is node.fail() with the reason.
WindowAttrs read_window_attrs(const Node& node, size_t spatial_rank,
                              const std::optional<std::vector<int64_t>>& weight_kernel,
                              bool with_ceil_mode);

// One spatial axis of a forward window op (Conv family, pools) for a concrete input.
struct AxisGeometry {
  int64_t in = 0;
  int64_t kernel = 1;
  int64_t stride = 1;
  int64_t dilation = 1;
  int64_t pad_begin = 0;
  int64_t pad_end = 0;  // may be < 0 for ConvTranspose's explicit output_shape (unused tail)
  int64_t out = 0;

  int64_t effective_kernel() const { return (kernel - 1) * dilation + 1; }
};

struct WindowGeometry {
  std::vector<AxisGeometry> axes;

  size_t rank() const { return axes.size(); }
  Shape out_shape() const;           // spatial output dims
  int64_t out_count() const;         // product of out_shape()
  int64_t kernel_count() const;      // product of the kernel extents
};

// The same geometry with unit axes (extent 1, kernel 1, no padding) in front up to
// `rank` axes, so 1-D and 2-D windows run through 3-D loops.
WindowGeometry with_leading_unit_axes(const WindowGeometry& g, size_t rank);

// Forward geometry (Conv, ConvInteger, QLinearConv, MaxPool, AveragePool, LpPool).
// `in_spatial` may contain kUnknownDim; such axes get out = kUnknownDim. An output
// extent below 1 is node.fail() ("input too small for the kernel").
WindowGeometry forward_geometry(const Node& node, const WindowAttrs& attrs, const Shape& in_spatial);

// ConvTranspose geometry: pads from attrs (NOTSET), from auto_pad (output = in * stride)
// or derived from an explicit output_shape (spatial dims, or full N,C,spatial); the
// padding split follows the ONNX spec (SAME_UPPER puts the odd element at the end,
// every other mode at the beginning), as current onnxruntime does.
WindowGeometry transpose_geometry(const Node& node, const WindowAttrs& attrs, const Shape& in_spatial,
                                  const std::vector<int64_t>& output_padding,
                                  const std::vector<int64_t>& output_shape);

}  // namespace npuforge::model
