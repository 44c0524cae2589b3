#include "compiler/qgraph.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include <fmt/format.h>

#include "util/error.h"

namespace npuforge::compiler {

namespace {

template <class... F>
struct Overloaded : F... {
  using F::operator()...;
};

}  // namespace

std::string_view layout_name(Layout layout) {
  switch (layout) {
    case Layout::kHWC: return "hwc";
    case Layout::kRowMajor: return "row_major";
    case Layout::kOnnx: return "onnx";
  }
  return "?";
}

model::Shape QTensor::storage_shape() const {
  if (layout != Layout::kHWC) return shape;
  if (shape.size() == 4) return {shape[2], shape[3], shape[1]};
  if (shape.size() == 3) return {1, shape[2], shape[1]};
  throw Error(fmt::format("tensor '{}': an HWC image has rank 3 or 4, not shape {}", name, model::shape_str(shape)));
}

const QTensor& QGraph::tensor(TensorId id) const {
  if (id.value >= tensors.size()) throw Error(fmt::format("{}: tensor id {} out of range", source, id.value));
  return tensors[id.value];
}

QTensor& QGraph::tensor(TensorId id) {
  if (id.value >= tensors.size()) throw Error(fmt::format("{}: tensor id {} out of range", source, id.value));
  return tensors[id.value];
}

TensorId QGraph::find(std::string_view name) const {
  for (size_t i = 0; i < tensors.size(); ++i)
    if (tensors[i].name == name) return TensorId{static_cast<uint32_t>(i)};
  return TensorId{};
}

TensorId QGraph::add_tensor(QTensor t) {
  if (find(t.name).valid()) throw Error(fmt::format("{}: tensor '{}' defined twice", source, t.name));
  tensors.push_back(std::move(t));
  return TensorId{static_cast<uint32_t>(tensors.size() - 1)};
}

std::vector<TensorId> op_inputs(const QOp& op) {
  return std::visit(Overloaded{
                        [](const EltwiseOp& o) { return std::vector<TensorId>{o.a, o.b}; },
                        [](const ConcatOp& o) { return o.inputs; },
                        [](const CpuStepOp& o) { return o.inputs; },
                        [](const auto& o) { return std::vector<TensorId>{o.input}; },
                    },
                    op);
}

std::vector<TensorId> op_outputs(const QOp& op) {
  return std::visit(Overloaded{
                        [](const CpuStepOp& o) { return o.outputs; },
                        [](const auto& o) { return std::vector<TensorId>{o.output}; },
                    },
                    op);
}

const std::vector<std::string>& op_nodes(const QOp& op) {
  return std::visit([](const auto& o) -> const std::vector<std::string>& { return o.nodes; }, op);
}

std::string_view op_kind(const QOp& op) {
  return std::visit(Overloaded{
                        [](const ConvOp&) -> std::string_view { return "conv"; },
                        [](const GemmOp&) -> std::string_view { return "gemm"; },
                        [](const EltwiseOp& o) -> std::string_view {
                          return o.kind == EltwiseOp::Kind::kAdd ? "add" : "mul";
                        },
                        [](const ClampOp&) -> std::string_view { return "clamp"; },
                        [](const LutOp&) -> std::string_view { return "lut"; },
                        [](const PoolOp& o) -> std::string_view {
                          return o.kind == PoolOp::Kind::kMax ? "maxpool" : "avgpool";
                        },
                        [](const ConcatOp&) -> std::string_view { return "concat"; },
                        [](const AliasOp&) -> std::string_view { return "alias"; },
                        [](const CpuStepOp&) -> std::string_view { return "cpu"; },
                    },
                    op);
}

Target op_target(const QOp& op) { return std::holds_alternative<CpuStepOp>(op) ? Target::kCpu : Target::kNpu; }

std::vector<int8_t> group_weights(const ConvOp& conv, int64_t g) {
  const int64_t k = conv.k(), n = conv.cout_per_group();
  if (g < 0 || g >= conv.groups) throw Error(fmt::format("conv group {} out of range (groups {})", g, conv.groups));
  std::vector<int8_t> out(static_cast<size_t>(k * n));
  for (int64_t r = 0; r < k; ++r)
    for (int64_t c = 0; c < n; ++c) out[r * n + c] = conv.weights[r * conv.cout + g * n + c];
  return out;
}

bool onnx_ordered(const QTensor& t) {
  if (t.layout != Layout::kHWC) return true;
  const int64_t c = t.shape.at(1);
  return c == 1 || t.numel() == c;
}

int64_t storage_axis(const QTensor& t, int64_t axis) {
  if (t.layout != Layout::kHWC || axis == 0) return axis;
  // [1, C, H, W] is stored [H][W][C]; [1, C, L] is stored [1][L][C].
  const int64_t rank = static_cast<int64_t>(t.shape.size());
  if (axis == 1) return 2;
  return rank == 4 ? axis - 2 : 1;
}

ConcatChunks concat_chunks(const QGraph& g, const ConcatOp& op) {
  const QTensor& out = g.tensor(op.output);
  const model::Shape storage = out.storage_shape();
  const int64_t axis = storage_axis(out, op.axis);
  ConcatChunks c;
  for (int64_t d = 0; d < axis; ++d) c.outer *= storage[d];
  for (TensorId id : op.inputs) {
    const QTensor& t = g.tensor(id);
    const model::Shape s = t.storage_shape();
    int64_t inner = 1;
    for (size_t d = static_cast<size_t>(axis); d < s.size(); ++d) inner *= s[d];
    c.chunk_bytes.push_back(inner * static_cast<int64_t>(model::dtype_size(t.dtype)));
  }
  return c;
}

}  // namespace npuforge::compiler

