#include "compiler/prequant.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "compiler/graph_edit.h"
#include "model/infer.h"
#include "model/op.h"
#include "util/error.h"

namespace npuforge::compiler {

namespace {

using model::DType;
using model::Graph;
using model::Node;
using model::Tensor;

// The real-valued stand-in of an integer value: int = real / scale + zero_point.
struct Twin {
  std::string real;      // float value name
  float scale = 1;
  int64_t zero_point = 0;
  DType dtype = DType::kUInt8;
  bool accumulator = false;  // an int32 sum (scale 1, zero point 0)
};

std::pair<int64_t, int64_t> int_range(DType t) {
  switch (t) {
    case DType::kUInt8: return {0, 255};
    case DType::kInt8: return {-128, 127};
    default: return {INT32_MIN, INT32_MAX};
  }
}

bool is_int_type(DType t) { return t == DType::kUInt8 || t == DType::kInt8 || t == DType::kInt32; }

class Dequantizer {
 public:
  explicit Dequantizer(Graph& g) : g_(g) {}

  QuantHints run() {
    hints_.pre_quantized = is_pre_quantized(g_);
    for (const Node& n : g_.nodes) visit(n);
    finish_outputs();
    g_.nodes = std::move(out_);
    // Values are re-inferred from the inputs; old integer constants go.
    std::map<std::string, model::ValueInfo, std::less<>> kept;
    for (const std::string& in : g_.inputs)
      if (const model::ValueInfo* v = g_.find_value(in)) kept[in] = *v;
    g_.values = std::move(kept);
    model::InferOptions opts;
    opts.keep_ops = {"DequantizeLinear"};
    model::infer_shapes(g_, opts);
    model::remove_unused(g_);
    for (auto it = hints_.weights.begin(); it != hints_.weights.end();)
      it = g_.constants.count(it->first) ? std::next(it) : hints_.weights.erase(it);
    return std::move(hints_);
  }

 private:
  // ---- helpers ----
  const Tensor* constant(const std::string& name) const { return name.empty() ? nullptr : g_.find_constant(name); }
  std::string resolve(const std::string& name) const {
    auto it = alias_.find(name);
    return it == alias_.end() ? name : it->second;
  }
  const Twin* twin(const std::string& name) const {
    auto it = twins_.find(name);
    return it == twins_.end() ? nullptr : &it->second;
  }
  std::string new_constant(const std::string& base, Tensor t) {
    std::string name = fresh(base);
    g_.constants[name] = std::move(t);
    return name;
  }
  std::string fresh(const std::string& base) {
    std::string name = base;
    for (int i = 1; taken_.count(name) || g_.constants.count(name) || g_.values.count(name); ++i)
      name = fmt::format("{}~{}", base, i);
    taken_.insert(name);
    return name;
  }
  void emit(Node n) {
    for (const std::string& o : n.outputs) taken_.insert(o);
    out_.push_back(std::move(n));
  }
  void add_range(const std::string& value, const Twin& t, const std::string& node) {
    const auto [qmin, qmax] = int_range(t.dtype);
    RangeHint r{static_cast<float>((qmin - t.zero_point) * static_cast<double>(t.scale)),
                static_cast<float>((qmax - t.zero_point) * static_cast<double>(t.scale)), node};
    auto it = hints_.ranges.find(value);
    const auto width = [](const RangeHint& h) { return std::max(std::fabs(h.lo), std::fabs(h.hi)); };
    if (it == hints_.ranges.end() || width(r) < width(it->second)) hints_.ranges[value] = r;
  }

  // The integer value `name` as the model has it: materialized by a QuantizeLinear (or, for an
  // accumulator, Round + Cast) of its real value once, at the first reader that needs it.
  std::string materialize(const std::string& name) {
    const Twin* t = twin(name);
    if (!t) return resolve(name);
    if (auto it = materialized_.find(name); it != materialized_.end()) return it->second;
    const std::string out = taken_.count(name) ? fresh(name + "~q") : (taken_.insert(name), name);
    if (t->accumulator) {
      const std::string rounded = fresh(name + "~rounded");
      emit(Node{name + "~round", "Round", "", {t->real}, {rounded}, {}});
      Node cast{name + "~cast", "Cast", "", {rounded}, {out}, {}};
      cast.attributes["to"] = model::Attribute{int64_t{6}};  // INT32
      emit(std::move(cast));
    } else {
      const std::string s = new_constant(name + "~scale", Tensor::scalar<float>(t->scale));
      Tensor zp = t->dtype == DType::kInt8 ? Tensor::scalar<int8_t>(static_cast<int8_t>(t->zero_point))
                                           : Tensor::scalar<uint8_t>(static_cast<uint8_t>(t->zero_point));
      const std::string z = new_constant(name + "~zero_point", std::move(zp));
      emit(Node{name + "~quantize", "QuantizeLinear", "", {t->real, s, z}, {out}, {}});
    }
    materialized_[name] = out;
    return out;
  }

