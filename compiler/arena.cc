#include "compiler/arena.h"

#include <algorithm>
#include <map>

#include <fmt/core.h>

#include "planner/plan_check.h"
#include "planner/plan_io.h"
#include "planner/planner.h"
#include "util/error.h"

namespace npuforge::compiler {
namespace {

uint64_t pad_to(uint64_t bytes, uint64_t unit) { return (bytes + unit - 1) / unit * unit; }

void check(ArenaPlan& plan, const planner::PlanProblem& problem) {
  const planner::PlanCheckResult r = planner::check_plan(problem, plan.offsets, std::nullopt);
  plan.clean = r.ok();
  plan.verdict = r.report();
  plan.peak = r.peak.value;
  plan.lower_bound = r.lower_bound.value;
}

}  // namespace

std::string_view region_name(Region r) {
  switch (r) {
    case Region::kNone: return "none";
    case Region::kWeights: return "weights";
    case Region::kInput: return "input";
    case Region::kArena: return "arena";
    case Region::kOutput: return "output";
  }
  return "?";
}

Lifetimes derive_lifetimes(const QGraph& g, uint64_t alignment) {
  const size_t n = g.tensors.size();
  Lifetimes l;
  l.root.resize(n);
  for (size_t t = 0; t < n; ++t) l.root[t] = TensorId{static_cast<uint32_t>(t)};
  l.first_step.assign(n, -1);
  l.last_step.assign(n, -1);
  std::vector<bool> produced(n, false);
  for (size_t i = 0; i < g.ops.size(); ++i) {
    const QOp& op = g.ops[i];
    for (TensorId in : op_inputs(op)) {
      int64_t& last = l.last_step[l.root[in.value].value];
      last = std::max(last, static_cast<int64_t>(i));
    }
    if (const auto* alias = std::get_if<AliasOp>(&op)) {
      l.root[alias->output.value] = l.root[alias->input.value];
      produced[alias->output.value] = true;
      continue;
    }
    for (TensorId out : op_outputs(op)) {
      l.first_step[out.value] = static_cast<int64_t>(i);
      produced[out.value] = true;
    }
  }
  l.region.assign(n, Region::kNone);
  std::vector<Region> group(n, Region::kNone);
  for (const GraphIO& io : g.inputs) group[l.root[io.tensor.value].value] = Region::kInput;
  for (const GraphIO& io : g.outputs) {
    Region& r = group[l.root[io.tensor.value].value];
    if (r != Region::kInput) r = Region::kOutput;
  }
  for (size_t t = 0; t < n; ++t) {
    const TensorId root = l.root[t];
    if (group[root.value] == Region::kNone && (produced[root.value] || produced[t])) group[root.value] = Region::kArena;
  }
  l.arena_of.assign(n, -1);
  std::vector<int64_t> arena_index(n, -1);
  for (size_t t = 0; t < n; ++t) {
    const TensorId root = l.root[t];
    l.region[t] = group[root.value];
    if (root.value != t) continue;
    if (group[t] == Region::kInput) l.input_roots.push_back(root);
    if (group[t] == Region::kOutput) l.output_roots.push_back(root);
  }
  // Arena groups in order of production (ties: tensor order), so plans read naturally.
  std::vector<uint32_t> roots;
  for (size_t t = 0; t < n; ++t)
    if (l.root[t].value == t && group[t] == Region::kArena) roots.push_back(static_cast<uint32_t>(t));
  std::stable_sort(roots.begin(), roots.end(),
                   [&](uint32_t a, uint32_t b) { return l.first_step[a] < l.first_step[b]; });
  for (uint32_t r : roots) {
    ArenaTensor a;
    a.root = TensorId{r};
    a.name = g.tensors[r].name;
    a.bytes = pad_to(static_cast<uint64_t>(std::max<int64_t>(1, g.tensors[r].bytes())), alignment);
    const int64_t first = l.first_step[r];
    a.life = {first, std::max(l.last_step[r], first) + 1};
    arena_index[r] = static_cast<int64_t>(l.arena.size());
    l.arena.push_back(std::move(a));
  }
  for (size_t t = 0; t < n; ++t) l.arena_of[t] = arena_index[l.root[t].value];
  return l;
}

planner::PlanProblem arena_problem(const Lifetimes& l, uint64_t alignment) {
  planner::PlanProblem p;
  for (const ArenaTensor& a : l.arena) {
    planner::PlanBuffer b;
    b.id = a.name;
    b.lifespan = a.life;
    b.size = Bytes{a.bytes};
    b.alignment = Bytes{alignment};
    p.buffers.push_back(std::move(b));
  }
  return p;
}

ArenaPlan plan_arena(const planner::PlanProblem& problem, const std::string& algo, double time_budget_s) {
  planner::PlannerOptions opt;
  opt.time_limit_s = time_budget_s;
  ArenaPlan plan;
  const auto& names = planner::planner_names();
  auto run = [&](const std::string& name) {
    const planner::PlanResult r = planner::run_planner(name, problem, opt);
    if (!r.found) throw Error(fmt::format("arena planner '{}' found no placement: {}", name, r.note));
    return r;
  };
  if (!algo.empty()) {
    plan.planner = algo;
    plan.offsets = run(algo).offsets;
  } else if (std::find(names.begin(), names.end(), "best") != names.end()) {
    plan.planner = "best";
    plan.offsets = run("best").offsets;
  } else {
    // The fast planners; the smallest peak wins (the first listed on a tie).
    uint64_t best = UINT64_MAX;
    for (const char* name : {"lifetime-aware", "greedy-size", "linked-list-best", "linked-list"}) {
      const planner::PlanResult r = run(name);
      plan.tried.emplace_back(name, r.peak.value);
      if (r.peak.value < best) {
        best = r.peak.value;
        plan.planner = name;
        plan.offsets = r.offsets;
      }
    }
  }
  check(plan, problem);
  return plan;
}

ArenaPlan read_arena_plan(const planner::PlanProblem& problem, const std::filesystem::path& path) {
  const planner::PlanProblem outside = planner::load_plan_file(path);
  std::map<std::string, uint64_t, std::less<>> offsets;
  for (const planner::PlanBuffer& b : outside.buffers) {
    if (!b.offset) throw Error(fmt::format("{}: tensor '{}' has no offset", path.string(), b.id));
    if (!offsets.emplace(b.id, *b.offset).second)
      throw Error(fmt::format("{}: tensor '{}' appears twice", path.string(), b.id));
  }
  ArenaPlan plan;
  plan.planner = "outside:" + path.filename().string();
  for (const planner::PlanBuffer& b : problem.buffers) {
    auto it = offsets.find(b.id);
    if (it == offsets.end())
      throw Error(fmt::format("{}: no row for the arena tensor '{}' (every arena tensor needs an offset; "
                              "--export-lifetimes lists them)",
                              path.string(), b.id));
    plan.offsets.push_back(it->second);
    offsets.erase(it);
  }
  if (!offsets.empty())
    throw Error(fmt::format("{}: '{}' is not an arena tensor of this model (--export-lifetimes lists them)",
                            path.string(), offsets.begin()->first));
  check(plan, problem);
  return plan;
}

DdrLayout layout_ddr(const QGraph& g, const Lifetimes& l, const ArenaPlan& plan, uint64_t weights_bytes,
                     const isa::NpuConfig& npu) {
  const uint64_t align = npu.alignment.value;
  DdrLayout d;
  d.alignment = align;
  d.addr.assign(g.tensors.size(), UINT64_MAX);
  d.weights = {0, pad_to(weights_bytes, align)};
  auto place_region = [&](DdrRegion& region, uint64_t base, const std::vector<TensorId>& roots) {
    region.base = base;
    uint64_t top = base;
    for (TensorId r : roots) {
      d.addr[r.value] = top;
      top += pad_to(static_cast<uint64_t>(std::max<int64_t>(1, g.tensor(r).bytes())), align);
    }
    region.bytes = top - base;
  };
  place_region(d.inputs, d.weights.end(), l.input_roots);
  d.arena = {d.inputs.end(), pad_to(plan.peak, align)};
  for (size_t i = 0; i < l.arena.size(); ++i) d.addr[l.arena[i].root.value] = d.arena.base + plan.offsets.at(i);
  place_region(d.outputs, d.arena.end(), l.output_roots);
  for (size_t t = 0; t < g.tensors.size(); ++t) d.addr[t] = d.addr[l.root[t].value];
  if (d.end() > npu.ddr_bytes.value)
    throw Error(fmt::format("{}: the model needs {} bytes of DDR (weights {}, inputs {}, arena {}, outputs {}) but the "
                            "NPU config has ddr_bytes {}",
                            g.source, d.end(), d.weights.bytes, d.inputs.bytes, d.arena.bytes, d.outputs.bytes,
                            npu.ddr_bytes.value));
  return d;
}

}  // namespace npuforge::compiler
