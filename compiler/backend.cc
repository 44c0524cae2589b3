#include "compiler/backend.h"

#include <algorithm>

#include <fmt/core.h>

#include "compiler/isa_slots.h"
#include "util/error.h"

namespace npuforge::compiler {

CompiledModel plan_model(const QGraph& g, const BackendOptions& o) {
  const uint64_t align = o.npu.alignment.value;
  CompiledModel m;
  m.lifetimes = derive_lifetimes(g, align);
  m.arena_problem = arena_problem(m.lifetimes, align);
  m.arena = o.arena_plan.empty() ? plan_arena(m.arena_problem, o.arena_algo, o.arena_time_budget_s)
                                 : read_arena_plan(m.arena_problem, o.arena_plan);
  m.consts.alignment = align;
  for (const QOp& op : g.ops) m.op_consts.push_back(build_consts(g, op, o.npu.mac_cols, m.consts));
  m.ddr = layout_ddr(g, m.lifetimes, m.arena, m.consts.bytes.size(), o.npu);
  for (const Segment& s : g.segments) {
    CompiledSegment cs;
    cs.segment = s;
    for (uint32_t i = s.first; i < s.end; ++i) cs.macs += op_macs(g, g.ops[i]);
    m.macs += cs.macs;
    m.segments.push_back(std::move(cs));
  }
  return m;
}

SegmentDdr segment_ddr(const QGraph& g, const CompiledModel& m, const Segment& s) {
  const Lifetimes& l = m.lifetimes;
  SegmentDdr d;
  d.tensor_buf.assign(g.tensors.size(), kNoDdrBuffer);
  const auto first = static_cast<int64_t>(s.first), end = static_cast<int64_t>(s.end);
  for (size_t t = 0; t < g.tensors.size(); ++t) {
    if (l.root[t].value != t || l.region[t] == Region::kNone) continue;
    const int64_t made = l.first_step[t], last = l.last_step[t];
    DdrBufferSpec spec;
    spec.name = g.tensors[t].name;
    spec.region = std::string(region_name(l.region[t]));
    spec.addr = m.ddr.addr[t];
    switch (l.region[t]) {
      case Region::kInput:
        if (last < first) continue;  // nothing reads it any more
        spec.live_in = true;
        spec.live_out = last >= end;
        spec.bytes = static_cast<uint64_t>(std::max<int64_t>(1, g.tensors[t].bytes()));
        break;
      case Region::kOutput:
        if (made >= end) continue;  // produced later
        spec.live_in = made < first;
        spec.live_out = true;
        spec.bytes = static_cast<uint64_t>(std::max<int64_t>(1, g.tensors[t].bytes()));
        break;
      case Region::kArena: {
        const ArenaTensor& a = l.arena[static_cast<size_t>(l.arena_of[t])];
        if (!(a.life.lower < end && first < a.life.upper)) continue;
        spec.live_in = a.life.lower < first;
        spec.live_out = a.life.upper > end;
        spec.bytes = a.bytes;
        break;
      }
      default:
        continue;
    }
    spec.bytes = (spec.bytes + m.ddr.alignment - 1) / m.ddr.alignment * m.ddr.alignment;
    d.tensor_buf[t] = static_cast<int32_t>(d.specs.size());
    d.specs.push_back(std::move(spec));
  }
  for (size_t t = 0; t < g.tensors.size(); ++t) d.tensor_buf[t] = d.tensor_buf[l.root[t].value];
  // Constant blobs of the segment's ops: read-only for the whole program.
  for (uint32_t i = s.first; i < s.end; ++i) {
    const OpConsts& c = m.op_consts[i];
    std::vector<uint64_t> addrs;
    for (const BlockConsts& b : c.blocks) {
      addrs.push_back(b.weights);
      if (b.has_bias) addrs.push_back(b.bias);
      addrs.push_back(b.qp);
    }
    if (std::holds_alternative<LutOp>(g.ops[i])) addrs.push_back(c.table);
    addrs.insert(addrs.end(), c.tables.begin(), c.tables.end());
    for (uint64_t a : addrs) {
      auto blob = std::find_if(m.consts.blobs.begin(), m.consts.blobs.end(),
                               [&](const ConstImage::Blob& b) { return b.addr == a; });
      if (blob == m.consts.blobs.end()) throw Error(fmt::format("internal: no constant blob at 0x{:x}", a));
      d.blob_buf.emplace_back(a, static_cast<int32_t>(d.specs.size()));
      d.specs.push_back({blob->name, "weights", blob->addr, blob->bytes, true, true});
    }
  }
  std::sort(d.blob_buf.begin(), d.blob_buf.end());
  return d;
}

CompiledModel compile_backend(const QGraph& g, const isa::Isa& isa, const BackendOptions& o) {
  CompiledModel m = plan_model(g, o);
  const IsaSlots slots(isa);
  for (size_t si = 0; si < m.segments.size(); ++si) {
    CompiledSegment& cs = m.segments[si];
    const Segment& s = cs.segment;
    if (s.target != Target::kNpu) continue;
    SegmentDdr d = segment_ddr(g, m, s);
    LowerEnv env;
    env.graph = &g;
    env.slots = &slots;
    env.npu = o.npu;
    env.policy = o.policy;
    env.tensor_addr = [&](TensorId t) {
      const uint64_t a = m.ddr.addr.at(t.value);
      if (a == UINT64_MAX) throw Error(fmt::format("internal: tensor '{}' has no DDR address", g.tensor(t).name));
      return a;
    };
    env.tensor_buf = [&](TensorId t) { return d.tensor_buf.at(t.value); };
    env.const_buf = [&](uint64_t addr) {
      auto it = std::lower_bound(d.blob_buf.begin(), d.blob_buf.end(), std::pair<uint64_t, int32_t>{addr, INT32_MIN});
      if (it == d.blob_buf.end() || it->first != addr)
        throw Error(fmt::format("internal: no constant blob at 0x{:x} in segment {}", addr, si));
      return it->second;
    };
    // DDR ordering is needed where anything writes: the arena and the outputs.
    SegmentEmitter em(isa, o.npu, o.policy, d.specs, m.ddr.arena.base, m.ddr.outputs.end());
    for (uint32_t i = s.first; i < s.end; ++i) em.emit(lower_op(env, g.ops[i], m.op_consts[i]));
    cs.program = em.finish(fmt::format("{}; segment {}", o.header, si));
    m.instructions += cs.program.instrs.size();
    m.sram_peak = std::max(m.sram_peak, cs.program.sram_peak);
    m.tokens += cs.program.tokens;
  }
  return m;
}

}  // namespace npuforge::compiler
