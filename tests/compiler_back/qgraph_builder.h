#pragma once
// Small QGraphs built in code for the back-half tests: tensors, NPU ops with seeded random
// weights and requant parameters that keep values in range, segments and validation.
#include <cmath>
#include <string>
#include <utility>

#include "compiler/qgraph.h"
#include "compiler/schedule.h"
#include "isa/numerics.h"
#include "model/interpreter.h"
#include "util/rng.h"

namespace npuforge::compiler::testing {

class QGraphBuilder {
 public:
  explicit QGraphBuilder(uint64_t seed = 1) : rng_(seed) { g_.source = "test.qgraph"; }

  QGraph& graph() { return g_; }

  // [1, C, H, W] stored HWC.
  TensorId image(const std::string& name, int64_t h, int64_t w, int64_t c, float scale = 0.05f) {
    return g_.add_tensor({name, {1, c, h, w}, Layout::kHWC, model::DType::kInt8, scale});
  }
  TensorId matrix(const std::string& name, int64_t rows, int64_t cols, float scale = 0.05f) {
    return g_.add_tensor({name, {rows, cols}, Layout::kRowMajor, model::DType::kInt8, scale});
  }
  TensorId like(const std::string& name, TensorId t, float scale = 0) {
    QTensor q = g_.tensor(t);
    q.name = name;
    if (scale > 0) q.scale = scale;
    return g_.add_tensor(std::move(q));
  }
  void input(TensorId t) { g_.inputs.push_back({g_.tensor(t).name, t}); }
  void output(TensorId t) { g_.outputs.push_back({g_.tensor(t).name, t}); }

  // A conv with random weights; the output tensor is made from the window's geometry.
  TensorId conv(TensorId in, const std::string& out_name, const Window& w, int64_t groups, int64_t cout,
                bool relu = false, float out_scale = 0.05f) {
    const model::Shape is = g_.tensor(in).storage_shape();
    const int64_t eh = (w.kernel_h - 1) * w.dilation_h + 1, ew = (w.kernel_w - 1) * w.dilation_w + 1;
    const int64_t oh = (is[0] + w.pad_top + w.pad_bottom - eh) / w.stride_h + 1;
    const int64_t ow = (is[1] + w.pad_left + w.pad_right - ew) / w.stride_w + 1;
    const TensorId out = g_.tensor(in).shape.size() == 3
                             ? g_.add_tensor({out_name, {1, cout, ow}, Layout::kHWC, model::DType::kInt8, out_scale})
                             : image(out_name, oh, ow, cout, out_scale);
    ConvOp c;
    c.nodes = {out_name + "_node"};
    c.input = in;
    c.output = out;
    c.window = w;
    c.groups = groups;
    c.cin_per_group = is[2] / groups;
    c.cout = cout;
    c.relu = relu;
    fill_matmul(c.k(), cout, g_.tensor(in).scale, out_scale, relu, c.weights, c.bias, c.weight_scales, c.requant);
    g_.ops.emplace_back(std::move(c));
    return out;
  }

  TensorId gemm(TensorId in, const std::string& out_name, int64_t n, bool relu = false, float out_scale = 0.05f) {
    const QTensor& t = g_.tensor(in);
    model::Shape shape = t.shape;
    const int64_t k = shape.back();
    shape.back() = n;
    const TensorId out = g_.add_tensor({out_name, shape, Layout::kRowMajor, model::DType::kInt8, out_scale});
    GemmOp op;
    op.nodes = {out_name + "_node"};
    op.input = in;
    op.output = out;
    op.k = k;
    op.n = n;
    op.relu = relu;
    fill_matmul(k, n, g_.tensor(in).scale, out_scale, relu, op.weights, op.bias, op.weight_scales, op.requant);
    g_.ops.emplace_back(std::move(op));
    return out;
  }

  TensorId pool(TensorId in, const std::string& out_name, PoolOp::Kind kind, const Window& w, bool count_pad = false) {
    const model::Shape is = g_.tensor(in).storage_shape();
    const int64_t oh = (is[0] + w.pad_top + w.pad_bottom - w.kernel_h) / w.stride_h + 1;
    const int64_t ow = (is[1] + w.pad_left + w.pad_right - w.kernel_w) / w.stride_w + 1;
    const TensorId out = image(out_name, oh, ow, is[2], g_.tensor(in).scale);
    PoolOp p;
    p.nodes = {out_name + "_node"};
    p.kind = kind;
    p.input = in;
    p.output = out;
    p.window = w;
    p.count_pad = count_pad;
    g_.ops.emplace_back(std::move(p));
    return out;
  }

