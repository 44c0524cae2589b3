#include "compiler/qref.h"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "compiler/convert.h"
#include "util/error.h"

namespace npuforge::compiler {

namespace {

model::Tensor int8_tensor(const QTensor& t) { return model::Tensor(model::DType::kInt8, t.storage_shape()); }

}  // namespace

model::Tensor ref_conv(const ConvOp& op, const model::Tensor& in, const QTensor& out_t) {
  model::Tensor out = int8_tensor(out_t);
  const model::Shape& os = out.shape();  // [OH][OW][C]
  int8_t* y = out.values<int8_t>().data();
  conv_accumulate<uint32_t>(op, in, os[0], os[1], [&](int64_t pixel, const uint32_t* acc) {
    int8_t* py = y + pixel * op.cout;
    for (int64_t co = 0; co < op.cout; ++co) py[co] = isa::requant(static_cast<int32_t>(acc[co]), op.requant[co]);
  });
  return out;
}

model::Tensor ref_gemm(const GemmOp& op, const model::Tensor& in, const QTensor& out_t) {
  model::Tensor out = int8_tensor(out_t);
  int8_t* y = out.values<int8_t>().data();
  gemm_accumulate<uint32_t>(op, in, [&](int64_t r, const uint32_t* acc) {
    for (int64_t j = 0; j < op.n; ++j) y[r * op.n + j] = isa::requant(static_cast<int32_t>(acc[j]), op.requant[j]);
  });
  return out;
}

model::Tensor ref_pool(const PoolOp& op, const model::Tensor& in, const QTensor& out_t) {
  const model::Shape& is = in.shape();
  model::Tensor out = int8_tensor(out_t);
  const model::Shape& os = out.shape();
  const int64_t h = is[0], w = is[1], c = is[2], oh = os[0], ow = os[1];
  const Window& win = op.window;
  const int8_t* x = in.values<int8_t>().data();
  int8_t* y = out.values<int8_t>().data();
  const bool max = op.kind == PoolOp::Kind::kMax;
  std::vector<int64_t> acc(static_cast<size_t>(c));
  for (int64_t oy = 0; oy < oh; ++oy)
    for (int64_t ox = 0; ox < ow; ++ox) {
      std::fill(acc.begin(), acc.end(), max ? -128 : 0);
      int64_t count = 0;
      for (int64_t ky = 0; ky < win.kernel_h; ++ky) {
        const int64_t iy = oy * win.stride_h - win.pad_top + ky;
        if (iy < 0 || iy >= h) continue;
        for (int64_t kx = 0; kx < win.kernel_w; ++kx) {
          const int64_t ix = ox * win.stride_w - win.pad_left + kx;
          if (ix < 0 || ix >= w) continue;
          ++count;
          const int8_t* px = x + (iy * w + ix) * c;
          for (int64_t ch = 0; ch < c; ++ch) acc[ch] = max ? std::max<int64_t>(acc[ch], px[ch]) : acc[ch] + px[ch];
        }
      }
      const int64_t divisor = op.count_pad ? win.kernel_h * win.kernel_w : count;
      int8_t* py = y + (oy * ow + ox) * c;
      for (int64_t ch = 0; ch < c; ++ch)
        py[ch] = max ? static_cast<int8_t>(acc[ch]) : divisor == 0 ? 0 : isa::round_div_away(acc[ch], divisor);
    }
  return out;
}

model::Tensor ref_eltwise(const EltwiseOp& op, const model::Tensor& a, const model::Tensor& b) {
  model::Tensor out(model::DType::kInt8, a.shape());
  auto pa = a.values<int8_t>(), pb = b.values<int8_t>();
  auto py = out.values<int8_t>();
  // A broadcast b has one value per channel; HWC storage has the channels innermost.
  const size_t nb = pb.size();
  for (size_t i = 0; i < py.size(); ++i) {
    const int8_t b = op.broadcast_b ? pb[i % nb] : pb[i];
    const int64_t v = op.kind == EltwiseOp::Kind::kAdd ? int64_t{pa[i]} + b : int64_t{pa[i]} * b;
    py[i] = isa::requant(v, op.requant);
  }
  return out;
}

model::Tensor ref_lut(const LutOp& op, const model::Tensor& in) {
  model::Tensor out(model::DType::kInt8, in.shape());
  auto px = in.values<int8_t>();
  auto py = out.values<int8_t>();
  if (op.channel_tables.empty()) {
    for (size_t i = 0; i < py.size(); ++i) py[i] = op.table[static_cast<uint8_t>(px[i]) ^ 0x80];
    return out;
  }
  // HWC storage: channels innermost.
  const size_t channels = static_cast<size_t>(in.shape().back());
  for (const LutOp::ChannelTable& t : op.channel_tables)
    for (size_t p = 0; p < py.size(); p += channels)
      for (size_t c = static_cast<size_t>(t.c0); c < static_cast<size_t>(t.c1); ++c)
        py[p + c] = t.table[static_cast<uint8_t>(px[p + c]) ^ 0x80];
  return out;
}

model::Tensor ref_clamp(const ClampOp& op, const model::Tensor& in) {
  model::Tensor out(model::DType::kInt8, in.shape());
  auto px = in.values<int8_t>();
  auto py = out.values<int8_t>();
  for (size_t i = 0; i < py.size(); ++i) py[i] = std::clamp(px[i], op.lo, op.hi);
  return out;
}

QrefStepper::QrefStepper(const QGraph& g, const model::TensorMap& inputs) : g_(g) {
  r_.values.resize(g.tensors.size());
  for (const GraphIO& io : g_.inputs) {
    auto it = inputs.find(io.name);
    if (it == inputs.end()) throw Error(fmt::format("{}: model input '{}' not given", g_.source, io.name));
    const QTensor& t = g_.tensor(io.tensor);
    set(io.tensor, t.is_int8() ? quantize(it->second, t) : it->second);
  }
}

QrefResult QrefStepper::finish() {
  for (const GraphIO& io : g_.outputs) {
    const QTensor& t = g_.tensor(io.tensor);
    r_.outputs[io.name] = t.is_int8() ? dequantize(value(io.tensor), t) : value(io.tensor);
  }
  return std::move(r_);
}

void QrefStepper::step(const QOp& op) {
  std::visit([this](const auto& o) { exec(o); }, op);
}

const model::Tensor& QrefStepper::value(TensorId id) const {
  const model::Tensor& t = r_.values.at(id.value);
  if (t.numel() == 0 && g_.tensor(id).numel() != 0)
    throw Error(fmt::format("{}: tensor '{}' read before it is computed", g_.source, g_.tensor(id).name));
  return t;
}

void QrefStepper::exec(const ConvOp& o) { set(o.output, ref_conv(o, get(o.input), tensor(o.output))); }
void QrefStepper::exec(const GemmOp& o) { set(o.output, ref_gemm(o, get(o.input), tensor(o.output))); }
void QrefStepper::exec(const PoolOp& o) { set(o.output, ref_pool(o, get(o.input), tensor(o.output))); }
void QrefStepper::exec(const EltwiseOp& o) { set(o.output, ref_eltwise(o, get(o.a), get(o.b))); }
void QrefStepper::exec(const LutOp& o) { set(o.output, ref_lut(o, get(o.input))); }
void QrefStepper::exec(const ClampOp& o) { set(o.output, ref_clamp(o, get(o.input))); }
void QrefStepper::exec(const AliasOp& o) { set(o.output, get(o.input).reshaped(tensor(o.output).storage_shape())); }

void QrefStepper::exec(const ConcatOp& o) {
  const QTensor& out_t = tensor(o.output);
  model::Tensor out = int8_tensor(out_t);
  const ConcatChunks ch = concat_chunks(g_, o);
  std::byte* dst = out.bytes().data();
  for (int64_t r = 0; r < ch.outer; ++r)
    for (size_t i = 0; i < o.inputs.size(); ++i) {
      const int64_t n = ch.chunk_bytes[i];
      std::memcpy(dst, get(o.inputs[i]).bytes().data() + r * n, static_cast<size_t>(n));
      dst += n;
    }
  set(o.output, std::move(out));
}

void QrefStepper::exec(const CpuStepOp& o) {
  model::TensorMap in;
  for (size_t i = 0; i < o.inputs.size(); ++i) {
    const QTensor& t = tensor(o.inputs[i]);
    in[o.graph.inputs[i]] = t.is_int8() ? dequantize(get(o.inputs[i]), t) : get(o.inputs[i]);
  }
  const model::TensorMap out = model::run_graph(o.graph, std::move(in));
  for (size_t i = 0; i < o.outputs.size(); ++i) {
    const QTensor& t = tensor(o.outputs[i]);
    const model::Tensor& v = out.at(o.graph.outputs[i]);
    set(o.outputs[i], t.is_int8() ? quantize(v, t) : v);
  }
}

QrefResult run_qref(const QGraph& graph, const model::TensorMap& inputs) {
  QrefStepper r(graph, inputs);
  for (const QOp& op : graph.ops) r.step(op);
  return r.finish();
}

}  // namespace npuforge::compiler
