#include "compiler/partition.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include <fmt/format.h>

#include "compiler/graph_edit.h"
#include "model/op.h"
#include "util/error.h"

namespace npuforge::compiler {

namespace {

using model::Graph;
using model::Node;

// Element-wise ops a table can stand for when every other input is a scalar constant.
const std::set<std::string, std::less<>> kElementwise = {
    "Relu", "LeakyRelu", "PRelu", "Elu", "Selu", "Celu", "Sigmoid", "HardSigmoid", "HardSwish", "Tanh",
    "Softplus", "Softsign", "Clip", "Abs", "Neg", "Exp", "Log", "Sqrt", "Reciprocal", "Erf", "Floor",
    "Ceil", "Round", "Sign", "ThresholdedRelu", "Mish", "Sin", "Cos", "Add", "Sub", "Mul", "Div", "Pow",
    "Max", "Min", "Identity"};

bool cheap(GroupKind k) {
  return k == GroupKind::kAdd || k == GroupKind::kMul || k == GroupKind::kChannelAffine || k == GroupKind::kLut ||
         k == GroupKind::kClamp || k == GroupKind::kConcat || k == GroupKind::kAlias;
}

// Storage order of an NPU tensor equals the ONNX order (so a reshape moves no bytes).
bool onnx_ordered(const model::Shape& s) { return s.size() != 4 || s[1] == 1 || s[2] * s[3] == 1; }

class Partitioner {
 public:
  Partitioner(const Graph& g, const NpuLimits& limits) : g_(g), lim_(limits), in_group_(g.nodes.size(), false) {
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      for (const std::string& o : g.nodes[i].outputs)
        if (!o.empty()) producer_[o] = i;
      for (const std::string& in : g.nodes[i].inputs)
        if (!in.empty() && (readers_[in].empty() || readers_[in].back() != i)) readers_[in].push_back(i);
    }
  }

  Partition run() {
    for (size_t i = 0; i < g_.nodes.size(); ++i)
      if (!in_group_[i]) plan_affine(i);
    plan_roots();
    for (size_t i = 0; i < g_.nodes.size(); ++i)
      if (!in_group_[i] && !in_region(i)) plan_node(i);
    plan_regions();
    demote();
    std::stable_sort(groups_.begin(), groups_.end(),
                     [](const Group& a, const Group& b) { return a.nodes.back() < b.nodes.back(); });
    return Partition{std::move(groups_)};
  }

 private:
  // ---- value queries ----
  bool is_constant(const std::string& v) const { return g_.is_constant(v); }
  bool is_float(const std::string& v) const {
    const model::ValueInfo* info = g_.find_value(v);
    return info && info->dtype == model::DType::kFloat32 && info->shape_known();
  }
  const model::Shape& shape(const std::string& v) const { return value_shape(g_, v); }
  const std::vector<size_t>& readers(const std::string& v) const {
    static const std::vector<size_t> none;
    auto it = readers_.find(v);
    return it == readers_.end() ? none : it->second;
  }
  // The single node reading v, when v is not a model output and has exactly one reader.
  std::optional<size_t> sole_reader(const std::string& v) const {
    const auto& r = readers(v);
    if (r.size() != 1 || is_graph_output(g_, v)) return std::nullopt;
    return r[0];
  }
  // Every non-constant input and the outputs are float32 with known shapes.
  bool float_node(const Node& n, std::string* why) const {
    for (const std::string& in : n.inputs)
      if (!in.empty() && !is_constant(in) && !is_float(in)) {
        *why = fmt::format("input '{}' is not a float32 tensor of known shape", in);
        return false;
      }
    for (const std::string& o : n.outputs)
      if (!o.empty() && !is_float(o)) {
        *why = fmt::format("output '{}' is not a float32 tensor of known shape", o);
        return false;
      }
    return true;
  }

  void add(Group grp) {
    for (size_t i : grp.nodes) in_group_[i] = true;
    groups_.push_back(std::move(grp));
  }
  void cpu(size_t i, std::string reason) {
    Group grp;
    grp.kind = GroupKind::kCpu;
    grp.nodes = {i};
    grp.reason = std::move(reason);
    add(std::move(grp));
  }

  // ---- conv / gemm with their fused activation ----

