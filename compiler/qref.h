#pragma once
// The int8 reference: executes a QGraph op by op on whole tensors (no tiling) with the ISA's
// numerics (isa/numerics.h), so every NPU segment's output must equal it bit for bit:
//  - conv/gemm: int32 wrap-around sums of int8 * int8 plus the bias, then requant per channel;
//  - pools: max ignores padding; avg divides by the in-image count (or the window with
//    count_pad), rounding half away from zero;
//  - add = requant(a + b), mul = requant(a * b); lut = table[q + 128]; clamp on the ints;
//  - concat and alias move bytes; CPU steps run the reference interpreter in float between
//    dequantize and quantize (convert.h).
// Values are stored as they would be in memory: int8 tensors in their storage layout (shape
// QTensor::storage_shape()), float tensors in the ONNX layout.
#include <vector>

#include "compiler/qgraph.h"
#include "model/interpreter.h"
#include "model/tensor.h"

namespace npuforge::compiler {

struct QrefResult {
  std::vector<model::Tensor> values;  // by TensorId: every tensor the run computed
  model::TensorMap outputs;           // model outputs in the ONNX layout, int8 ones dequantized
};

// `inputs`: one float32 (or the model's dtype) tensor per model input, ONNX layout.
QrefResult run_qref(const QGraph& graph, const model::TensorMap& inputs);

// run_qref one op at a time, for passes that look at (or adjust) an op before it runs
// (bias_correct.h): the ops are the caller's, in schedule order.
class QrefStepper {
 public:
  QrefStepper(const QGraph& graph, const model::TensorMap& inputs);
  void step(const QOp& op);
  const model::Tensor& value(TensorId id) const;  // an error if not computed yet
  QrefResult finish();                           // the outputs; the stepper is spent

 private:
  const model::Tensor& get(TensorId id) const { return value(id); }
  void set(TensorId id, model::Tensor t) { r_.values.at(id.value) = std::move(t); }
  const QTensor& tensor(TensorId id) const { return g_.tensor(id); }
  void exec(const ConvOp& o);
  void exec(const GemmOp& o);
  void exec(const PoolOp& o);
  void exec(const EltwiseOp& o);
  void exec(const LutOp& o);
  void exec(const ClampOp& o);
  void exec(const AliasOp& o);
  void exec(const ConcatOp& o);
  void exec(const CpuStepOp& o);

  const QGraph& g_;
  QrefResult r_;
};

// acc[i] += x * w[i] (and, below, += x[i] * w[i]) for i < n. In blocks of 16 with no aliasing,
// which GCC vectorizes at -O2 (its cheap cost model takes only loops whose trip count is a
// multiple of the vector length): the reference runs every conv and gemm of a model once per
// run-model, and scalar loops made it the largest part of a run. Integer sums: exact either way.
template <typename Acc>
void multiply_accumulate(Acc* __restrict acc, const int8_t* __restrict w, int32_t x, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    for (int64_t k = 0; k < 16; ++k) acc[i + k] += static_cast<Acc>(x * w[i + k]);
  for (; i < n; ++i) acc[i] += static_cast<Acc>(x * w[i]);
}
template <typename Acc>
void multiply_accumulate(Acc* __restrict acc, const int8_t* __restrict w, const int8_t* __restrict x, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    for (int64_t k = 0; k < 16; ++k) acc[i + k] += static_cast<Acc>(int32_t{x[i + k]} * w[i + k]);
  for (; i < n; ++i) acc[i] += static_cast<Acc>(int32_t{x[i]} * w[i]);
}

// The int8 convolution's sums, shared by the reference and bias correction: `visit(pixel, acc)`
// gets each output pixel (row-major over oh x ow) with its cout accumulators, bias included.
// Acc is uint32_t for the hardware's int32 wrap-around, int64_t for exact sums. `in` is HWC.
template <typename Acc, typename Visit>
void conv_accumulate(const ConvOp& op, const model::Tensor& in, int64_t oh, int64_t ow, Visit&& visit) {
  const model::Shape& is = in.shape();
  const int64_t h = is[0], w = is[1], c = is[2];
  const int64_t cin_pg = op.cin_per_group, cout = op.cout, cout_pg = op.cout_per_group();
  const Window& win = op.window;
  const int8_t* x = in.values<int8_t>().data();
  std::vector<Acc> acc(static_cast<size_t>(cout));
  for (int64_t oy = 0; oy < oh; ++oy)
    for (int64_t ox = 0; ox < ow; ++ox) {
      for (int64_t co = 0; co < cout; ++co) acc[co] = static_cast<Acc>(op.bias[co]);
      for (int64_t ky = 0; ky < win.kernel_h; ++ky) {
        const int64_t iy = oy * win.stride_h - win.pad_top + ky * win.dilation_h;
        if (iy < 0 || iy >= h) continue;
        for (int64_t kx = 0; kx < win.kernel_w; ++kx) {
          const int64_t ix = ox * win.stride_w - win.pad_left + kx * win.dilation_w;
          if (ix < 0 || ix >= w) continue;
          const int8_t* px = x + (iy * w + ix) * c;
          if (cin_pg == 1 && cout_pg == 1) {  // depthwise: channel g of the input feeds output g only
            multiply_accumulate(acc.data(), op.weights.data() + (ky * win.kernel_w + kx) * cout, px, cout);
            continue;
          }
          for (int64_t g = 0; g < op.groups; ++g)
            for (int64_t ci = 0; ci < cin_pg; ++ci) {
              const int32_t xv = px[g * cin_pg + ci];
              if (xv == 0) continue;
              const int8_t* wr = op.weights.data() + ((ky * win.kernel_w + kx) * cin_pg + ci) * cout + g * cout_pg;
              multiply_accumulate(acc.data() + g * cout_pg, wr, xv, cout_pg);
            }
        }
      }
      visit(oy * ow + ox, static_cast<const Acc*>(acc.data()));
    }
}

// The int8 gemm's sums, likewise: `visit(row, acc)` gets each row of `in` ([rows][k]) with
// its n accumulators, bias included.
template <typename Acc, typename Visit>
void gemm_accumulate(const GemmOp& op, const model::Tensor& in, Visit&& visit) {
  const int64_t rows = in.numel() / op.k;
  const int8_t* x = in.values<int8_t>().data();
  std::vector<Acc> acc(static_cast<size_t>(op.n));
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t j = 0; j < op.n; ++j) acc[j] = static_cast<Acc>(op.bias[j]);
    for (int64_t k = 0; k < op.k; ++k) {
      const int32_t xv = x[r * op.k + k];
      if (xv == 0) continue;
      multiply_accumulate(acc.data(), op.weights.data() + k * op.n, xv, op.n);
    }
    visit(r, static_cast<const Acc*>(acc.data()));
  }
}

// One op on stored values (exposed for tests and for the runner's per-op checks).
model::Tensor ref_conv(const ConvOp& op, const model::Tensor& in, const QTensor& out);
model::Tensor ref_gemm(const GemmOp& op, const model::Tensor& in, const QTensor& out);
model::Tensor ref_pool(const PoolOp& op, const model::Tensor& in, const QTensor& out);
model::Tensor ref_eltwise(const EltwiseOp& op, const model::Tensor& a, const model::Tensor& b);
model::Tensor ref_lut(const LutOp& op, const model::Tensor& in);
model::Tensor ref_clamp(const ClampOp& op, const model::Tensor& in);

}  // namespace npuforge::compiler