  // Keeps `n` as it is, reading materialized integer values.
  void keep(Node n) {
    for (std::string& in : n.inputs)
      if (!in.empty()) in = materialize(in);
    emit(std::move(n));
  }

  // Evaluates `n` on constant inputs with the model's own op.
  std::vector<Tensor> evaluate(const Node& n) const {
    const model::OpDef& def = model::op_for(n, g_.opset);
    model::RunContext ctx{n, g_.opset, {}};
    for (const std::string& in : n.inputs) ctx.inputs.push_back(constant(in));
    return def.run(ctx);
  }

  // Records `t` as the real stand-in of the integer value `name`, with its range. A zero point
  // at the bottom of the range clamps negatives to 0, which symmetric int8 would keep: a Relu
  // says so in the float graph (and fuses into a producing Conv).
  void set_twin(const std::string& name, Twin t, const std::string& node) {
    if (!t.accumulator && t.zero_point == int_range(t.dtype).first && !produced_by_relu(t.real)) {
      const std::string x = t.real;
      t.real = fresh(x + "~relu");
      emit(Node{node + "~relu", "Relu", "", {x}, {t.real}, {}});
    }
    if (!t.accumulator) add_range(t.real, t, node);
    twins_[name] = t;
  }

  bool produced_by_relu(const std::string& v) const {
    for (const Node& n : out_)
      if (!n.outputs.empty() && n.outputs[0] == v) return n.op_type == "Relu";
    return false;
  }

  // ---- per op ----
  void visit(const Node& n0) {
    Node n = n0;
    for (std::string& in : n.inputs)
      if (!in.empty() && !twin(in)) in = resolve(in);
    if (!n.domain.empty()) return keep(std::move(n));
    const std::string& op = n.op_type;
    if (op == "DequantizeLinear") return dequantize(std::move(n));
    if (op == "QuantizeLinear") return quantize(std::move(n));
    if (op == "Cast") return cast(std::move(n));
    if (op == "QLinearConv" || op == "QLinearMatMul") return qlinear(std::move(n));
    if (op == "ConvInteger" || op == "MatMulInteger") return integer_op(std::move(n));
    if (op == "Add" || op == "Sub" || op == "Mul") return accumulator_arith(std::move(n));
    if (op == "MaxPool" || op == "Reshape" || op == "Flatten" || op == "Squeeze" || op == "Unsqueeze" ||
        op == "Transpose" || op == "Identity")
      return pass_through(std::move(n));
    keep(std::move(n));
  }

  void dequantize(Node n) {
    const std::string& x = n.input(0);
    if (constant(x)) {
      Tensor value = evaluate(n).at(0);
      const std::string name = n.outputs[0];
      g_.constants[name] = std::move(value);
      taken_.insert(name);
      weight_hint(name, *constant(x), *constant(n.input(1)), constant(n.input(2)), n.attr_int("axis", 1));
      return;
    }
    const Twin* t = twin(x);
    const Tensor* s = constant(n.input(1));
    const Tensor* z = constant(n.input(2));
    if (t && !t->accumulator && s && s->numel() == 1 && s->real_at(0) == t->scale &&
        (z ? z->numel() == 1 && z->int_at(0) == t->zero_point : t->zero_point == 0)) {
      alias_[n.outputs[0]] = t->real;
      return;
    }
    keep(std::move(n));
  }

  void weight_hint(const std::string& name, const Tensor& q, const Tensor& scale, const Tensor* zp, int64_t axis) {
    if (q.dtype() != DType::kInt8 && q.dtype() != DType::kUInt8) return;
    if (zp)
      for (int64_t i = 0; i < zp->numel(); ++i)
        if (zp->int_at(i) != 0) return;  // asymmetric: re-quantized symmetric later
    WeightHint h;
    h.axis = scale.numel() == 1 ? -1 : (axis < 0 ? axis + static_cast<int64_t>(q.rank()) : axis);
    for (int64_t i = 0; i < scale.numel(); ++i) h.scales.push_back(static_cast<float>(scale.real_at(i)));
    hints_.weights[name] = std::move(h);
  }

  void quantize(Node n) {
    const std::string& x = n.input(0);
    const Tensor* s = constant(n.input(1));
    const Tensor* z = constant(n.input(2));
    if (twin(x) || constant(x) || !s || s->numel() != 1 || (z && z->numel() != 1) || n.outputs.size() != 1)
      return keep(std::move(n));
    Twin t;
    t.real = x;
    t.scale = static_cast<float>(s->real_at(0));
    t.zero_point = z ? z->int_at(0) : 0;
    t.dtype = z ? z->dtype() : DType::kUInt8;
    if (t.dtype != DType::kUInt8 && t.dtype != DType::kInt8) return keep(std::move(n));
    set_twin(n.outputs[0], t, n.name);
  }