// ---- validate ----

namespace npuforge::compiler {

namespace {

class Validator {
 public:
  explicit Validator(const QGraph& g) : g_(g), produced_(g.tensors.size(), false) {}

  void run() {
    for (const QTensor& t : g_.tensors) check_tensor(t);
    for (const GraphIO& io : g_.inputs) {
      check_id(io.tensor, "model input '" + io.name + "'");
      produced_[io.tensor.value] = true;
    }
    for (size_t i = 0; i < g_.ops.size(); ++i) {
      op_ = i;
      const QOp& op = g_.ops[i];
      for (TensorId id : op_inputs(op)) {
        check_id(id, "input");
        if (!produced_[id.value]) fail(fmt::format("reads tensor '{}' before anything produces it", g_.tensor(id).name));
      }
      for (TensorId id : op_outputs(op)) {
        check_id(id, "output");
        if (produced_[id.value]) fail(fmt::format("tensor '{}' is produced twice", g_.tensor(id).name));
        produced_[id.value] = true;
      }
      std::visit([this](const auto& o) { check(o); }, op);
      check_channel_scaled(op);
    }
    op_ = SIZE_MAX;
    for (const GraphIO& io : g_.outputs) {
      check_id(io.tensor, "model output '" + io.name + "'");
      if (!g_.tensor(io.tensor).channel_scales.empty()) fail(fmt::format("model output '{}' has per-channel scales", io.name));
      if (!produced_[io.tensor.value]) fail(fmt::format("model output '{}' is never produced", io.name));
    }
    check_segments();
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    if (op_ == SIZE_MAX) throw Error(fmt::format("{}: invalid QGraph: {}", g_.source, what));
    const QOp& op = g_.ops[op_];
    const auto& nodes = op_nodes(op);
    throw Error(fmt::format("{}: invalid QGraph: op {} ({}{}): {}", g_.source, op_, op_kind(op),
                            nodes.empty() ? "" : ", from node '" + nodes.front() + "'", what));
  }

  void check_id(TensorId id, const std::string& role) const {
    if (!id.valid() || id.value >= g_.tensors.size()) fail(role + ": tensor id out of range");
  }

