#include "compiler/schedule.h"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "util/error.h"

namespace npuforge::compiler {

namespace {

template <class F>
void for_each_id(QOp& op, F f) {
  std::visit(
      [&](auto& o) {
        using T = std::decay_t<decltype(o)>;
        if constexpr (std::is_same_v<T, EltwiseOp>) {
          f(o.a);
          f(o.b);
          f(o.output);
        } else if constexpr (std::is_same_v<T, ConcatOp>) {
          for (TensorId& id : o.inputs) f(id);
          f(o.output);
        } else if constexpr (std::is_same_v<T, CpuStepOp>) {
          for (TensorId& id : o.inputs) f(id);
          for (TensorId& id : o.outputs) f(id);
        } else {
          f(o.input);
          f(o.output);
        }
      },
      op);
}

std::vector<size_t> breadth_first_order(const QGraph& g) {
  const size_t n = g.ops.size();
  std::map<uint32_t, size_t> producer;
  for (size_t i = 0; i < n; ++i)
    for (TensorId id : op_outputs(g.ops[i])) producer[id.value] = i;
  std::vector<int64_t> level(n, 0);
  for (size_t i = 0; i < n; ++i)  // ops are topological already, so one forward sweep suffices
    for (TensorId id : op_inputs(g.ops[i]))
      if (auto p = producer.find(id.value); p != producer.end()) {
        if (p->second >= i) throw Error(fmt::format("{}: ops are not in a topological order", g.source));
        level[i] = std::max(level[i], level[p->second] + 1);
      }
  std::map<int64_t, std::vector<size_t>> by_level;
  for (size_t i = 0; i < n; ++i) by_level[level[i]].push_back(i);
  std::vector<size_t> order;
  Target last = Target::kNpu;
  for (auto& [lvl, ops] : by_level) {
    std::stable_partition(ops.begin(), ops.end(), [&](size_t i) { return op_target(g.ops[i]) == last; });
    order.insert(order.end(), ops.begin(), ops.end());
    if (!order.empty()) last = op_target(g.ops[order.back()]);
  }
  return order;
}

// Tensors read by ops at positions >= from (or model outputs).
std::set<uint32_t> read_from(const QGraph& g, size_t from) {
  std::set<uint32_t> r;
  for (size_t i = from; i < g.ops.size(); ++i)
    for (TensorId id : op_inputs(g.ops[i])) r.insert(id.value);
  for (const GraphIO& o : g.outputs) r.insert(o.tensor.value);
  return r;
}

CpuStepOp merge(const QGraph& g, std::vector<CpuStepOp>& run, const std::set<uint32_t>& read_later) {
  CpuStepOp m;
  m.graph = run.front().graph;
  m.graph.nodes.clear();
  m.graph.inputs.clear();
  m.graph.outputs.clear();
  m.graph.constants.clear();
  m.graph.values.clear();
  std::set<uint32_t> produced;
  for (CpuStepOp& s : run) {
    m.nodes.insert(m.nodes.end(), s.nodes.begin(), s.nodes.end());
    for (size_t i = 0; i < s.inputs.size(); ++i) {
      const TensorId id = s.inputs[i];
      if (produced.count(id.value) || std::find(m.inputs.begin(), m.inputs.end(), id) != m.inputs.end()) continue;
      m.inputs.push_back(id);
      m.graph.inputs.push_back(s.graph.inputs[i]);
    }
    for (TensorId id : s.outputs) produced.insert(id.value);
    for (auto& n : s.graph.nodes) m.graph.nodes.push_back(std::move(n));
    for (auto& [k, v] : s.graph.constants) m.graph.constants.emplace(k, std::move(v));
    for (auto& [k, v] : s.graph.values) m.graph.values.emplace(k, std::move(v));
  }
  for (CpuStepOp& s : run)
    for (size_t i = 0; i < s.outputs.size(); ++i)
      if (read_later.count(s.outputs[i].value)) {
        m.outputs.push_back(s.outputs[i]);
        m.graph.outputs.push_back(s.graph.outputs[i]);
      }
  (void)g;
  return m;
}

void merge_cpu_runs(QGraph& g) {
  std::vector<QOp> out;
  for (size_t i = 0; i < g.ops.size();) {
    if (op_target(g.ops[i]) != Target::kCpu) {
      out.push_back(std::move(g.ops[i++]));
      continue;
    }
    size_t j = i;
    while (j < g.ops.size() && op_target(g.ops[j]) == Target::kCpu) ++j;
    if (j - i == 1) {
      out.push_back(std::move(g.ops[i++]));
      continue;
    }
    const std::set<uint32_t> later = read_from(g, j);
    std::vector<CpuStepOp> run;
    for (size_t k = i; k < j; ++k) run.push_back(std::move(std::get<CpuStepOp>(g.ops[k])));
    out.push_back(merge(g, run, later));
    i = j;
  }
  g.ops = std::move(out);
}

}  // namespace

void compact_tensors(QGraph& g) {
  std::vector<bool> used(g.tensors.size(), false);
  for (QOp& op : g.ops) for_each_id(op, [&](TensorId& id) { used.at(id.value) = true; });
  for (const GraphIO& io : g.inputs) used.at(io.tensor.value) = true;
  for (const GraphIO& io : g.outputs) used.at(io.tensor.value) = true;
  std::vector<uint32_t> remap(g.tensors.size(), UINT32_MAX);
  std::vector<QTensor> kept;
  for (size_t i = 0; i < g.tensors.size(); ++i)
    if (used[i]) {
      remap[i] = static_cast<uint32_t>(kept.size());
      kept.push_back(std::move(g.tensors[i]));
    }
  g.tensors = std::move(kept);
  for (QOp& op : g.ops) for_each_id(op, [&](TensorId& id) { id.value = remap[id.value]; });
  for (GraphIO& io : g.inputs) io.tensor.value = remap[io.tensor.value];
  for (GraphIO& io : g.outputs) io.tensor.value = remap[io.tensor.value];
  for (Segment& s : g.segments) {
    for (TensorId& id : s.inputs) id.value = remap[id.value];
    for (TensorId& id : s.outputs) id.value = remap[id.value];
  }
}

void compute_segments(QGraph& g) {
  g.segments.clear();
  for (uint32_t i = 0; i < g.ops.size();) {
    Segment s;
    s.target = op_target(g.ops[i]);
    s.first = i;
    s.end = i + 1;
    if (s.target == Target::kNpu)
      while (s.end < g.ops.size() && op_target(g.ops[s.end]) == Target::kNpu) ++s.end;
    std::set<uint32_t> produced;
    for (uint32_t k = s.first; k < s.end; ++k) {
      for (TensorId id : op_inputs(g.ops[k]))
        if (!produced.count(id.value) && std::find(s.inputs.begin(), s.inputs.end(), id) == s.inputs.end())
          s.inputs.push_back(id);
      for (TensorId id : op_outputs(g.ops[k])) produced.insert(id.value);
    }
    const std::set<uint32_t> later = read_from(g, s.end);
    for (uint32_t k = s.first; k < s.end; ++k)
      for (TensorId id : op_outputs(g.ops[k]))
        if (later.count(id.value)) s.outputs.push_back(id);
    g.segments.push_back(std::move(s));
    i = g.segments.back().end;
  }
}

void schedule(QGraph& g) {
  const std::vector<size_t> order = breadth_first_order(g);
  std::vector<QOp> ops;
  ops.reserve(order.size());
  for (size_t i : order) ops.push_back(std::move(g.ops[i]));
  g.ops = std::move(ops);
  merge_cpu_runs(g);
  compact_tensors(g);
  compute_segments(g);
}

}  // namespace npuforge::compiler