  void cast(Node n) {
    const Twin* t = twin(n.input(0));
    if (!t) return keep(std::move(n));
    const int64_t to = n.attr_int("to");
    const int64_t same = t->dtype == DType::kUInt8 ? 2 : t->dtype == DType::kInt8 ? 3 : 6;  // ONNX type codes
    if (to == same) {
      twins_[n.outputs[0]] = *t;
      return;
    }
    if (to == 1 && t->accumulator) {  // int32 sum -> float: the real value itself
      alias_[n.outputs[0]] = t->real;
      return;
    }
    keep(std::move(n));
  }

  // Shape/order ops and MaxPool commute with dequantization (scale > 0): run them on the real
  // value; the output is quantized the same way.
  void pass_through(Node n) {
    const Twin* t = twin(n.input(0));
    if (!t || t->accumulator || n.outputs.size() != 1) return keep(std::move(n));
    for (size_t i = 1; i < n.inputs.size(); ++i)
      if (!n.inputs[i].empty() && twin(n.inputs[i])) return keep(std::move(n));
    Twin out = *t;
    n.inputs[0] = t->real;
    const std::string y = n.outputs[0];
    out.real = fresh(y + "~real");
    n.outputs[0] = out.real;
    const std::string name = n.name;
    emit(std::move(n));
    if (!out.accumulator) add_range(out.real, out, name);
    twins_[y] = out;
  }

  // Add/Sub/Mul over int32 sums and integer constants: the same arithmetic on the real sums.
  void accumulator_arith(Node n) {
    bool any = false;
    for (const std::string& in : n.inputs) {
      const Twin* t = twin(in);
      if (t && !t->accumulator) return keep(std::move(n));
      if (!t && !(constant(in) && is_int_type(constant(in)->dtype()))) return keep(std::move(n));
      any = any || t;
    }
    if (!any) return keep(std::move(n));
    for (std::string& in : n.inputs) {
      if (const Twin* t = twin(in)) in = t->real;
      else in = new_constant(in + "~float", to_float(*constant(in)));
    }
    const std::string y = n.outputs[0];
    Twin out{fresh(y + "~real"), 1, 0, DType::kInt32, true};
    n.outputs[0] = out.real;
    emit(std::move(n));
    twins_[y] = out;
  }

  // The input twin of an integer op, when its zero point is `zp` (the op's); else nullopt.
  std::optional<Twin> input_twin(const std::string& name, int64_t zp) const {
    const Twin* t = twin(name);
    if (!t || t->accumulator || t->zero_point != zp) return std::nullopt;
    return *t;
  }

  static int64_t scalar_int(const Tensor* t) { return t ? t->int_at(0) : 0; }

  // (w - zp) * scale, per output channel along `axis` of w (zp and scale: 1 or per channel).
  static Tensor dequantize_weights(const Tensor& w, const Tensor* zp, const std::vector<double>& scale, size_t axis) {
    Tensor out(DType::kFloat32, w.shape());
    int64_t inner = 1;
    for (size_t d = axis + 1; d < w.rank(); ++d) inner *= w.shape()[d];
    const int64_t channels = w.shape()[axis];
    auto v = out.values<float>();
    for (int64_t i = 0; i < w.numel(); ++i) {
      const int64_t c = (i / inner) % channels;
      const int64_t z = zp ? zp->int_at(zp->numel() == 1 ? 0 : c) : 0;
      v[i] = static_cast<float>((w.int_at(i) - z) * scale[scale.size() == 1 ? 0 : static_cast<size_t>(c)]);
    }
    return out;
  }

  bool all_zero(const Tensor* t) const {
    if (!t) return true;
    for (int64_t i = 0; i < t->numel(); ++i)
      if (t->int_at(i) != 0) return false;
    return true;
  }

  void hint_for(const std::string& name, const std::vector<double>& scale, int64_t axis) {
    WeightHint h;
    h.axis = scale.size() == 1 ? -1 : axis;
    for (double s : scale) h.scales.push_back(static_cast<float>(s));
    hints_.weights[name] = std::move(h);
  }