  // Relu or Clip(0, hi) reading `v` alone: fused into its producer.
  void fuse_activation(Group& grp) {
    const std::optional<size_t> r = sole_reader(grp.output);
    if (!r || in_group_[*r]) return;
    const Node& n = g_.nodes[*r];
    if (!n.domain.empty() || n.outputs.size() != 1 || n.input(0) != grp.output) return;
    if (n.op_type == "Relu") {
      grp.relu = true;
    } else if (n.op_type == "Clip") {
      float lo = -std::numeric_limits<float>::infinity(), hi = std::numeric_limits<float>::infinity();
      if (g_.opset < 11) {
        lo = n.attr_float("min", lo);
        hi = n.attr_float("max", hi);
      } else {
        const model::Tensor* tl = n.input(1).empty() ? nullptr : g_.find_constant(n.input(1));
        const model::Tensor* th = n.input(2).empty() ? nullptr : g_.find_constant(n.input(2));
        if ((!n.input(1).empty() && !tl) || (!n.input(2).empty() && !th)) return;
        if (tl) lo = static_cast<float>(tl->real_at(0));
        if (th) hi = static_cast<float>(th->real_at(0));
      }
      if (lo != 0 || !(hi > 0)) return;
      grp.relu = true;
      if (std::isfinite(hi)) grp.clip_hi = hi;
    } else {
      return;
    }
    grp.nodes.push_back(*r);
    grp.output = n.outputs[0];
  }

  void plan_affine(size_t i) {
    const Node& n = g_.nodes[i];
    if (!n.domain.empty()) return;
    std::string why;
    if (n.op_type == "Conv") {
      if (!conv_ok(n, &why)) return cpu(i, why);
    } else if (n.op_type == "Gemm" || n.op_type == "MatMul") {
      if (!gemm_ok(n, &why)) return cpu(i, why);
    } else {
      return;
    }
    Group grp;
    grp.kind = n.op_type == "Conv" ? GroupKind::kConv : GroupKind::kGemm;
    grp.nodes = {i};
    grp.input = n.input(0);
    grp.output = n.outputs[0];
    if (n.op_type == "MatMul") fuse_bias(grp);
    fuse_activation(grp);
    grp.reason = describe_affine(n, grp);
    add(std::move(grp));
  }

  // MatMul followed by Add of a per-column constant: the bias of the GEMM.
  void fuse_bias(Group& grp) {
    const std::optional<size_t> r = sole_reader(grp.output);
    if (!r || in_group_[*r]) return;
    const Node& n = g_.nodes[*r];
    if (n.op_type != "Add" || !n.domain.empty() || n.inputs.size() != 2) return;
    const std::string& other = n.input(0) == grp.output ? n.input(1) : n.input(0);
    const model::Tensor* c = g_.find_constant(other);
    const model::Shape& ys = shape(grp.output);
    if (!c || !varies_only_along(c->shape(), ys.size(), ys.size() - 1) || shape(n.outputs[0]) != ys) return;
    if (c->numel() != 1 && c->numel() != ys.back()) return;
    grp.nodes.push_back(*r);
    grp.output = n.outputs[0];
  }

  std::string describe_affine(const Node& n, const Group& grp) const {
    std::string act = grp.clip_hi > 0 ? fmt::format(", Clip(0, {}) fused", grp.clip_hi) : grp.relu ? ", Relu fused" : "";
    if (grp.kind == GroupKind::kGemm) {
      const model::Shape& x = shape(n.input(0));
      const model::Shape& y = shape(grp.output);
      return fmt::format("gemm m={} k={} n={}{}{}", model::element_count(x) / x.back(), x.back(), y.back(),
                         grp.nodes.size() > 1 && g_.nodes[grp.nodes[1]].op_type == "Add" ? ", bias Add fused" : "", act);
    }
    std::string tmp;
    const Window w = *npu_window(g_, n, lim_, &tmp);
    const int64_t groups = n.attr_int("group", 1);
    return fmt::format("conv {}x{} stride {}x{}{}{}{}: IM2COL + GEMM", w.kernel_h, w.kernel_w, w.stride_h, w.stride_w,
                       w.dilation_h * w.dilation_w > 1 ? fmt::format(" dilation {}x{}", w.dilation_h, w.dilation_w) : "",
                       groups > 1 ? fmt::format(" groups {}", groups) : "", act);
  }