  void check_tensor(const QTensor& t) const {
    if (t.is_int8()) {
      if (!(t.scale > 0) || !std::isfinite(t.scale))
        fail(fmt::format("int8 tensor '{}' has scale {} (must be > 0)", t.name, t.scale));
      if (t.layout == Layout::kOnnx) fail(fmt::format("int8 tensor '{}' has the CPU-side layout", t.name));
      if (t.layout == Layout::kHWC && t.shape.size() != 4 && t.shape.size() != 3)
        fail(fmt::format("HWC tensor '{}' has shape {}", t.name, model::shape_str(t.shape)));
    } else if (t.layout != Layout::kOnnx) {
      fail(fmt::format("{} tensor '{}' must have the CPU-side layout", model::dtype_name(t.dtype), t.name));
    }
    if (!t.shape.empty() && t.shape[0] != 1 && t.layout == Layout::kHWC)
      fail(fmt::format("tensor '{}' has batch {} (only 1 is compiled)", t.name, t.shape[0]));
    if (t.channel_scales.empty()) return;
    if (!t.is_int8() || t.layout != Layout::kHWC || t.shape.size() != 4 ||
        t.channel_scales.size() != static_cast<size_t>(t.shape[1]))
      fail(fmt::format("tensor '{}': per-channel scales need an int8 HWC image and one scale per channel", t.name));
    float top = 0;
    for (float s : t.channel_scales) {
      if (!(s > 0) || !std::isfinite(s)) fail(fmt::format("tensor '{}' has a channel scale {} (must be > 0)", t.name, s));
      top = std::max(top, s);
    }
    if (top != t.scale) fail(fmt::format("tensor '{}': scale {} is not its largest channel scale {}", t.name, t.scale, top));
  }

  // Only convs (weights / per-channel requant absorb the scales) and grouped LUTs handle
  // per-channel scales; any other op would read the bytes at one scale.
  void check_channel_scaled(const QOp& op) const {
    if (std::holds_alternative<ConvOp>(op) || std::holds_alternative<LutOp>(op)) return;
    for (const auto& ids : {op_inputs(op), op_outputs(op)})
      for (TensorId id : ids)
        if (!g_.tensor(id).channel_scales.empty())
          fail(fmt::format("tensor '{}' has per-channel scales, which a {} cannot handle", g_.tensor(id).name, op_kind(op)));
  }

  const QTensor& npu_tensor(TensorId id, const char* role) const {
    const QTensor& t = g_.tensor(id);
    if (!t.is_int8()) fail(fmt::format("{} '{}' is not int8", role, t.name));
    return t;
  }

  void check_requant(const isa::RequantParams& p, bool relu, unsigned scale_bits, unsigned max_shift) const {
    if (p.shift > max_shift || (scale_bits < 32 && p.scale >> scale_bits) != 0)
      fail(fmt::format("requant scale {} shift {} outside {}-bit scale, shift <= {}", p.scale, p.shift, scale_bits, max_shift));
    if (p.relu != relu) fail("requant relu flag differs from the op's");
  }

  void check_window(const Window& w) const {
    if (w.kernel_h < 1 || w.kernel_w < 1 || w.stride_h < 1 || w.stride_w < 1 || w.dilation_h < 1 || w.dilation_w < 1 ||
        w.pad_top < 0 || w.pad_left < 0 || w.pad_bottom < 0 || w.pad_right < 0)
      fail("window with a kernel, stride or dilation below 1 or a negative pad");
  }

  // Output spatial size of a window over an HWC [H][W][C] tensor.
  std::pair<int64_t, int64_t> window_out(const model::Shape& in, const Window& w) const {
    const int64_t eh = (w.kernel_h - 1) * w.dilation_h + 1, ew = (w.kernel_w - 1) * w.dilation_w + 1;
    const int64_t oh = (in[0] + w.pad_top + w.pad_bottom - eh) / w.stride_h + 1;
    const int64_t ow = (in[1] + w.pad_left + w.pad_right - ew) / w.stride_w + 1;
    if (in[0] + w.pad_top + w.pad_bottom < eh || in[1] + w.pad_left + w.pad_right < ew)
      fail("window larger than the padded image");
    return {oh, ow};
  }