  TensorId eltwise(EltwiseOp::Kind kind, TensorId a, TensorId b, const std::string& out_name, float out_scale = 0.05f) {
    const TensorId out = like(out_name, a, out_scale);
    EltwiseOp e;
    e.nodes = {out_name + "_node"};
    e.kind = kind;
    e.a = a;
    e.b = b;
    e.output = out;
    const double in = kind == EltwiseOp::Kind::kAdd ? g_.tensor(a).scale
                                                    : double(g_.tensor(a).scale) * g_.tensor(b).scale;
    e.requant = isa::make_requant(in / out_scale, 16, 40);
    g_.ops.emplace_back(std::move(e));
    return out;
  }

  TensorId clamp(TensorId in, const std::string& out_name, int8_t lo, int8_t hi) {
    const TensorId out = like(out_name, in);
    ClampOp c;
    c.nodes = {out_name + "_node"};
    c.input = in;
    c.output = out;
    c.lo = lo;
    c.hi = hi;
    g_.ops.emplace_back(std::move(c));
    return out;
  }

  TensorId lut(TensorId in, const std::string& out_name) {
    const TensorId out = like(out_name, in);
    LutOp l;
    l.nodes = {out_name + "_node"};
    l.function = "test";
    l.input = in;
    l.output = out;
    for (auto& v : l.table) v = static_cast<int8_t>(rng_.range(-128, 127));
    g_.ops.emplace_back(std::move(l));
    return out;
  }

  TensorId concat(const std::vector<TensorId>& ins, const std::string& out_name, int64_t axis) {
    QTensor t = g_.tensor(ins.front());
    t.name = out_name;
    t.shape[static_cast<size_t>(axis)] = 0;
    for (TensorId i : ins) t.shape[static_cast<size_t>(axis)] += g_.tensor(i).shape[static_cast<size_t>(axis)];
    const TensorId out = g_.add_tensor(std::move(t));
    ConcatOp c;
    c.nodes = {out_name + "_node"};
    c.inputs = ins;
    c.output = out;
    c.axis = axis;
    g_.ops.emplace_back(std::move(c));
    return out;
  }

  TensorId alias(TensorId in, const std::string& out_name, model::Shape shape, Layout layout) {
    QTensor t = g_.tensor(in);
    t.name = out_name;
    t.shape = std::move(shape);
    t.layout = layout;
    const TensorId out = g_.add_tensor(std::move(t));
    g_.ops.emplace_back(AliasOp{{out_name + "_node"}, in, out});
    return out;
  }

  // Segments from the ops in the order given, then validate.
  QGraph done() {
    compute_segments(g_);
    validate(g_);
    return g_;
  }

  Rng& rng() { return rng_; }

 private:
  // Weights in [-127, 127] at a per-channel scale, a bias, and the requant that maps the
  // accumulator (in_scale * ws) to out_scale; sized so outputs use much of the int8 range.
  void fill_matmul(int64_t k, int64_t n, float in_scale, float out_scale, bool relu, std::vector<int8_t>& w,
                   std::vector<int32_t>& bias, std::vector<float>& ws, std::vector<isa::RequantParams>& rq) {
    w.resize(static_cast<size_t>(k * n));
    for (auto& v : w) v = static_cast<int8_t>(rng_.range(-127, 127));
    bias.resize(static_cast<size_t>(n));
    ws.resize(static_cast<size_t>(n));
    rq.resize(static_cast<size_t>(n));
    for (int64_t c = 0; c < n; ++c) {
      bias[c] = static_cast<int32_t>(rng_.range(-2000, 2000));
      // A typical accumulator is ~ 127 * 64 * sqrt(k); scale it to ~ 40 codes.
      ws[c] = static_cast<float>(out_scale * 40.0 / (in_scale * 127.0 * 64.0 * std::sqrt(double(k))));
      rq[c] = isa::make_requant(double(in_scale) * ws[c] / out_scale, 31, 62);
      rq[c].relu = relu;
    }
  }

  QGraph g_;
  Rng rng_;
};

// Random float inputs for every model input of `g`, ONNX layout, spread over the int8 range.
inline model::TensorMap random_inputs(const QGraph& g, uint64_t seed) {
  Rng rng(seed);
  model::TensorMap m;
  for (const GraphIO& io : g.inputs) {
    const QTensor& t = g.tensor(io.tensor);
    model::Tensor x(model::DType::kFloat32, t.shape);
    for (float& v : x.values<float>()) v = static_cast<float>(rng.range(-130, 130)) * t.scale;
    m.emplace(io.name, std::move(x));
  }
  return m;
}

}  // namespace npuforge::compiler::testing