  bool conv_ok(const Node& n, std::string* why) const {
    if (!float_node(n, why)) return false;
    const model::Shape& x = shape(n.input(0));
    const model::Tensor* w = g_.find_constant(n.input(1));
    if (x.size() != 4) return *why = fmt::format("Conv on a rank-{} input: the NPU convolves 2-D images", x.size()), false;
    if (!w) return *why = "Conv with weights computed at run time", false;
    if (!n.input(2).empty() && !g_.is_constant(n.input(2))) return *why = "Conv with a run-time bias", false;
    if (x[0] != 1) return *why = fmt::format("batch {}", x[0]), false;
    const std::optional<Window> win = npu_window(g_, n, lim_, why);
    if (!win) return false;
    if (!win->pointwise() && !im2col_fits(x[3], w->shape()[1], why)) return false;
    const int64_t groups = n.attr_int("group", 1);
    const int64_t k = w->shape()[1] * w->shape()[2] * w->shape()[3];
    if (k > lim_.max_gemm_dim || w->shape()[0] / groups > lim_.max_gemm_dim)
      return *why = fmt::format("GEMM k {} or n {} above {}", k, w->shape()[0] / groups, lim_.max_gemm_dim), false;
    return true;
  }

  // IM2COL takes the image's width and a group's channels whole (the tiling splits rows and
  // groups only).
  bool im2col_fits(int64_t width, int64_t channels_per_group, std::string* why) const {
    if (width > lim_.max_image_width)
      return *why = fmt::format("image {} wide: IM2COL w above {}", width, lim_.max_image_width), false;
    if (channels_per_group > lim_.max_im2col_channels)
      return *why = fmt::format("{} input channels per group: IM2COL c above {}", channels_per_group,
                                lim_.max_im2col_channels),
             false;
    return true;
  }

  bool gemm_ok(const Node& n, std::string* why) const {
    if (!float_node(n, why)) return false;
    const model::Shape& x = shape(n.input(0));
    const model::Tensor* b = g_.find_constant(n.input(1));
    if (!b) return *why = fmt::format("{} of two activations (B is computed at run time)", n.op_type), false;
    if (b->rank() != 2) return *why = fmt::format("{} with a rank-{} B", n.op_type, b->rank()), false;
    if (x.size() < 2) return *why = fmt::format("{} of a rank-{} A", n.op_type, x.size()), false;
    if (!onnx_ordered(x) || !onnx_ordered(shape(n.outputs[0])))
      return *why = fmt::format("{} reading or writing an image ({}): the NPU holds it HWC", n.op_type, model::shape_str(x)), false;
    if (n.op_type == "Gemm") {
      if (n.attr_int("transA", 0) != 0) return *why = "Gemm with transA", false;
      if (!n.input(2).empty()) {
        const model::Tensor* c = g_.find_constant(n.input(2));
        if (!c || !varies_only_along(c->shape(), 2, 1)) return *why = "Gemm with a C that is not a per-column constant", false;
      }
    }
    const int64_t k = x.back(), nn = shape(n.outputs[0]).back();
    if (k > lim_.max_gemm_dim || nn > lim_.max_gemm_dim)
      return *why = fmt::format("GEMM k {} or n {} above {}", k, nn, lim_.max_gemm_dim), false;
    return true;
  }

  // ---- element-wise regions (lut) ----

  bool in_region(size_t i) const {
    const Node& n = g_.nodes[i];
    return n.outputs.size() == 1 && root_.count(n.outputs[0]) && root_.at(n.outputs[0]) != n.outputs[0];
  }

  std::string root_of(const std::string& v) const {
    auto it = root_.find(v);
    return it == root_.end() ? v : it->second;
  }