  void check(const ConvOp& o) {
    const QTensor& in = npu_tensor(o.input, "input");
    const QTensor& out = npu_tensor(o.output, "output");
    if (in.layout != Layout::kHWC || out.layout != Layout::kHWC) fail("conv tensors must be HWC");
    check_window(o.window);
    const model::Shape is = in.storage_shape(), os = out.storage_shape();
    if (o.groups < 1 || is[2] != o.groups * o.cin_per_group || o.cout % o.groups != 0 || os[2] != o.cout)
      fail(fmt::format("channels: input {} output {} vs groups {} cin_per_group {} cout {}", is[2], os[2], o.groups,
                       o.cin_per_group, o.cout));
    const auto [oh, ow] = window_out(is, o.window);
    if (os[0] != oh || os[1] != ow) fail(fmt::format("output {}x{} but the window gives {}x{}", os[0], os[1], oh, ow));
    const size_t n = static_cast<size_t>(o.cout);
    if (o.weights.size() != static_cast<size_t>(o.k()) * n) fail("weights are not [k][cout]");
    if (o.bias.size() != n || o.weight_scales.size() != n || o.requant.size() != n)
      fail("bias, weight_scales and requant must have cout entries");
    for (const auto& p : o.requant) check_requant(p, o.relu, 31, 62);
  }

  void check(const GemmOp& o) {
    const QTensor& in = npu_tensor(o.input, "input");
    const QTensor& out = npu_tensor(o.output, "output");
    if (!onnx_ordered(in) || !onnx_ordered(out)) fail("gemm tensors must be row-major (or HWC in the same byte order)");
    if (in.shape.empty() || in.shape.back() != o.k || out.shape.empty() || out.shape.back() != o.n ||
        in.numel() / o.k != out.numel() / o.n)
      fail(fmt::format("shapes {} -> {} do not fit k {} n {}", model::shape_str(in.shape), model::shape_str(out.shape),
                       o.k, o.n));
    const size_t n = static_cast<size_t>(o.n);
    if (o.weights.size() != static_cast<size_t>(o.k) * n) fail("weights are not [k][n]");
    if (o.bias.size() != n || o.weight_scales.size() != n || o.requant.size() != n)
      fail("bias, weight_scales and requant must have n entries");
    for (const auto& p : o.requant) check_requant(p, o.relu, 31, 62);
  }

  void check(const EltwiseOp& o) {
    const QTensor& a = npu_tensor(o.a, "input a");
    const QTensor& b = npu_tensor(o.b, "input b");
    const QTensor& out = npu_tensor(o.output, "output");
    if (o.broadcast_b) {
      if (o.kind != EltwiseOp::Kind::kMul || a.layout != Layout::kHWC || a.shape.size() != 4 || a.shape != out.shape ||
          out.layout != Layout::kHWC || b.shape != model::Shape{1, a.shape[1], 1, 1} || b.layout != Layout::kHWC)
        fail("a broadcast multiply takes an HWC image [1, C, H, W] and a [1, C, 1, 1] vector");
      check_requant(o.requant, false, 16, 40);
      return;
    }
    if (a.shape != b.shape || a.shape != out.shape || a.layout != b.layout || a.layout != out.layout)
      fail("inputs and output must have one shape and layout");
    if (o.kind == EltwiseOp::Kind::kAdd && a.scale != b.scale)
      fail(fmt::format("add inputs at scales {} and {}", a.scale, b.scale));
    check_requant(o.requant, false, 16, 40);
  }

  void check(const ClampOp& o) {
    same_shape_scale(o.input, o.output);
    if (o.lo > o.hi) fail("clamp lo > hi");
  }

  void check(const LutOp& o) {
    const QTensor& in = npu_tensor(o.input, "input");
    const QTensor& out = npu_tensor(o.output, "output");
    if (in.shape != out.shape || in.layout != out.layout) fail("a lut keeps shape and layout");
    if (o.channel_tables.empty()) {
      if (!in.channel_scales.empty() || !out.channel_scales.empty()) fail("per-channel scales need channel tables");
      return;
    }
    if (in.layout != Layout::kHWC) fail("channel tables need an HWC image");
    const int64_t channels = in.storage_shape()[2];
    int64_t next = 0;
    for (const LutOp::ChannelTable& t : o.channel_tables) {
      if (t.c0 != next || t.c1 <= t.c0 || t.c1 > channels) fail("channel tables do not tile the channels in order");
      for (const QTensor* x : {&in, &out})
        for (int64_t c = t.c0; c < t.c1 && !x->channel_scales.empty(); ++c)
          if (x->channel_scales[static_cast<size_t>(c)] != x->channel_scales[static_cast<size_t>(t.c0)])
            fail(fmt::format("'{}' changes scale inside channel table [{}, {})", x->name, t.c0, t.c1));
      next = t.c1;
    }
    if (next != channels) fail("channel tables do not cover every channel");
  }