  void qlinear(Node n) {
    const bool conv = n.op_type == "QLinearConv";
    // Inputs: a, a_scale, a_zp, b, b_scale, b_zp, y_scale, y_zp [, bias].
    const Tensor* as = constant(n.input(1));
    const Tensor* w = constant(n.input(3));
    const Tensor* ws = constant(n.input(4));
    const Tensor* wz = constant(n.input(5));
    const Tensor* ys = constant(n.input(6));
    const Tensor* yz = constant(n.input(7));
    const Tensor* bias = conv ? constant(n.input(8)) : nullptr;
    if (!as || as->numel() != 1 || !w || !ws || !ys || ys->numel() != 1 || !yz || yz->numel() != 1 ||
        (conv && !n.input(8).empty() && !bias))
      return keep(std::move(n));
    const std::optional<Twin> x = input_twin(n.input(0), scalar_int(constant(n.input(2))));
    if (!x || x->scale != static_cast<float>(as->real_at(0)) || !constant(n.input(2))) return keep(std::move(n));
    const size_t axis = conv ? 0 : 1;
    if (w->rank() <= axis) return keep(std::move(n));
    std::vector<double> wscale;
    for (int64_t i = 0; i < ws->numel(); ++i) wscale.push_back(ws->real_at(i));
    const std::string wname = new_constant(n.name + ".weight", dequantize_weights(*w, wz, wscale, axis));
    if (all_zero(wz)) hint_for(wname, wscale, static_cast<int64_t>(axis));
    Node f{n.name, conv ? "Conv" : "MatMul", "", {x->real, wname}, {}, conv ? n.attributes : decltype(n.attributes){}};
    if (bias) {
      Tensor b(DType::kFloat32, {bias->numel()});
      for (int64_t c = 0; c < bias->numel(); ++c)
        b.values<float>()[c] = static_cast<float>(bias->int_at(c) * static_cast<double>(x->scale) *
                                                  wscale[wscale.size() == 1 ? 0 : static_cast<size_t>(c)]);
      f.inputs.push_back(new_constant(n.name + ".bias", std::move(b)));
    }
    const std::string y = n.outputs[0];
    Twin out{fresh(y + "~real"), static_cast<float>(ys->real_at(0)), yz->int_at(0), yz->dtype(), false};
    f.outputs = {out.real};
    emit(std::move(f));
    set_twin(y, out, n.name);
  }

  void integer_op(Node n) {
    const bool conv = n.op_type == "ConvInteger";
    const Tensor* w = constant(n.input(1));
    const Tensor* xz = constant(n.input(2));
    const Tensor* wz = constant(n.input(3));
    if (!w || (!n.input(2).empty() && (!xz || xz->numel() != 1)) || (!n.input(3).empty() && !wz))
      return keep(std::move(n));
    const std::optional<Twin> x = input_twin(n.input(0), scalar_int(xz));
    const size_t axis = conv ? 0 : 1;
    if (!x || w->rank() <= axis) return keep(std::move(n));
    // acc = sum (xq - xz)(w - wz) = sum real_x * (w - wz) / x_scale.
    const std::vector<double> wscale{1.0 / x->scale};
    const std::string wname = new_constant(n.name + ".weight", dequantize_weights(*w, wz, wscale, axis));
    if (all_zero(wz)) hint_for(wname, wscale, static_cast<int64_t>(axis));
    Node f{n.name, conv ? "Conv" : "MatMul", "", {x->real, wname}, {}, conv ? n.attributes : decltype(n.attributes){}};
    const std::string y = n.outputs[0];
    Twin out{fresh(y + "~real"), 1, 0, DType::kInt32, true};
    f.outputs = {out.real};
    emit(std::move(f));
    twins_[y] = out;
  }

  // Graph outputs: integer ones are materialized under their own name; aliased float ones
  // get an Identity (the clean-up pass renames the producer instead).
  void finish_outputs() {
    for (const std::string& o : g_.outputs) {
      if (twin(o)) {
        materialize(o);
      } else if (auto it = alias_.find(o); it != alias_.end()) {
        emit(Node{o + "~output", "Identity", "", {it->second}, {o}, {}});
      }
    }
  }

  Graph& g_;
  QuantHints hints_;
  std::vector<Node> out_;
  std::map<std::string, Twin, std::less<>> twins_;
  std::map<std::string, std::string, std::less<>> alias_;
  std::map<std::string, std::string, std::less<>> materialized_;
  std::set<std::string, std::less<>> taken_;
};

}  // namespace

bool is_pre_quantized(const Graph& graph) {
  static const std::set<std::string, std::less<>> ops = {"QuantizeLinear", "DequantizeLinear", "QLinearConv",
                                                         "QLinearMatMul", "ConvInteger", "MatMulInteger"};
  for (const Node& n : graph.nodes)
    if (n.domain.empty() && ops.count(n.op_type)) return true;
  return false;
}

QuantHints dequantize_model(Graph& graph) {
  if (!is_pre_quantized(graph)) return {};
  return Dequantizer(graph).run();
}

}  // namespace npuforge::compiler