  void plan_roots() {
    for (size_t i = 0; i < g_.nodes.size(); ++i) {
      const Node& n = g_.nodes[i];
      if (in_group_[i] || !n.domain.empty() || n.outputs.size() != 1 || !kElementwise.count(n.op_type)) continue;
      if (!model::builtin_ops().find("", n.op_type)) continue;
      const std::string& y = n.outputs[0];
      if (!is_float(y)) continue;
      std::string root;
      bool ok = true;
      for (const std::string& in : n.inputs) {
        if (in.empty()) continue;
        if (const model::Tensor* c = g_.find_constant(in)) {
          ok = ok && c->numel() == 1;
          continue;
        }
        const std::string r = root_of(in);
        ok = ok && (root.empty() || root == r);
        root = r;
      }
      if (!ok || root.empty() || !is_float(root) || shape(root) != shape(y)) continue;
      root_[y] = root;
    }
  }

  void plan_regions() {
    std::map<std::string, std::vector<size_t>> regions;  // root -> nodes
    for (size_t i = 0; i < g_.nodes.size(); ++i)
      if (!in_group_[i] && in_region(i)) regions[root_.at(g_.nodes[i].outputs[0])].push_back(i);
    for (const auto& [root, nodes] : regions) {
      const std::set<size_t> members(nodes.begin(), nodes.end());
      for (size_t i : nodes) {
        const std::string& v = g_.nodes[i].outputs[0];
        bool leaves = is_graph_output(g_, v);
        for (size_t r : readers(v)) leaves = leaves || !members.count(r);
        if (!leaves) continue;
        Group grp;
        grp.input = root;
        grp.output = v;
        grp.nodes = ancestors(i, members);
        const Node& n = g_.nodes[i];
        if (grp.nodes.size() == 1 && n.op_type == "Relu") {
          grp.kind = GroupKind::kClamp;
          grp.reason = "Relu: eltwise relu (no table)";
        } else {
          grp.kind = GroupKind::kLut;
          std::string ops;
          for (size_t j : grp.nodes) ops += (ops.empty() ? "" : "+") + g_.nodes[j].op_type;
          grp.reason = fmt::format("lut: {} of '{}' as one 256-entry table", ops, root);
        }
        add(std::move(grp));
      }
    }
  }

  // Nodes of the region that `i` depends on (itself included), ascending, i last.
  std::vector<size_t> ancestors(size_t i, const std::set<size_t>& members) const {
    std::set<size_t> seen{i};
    std::vector<size_t> stack{i};
    while (!stack.empty()) {
      const size_t j = stack.back();
      stack.pop_back();
      for (const std::string& in : g_.nodes[j].inputs) {
        auto p = producer_.find(in);
        if (p != producer_.end() && members.count(p->second) && seen.insert(p->second).second) stack.push_back(p->second);
      }
    }
    std::vector<size_t> out(seen.begin(), seen.end());
    return out;
  }

  // ---- everything else ----

  void plan_node(size_t i) {
    const Node& n = g_.nodes[i];
    std::string why;
    if (!n.domain.empty()) return cpu(i, fmt::format("{} ({} domain): no NPU instruction", n.op_type, n.domain));
    if (!float_node(n, &why)) return cpu(i, why);
    const std::string& op = n.op_type;
    Group grp;
    grp.nodes = {i};
    grp.output = n.outputs.empty() ? "" : n.outputs[0];
    if (op == "Add" || op == "Mul" || op == "Sub" || op == "Div") {
      if (!binary(n, grp, &why)) return cpu(i, why);
    } else if (op == "MaxPool" || op == "AveragePool" || op == "GlobalAveragePool" || op == "GlobalMaxPool") {
      if (!pool(n, grp, &why)) return cpu(i, why);
    } else if (op == "Concat") {
      if (!concat(n, grp, &why)) return cpu(i, why);
    } else if (op == "Reshape" || op == "Flatten" || op == "Squeeze" || op == "Unsqueeze") {
      if (!alias(n, grp, &why)) return cpu(i, why);
    } else {
      return cpu(i, fmt::format("{}: no NPU instruction", op));
    }
    add(std::move(grp));
  }

  // Mul of an image [1, C, H, W] by a [1, C, 1, 1] activation (squeeze-and-excite), either order.
  bool channel_broadcast(const Node& n) const {
    if (n.op_type != "Mul" || !lim_.broadcast_mul) return false;
    const model::Shape& y = shape(n.outputs[0]);
    if (y.size() != 4 || y[0] != 1) return false;
    const model::Shape vec{1, y[1], 1, 1};
    const model::Shape &a = shape(n.input(0)), &b = shape(n.input(1));
    return a != b && ((a == y && b == vec) || (b == y && a == vec));
  }