  void check(const PoolOp& o) {
    const QTensor& in = npu_tensor(o.input, "input");
    const QTensor& out = npu_tensor(o.output, "output");
    if (in.layout != Layout::kHWC || out.layout != Layout::kHWC) fail("pool tensors must be HWC");
    if (in.scale != out.scale) fail("a pool keeps the scale");
    check_window(o.window);
    if (o.window.dilation_h != 1 || o.window.dilation_w != 1) fail("pool with dilation");
    const model::Shape is = in.storage_shape(), os = out.storage_shape();
    const auto [oh, ow] = window_out(is, o.window);
    if (os[0] != oh || os[1] != ow || os[2] != is[2]) fail("output shape does not match the window");
  }

  void check(const ConcatOp& o) {
    const QTensor& out = npu_tensor(o.output, "output");
    if (o.inputs.empty()) fail("concat without inputs");
    int64_t sum = 0;
    const int64_t rank = static_cast<int64_t>(out.shape.size());
    if (o.axis < 0 || o.axis >= rank) fail("concat axis out of range");
    for (TensorId id : o.inputs) {
      const QTensor& t = npu_tensor(id, "input");
      if (t.layout != out.layout || t.scale != out.scale || t.shape.size() != out.shape.size())
        fail(fmt::format("input '{}' differs from the output in layout, scale or rank", t.name));
      for (int64_t d = 0; d < rank; ++d)
        if (d != o.axis && t.shape[d] != out.shape[d]) fail(fmt::format("input '{}' has another shape", t.name));
      sum += t.shape[o.axis];
    }
    if (sum != out.shape[o.axis]) fail("inputs do not add up to the output along the axis");
  }

  void check(const AliasOp& o) {
    const QTensor& in = g_.tensor(o.input);
    const QTensor& out = g_.tensor(o.output);
    if (in.dtype != out.dtype || in.numel() != out.numel() || in.scale != out.scale)
      fail("an alias keeps dtype, element count and scale");
  }

  void check(const CpuStepOp& o) {
    if (o.inputs.size() != o.graph.inputs.size() || o.outputs.size() != o.graph.outputs.size())
      fail("inputs/outputs do not match the step's graph");
    for (size_t i = 0; i < o.inputs.size(); ++i)
      if (g_.tensor(o.inputs[i]).name != o.graph.inputs[i]) fail("input names differ from the step's graph");
    for (size_t i = 0; i < o.outputs.size(); ++i)
      if (g_.tensor(o.outputs[i]).name != o.graph.outputs[i]) fail("output names differ from the step's graph");
  }

  void same_shape_scale(TensorId a, TensorId b) const {
    const QTensor& x = npu_tensor(a, "input");
    const QTensor& y = npu_tensor(b, "output");
    if (x.shape != y.shape || x.layout != y.layout || x.scale != y.scale) fail("output must keep shape, layout and scale");
  }

  void check_segments() {
    if (g_.segments.empty()) return;
    uint32_t next = 0;
    for (const Segment& s : g_.segments) {
      if (s.first != next || s.end <= s.first || s.end > g_.ops.size()) fail("segments do not tile the ops in order");
      for (uint32_t i = s.first; i < s.end; ++i)
        if (op_target(g_.ops[i]) != s.target) fail(fmt::format("op {} is in a segment of the other target", i));
      if (s.target == Target::kCpu && s.end - s.first != 1) fail("a CPU segment holds one step");
      next = s.end;
    }
    if (next != g_.ops.size()) fail("segments do not cover every op");
  }

  const QGraph& g_;
  std::vector<bool> produced_;
  size_t op_ = SIZE_MAX;
};

}  // namespace

void validate(const QGraph& g) { Validator(g).run(); }

}  // namespace npuforge::compiler