  bool binary(const Node& n, Group& grp, std::string* why) const {
    const std::string &a = n.input(0), &b = n.input(1);
    const bool ca = is_constant(a), cb = is_constant(b);
    const model::Shape& y = shape(n.outputs[0]);
    if (!ca && !cb) {
      if (channel_broadcast(n)) {
        grp.kind = GroupKind::kMul;
        grp.reason = fmt::format("eltwise mul of {} by a per-channel vector (broadcast)", model::shape_str(y));
        return true;
      }
      if (shape(a) != shape(b))
        return *why = fmt::format("{} broadcasting {} and {}", n.op_type, model::shape_str(shape(a)), model::shape_str(shape(b))), false;
      if (n.op_type != "Add" && n.op_type != "Mul") return *why = fmt::format("{} of two activations", n.op_type), false;
      grp.kind = n.op_type == "Add" ? GroupKind::kAdd : GroupKind::kMul;
      grp.reason = fmt::format("eltwise {} of two {} tensors", n.op_type == "Add" ? "add" : "mul", model::shape_str(y));
      return true;
    }
    const std::string& x = ca ? b : a;
    const model::Tensor& c = *g_.find_constant(ca ? a : b);
    if (ca && (n.op_type == "Sub" || n.op_type == "Div"))
      return *why = fmt::format("{} of a constant by an activation with a per-channel constant", n.op_type), false;
    if (y.size() == 4 && shape(x) == y && varies_only_along(c.shape(), 4, 1) && c.numel() == y[1]) {
      grp.kind = GroupKind::kChannelAffine;
      grp.input = x;
      grp.reason = fmt::format("{} by a per-channel constant: 1x1 depthwise conv", n.op_type);
      return true;
    }
    return *why = fmt::format("{} broadcasting a constant of shape {} over {}", n.op_type, model::shape_str(c.shape()),
                              model::shape_str(y)), false;
  }

  bool pool(const Node& n, Group& grp, std::string* why) const {
    const model::Shape& x = shape(n.input(0));
    if (x.size() != 4) return *why = fmt::format("{} on a rank-{} input: the NPU pools 2-D images", n.op_type, x.size()), false;
    if (x[0] != 1) return *why = fmt::format("batch {}", x[0]), false;
    if (n.outputs.size() > 1 && !n.outputs[1].empty()) return *why = "MaxPool with an indices output", false;
    const bool global = n.op_type.rfind("Global", 0) == 0;
    const bool max = n.op_type.find("Max") != std::string::npos;
    if (global) {
      if (x[2] > lim_.max_pool_window || x[3] > lim_.max_pool_window)
        return *why = fmt::format("{} over {}x{}: window above {}", n.op_type, x[2], x[3], lim_.max_pool_window), false;
    } else {
      if (max && n.attr_int("storage_order", 0) != 0) return *why = "MaxPool with storage_order 1", false;
      if (!npu_window(g_, n, lim_, why)) return false;
      if (x[3] > lim_.max_image_width)
        return *why = fmt::format("{} over an image {} wide: POOL w above {}", n.op_type, x[3], lim_.max_image_width),
               false;
    }
    grp.kind = max ? GroupKind::kMaxPool : GroupKind::kAvgPool;
    grp.reason = fmt::format("pool {} {}", max ? "max" : "avg", global ? "over the whole image" : "");
    return true;
  }

  bool concat(const Node& n, Group& grp, std::string* why) const {
    const size_t rank = shape(n.outputs[0]).size();
    for (const std::string& in : n.inputs)
      if (in.empty() || is_constant(in) || shape(in).size() != rank)
        return *why = "Concat with a constant or missing input", false;
    if (rank == 4 && shape(n.outputs[0])[0] != 1) return *why = "Concat of a batch", false;
    grp.kind = GroupKind::kConcat;
    grp.reason = fmt::format("concat of {} inputs (strided copies)", n.inputs.size());
    return true;
  }

  bool alias(const Node& n, Group& grp, std::string* why) const {
    const model::Shape& x = shape(n.input(0));
    const model::Shape& y = shape(n.outputs[0]);
    if (!onnx_ordered(x) || !onnx_ordered(y))
      return *why = fmt::format("{} {} -> {} moves bytes in the HWC layout", n.op_type, model::shape_str(x), model::shape_str(y)), false;
    grp.kind = GroupKind::kAlias;
    grp.input = n.input(0);
    grp.reason = fmt::format("{} {} -> {}: same bytes (alias)", n.op_type, model::shape_str(x), model::shape_str(y));
    return true;
  }

  // ---- cheap NPU groups surrounded by CPU work go to the CPU ----

  std::vector<std::string> group_inputs(const Group& grp) const {
    if (grp.kind == GroupKind::kLut || grp.kind == GroupKind::kClamp) return {grp.input};
    const std::set<size_t> members(grp.nodes.begin(), grp.nodes.end());
    std::vector<std::string> out;
    for (size_t i : grp.nodes)
      for (const std::string& in : g_.nodes[i].inputs) {
        if (in.empty() || is_constant(in)) continue;
        auto p = producer_.find(in);
        if (p != producer_.end() && members.count(p->second)) continue;
        out.push_back(in);
      }
    return out;
  }

  std::vector<std::string> group_outputs(const Group& grp) const {
    if (grp.kind != GroupKind::kCpu) return {grp.output};
    std::vector<std::string> out;
    for (const std::string& o : g_.nodes[grp.nodes[0]].outputs)
      if (!o.empty()) out.push_back(o);
    return out;
  }

  void demote() {
    for (bool changed = true; changed;) {
      changed = false;
      std::map<std::string, Target> produced_on;  // value -> target of its producing group
      std::map<std::string, std::vector<Target>> read_on;
      for (const Group& grp : groups_) {
        for (const std::string& o : group_outputs(grp)) produced_on[o] = grp.target();
        for (const std::string& in : group_inputs(grp)) read_on[in].push_back(grp.target());
      }
      std::set<size_t> cpu_nodes;
      for (const Group& grp : groups_)
        if (grp.kind == GroupKind::kCpu) cpu_nodes.insert(grp.nodes[0]);
      std::vector<Group> next;
      for (Group& grp : groups_) {
        bool surrounded = cheap(grp.kind);
        for (const std::string& in : group_inputs(grp))
          surrounded = surrounded && (!produced_on.count(in) || produced_on[in] == Target::kCpu);
        for (const std::string& o : group_outputs(grp))
          for (Target t : read_on[o]) surrounded = surrounded && t == Target::kCpu;
        if (!surrounded) {
          next.push_back(std::move(grp));
          continue;
        }
        changed = true;
        for (size_t i : grp.nodes) {
          if (!cpu_nodes.insert(i).second) continue;
          Group c;
          c.kind = GroupKind::kCpu;
          c.nodes = {i};
          c.reason = fmt::format("{}: NPU-capable ({}) but between CPU work only", g_.nodes[i].op_type,
                                 group_kind_name(grp.kind));
          next.push_back(std::move(c));
        }
      }
      groups_ = std::move(next);
    }
  }

  const Graph& g_;
  const NpuLimits& lim_;
  std::vector<bool> in_group_;
  std::map<std::string, size_t, std::less<>> producer_;
  std::map<std::string, std::vector<size_t>, std::less<>> readers_;
  std::map<std::string, std::string, std::less<>> root_;
  std::vector<Group> groups_;
};

}  // namespace

std::string_view group_kind_name(GroupKind k) {
  switch (k) {
    case GroupKind::kConv: return "conv";
    case GroupKind::kGemm: return "gemm";
    case GroupKind::kAdd: return "add";
    case GroupKind::kMul: return "mul";
    case GroupKind::kChannelAffine: return "channel_affine";
    case GroupKind::kLut: return "lut";
    case GroupKind::kClamp: return "clamp";
    case GroupKind::kMaxPool: return "maxpool";
    case GroupKind::kAvgPool: return "avgpool";
    case GroupKind::kConcat: return "concat";
    case GroupKind::kAlias: return "alias";
    case GroupKind::kCpu: return "cpu";
  }
  return "?";
}

Partition partition(const Graph& graph, const NpuLimits& limits) { return Partitioner(graph, limits).run(); }

}  // namespace npuforge::compiler
