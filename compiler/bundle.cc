#include "compiler/bundle.h"

#include <cstring>
#include <system_error>

#include <fmt/core.h>

#include "bundle/ddr_image.h"
#include "bundle/files.h"
#include "compiler/graph_yaml.h"
#include "compiler/qgraph_io.h"
#include "util/error.h"
#include "util/file_io.h"
#include "util/yaml_util.h"

namespace npuforge::compiler {
namespace {

ManifestTensor manifest_tensor(const QGraph& g, const CompiledModel& m, TensorId id) {
  const QTensor& t = g.tensor(id);
  ManifestTensor mt;
  mt.tensor = t.name;
  mt.ddr = m.ddr.addr.at(id.value);
  mt.bytes = static_cast<uint64_t>(t.bytes());
  mt.dtype = std::string(model::dtype_name(t.dtype));
  mt.layout = std::string(layout_name(t.layout));
  mt.shape = t.shape;
  mt.scale = t.scale;
  return mt;
}

// segK: the prefix of NPU segment K's program bundle (bundle/files.h).
std::string segment_prefix(size_t segment) { return fmt::format("seg{}", segment); }

std::string op_label(const QGraph& g, const QOp& op) {
  std::string nodes;
  for (const std::string& n : op_nodes(op)) nodes += (nodes.empty() ? "" : "+") + n;
  if (nodes.empty()) nodes = g.tensor(op_outputs(op).front()).name;
  return fmt::format("{} {}", op_kind(op), nodes);
}

void put(std::vector<uint8_t>& image, uint64_t addr, const model::Tensor& value, std::string_view name) {
  const auto bytes = value.bytes();
  if (addr + bytes.size() > image.size())
    throw Error(fmt::format("internal: tensor '{}' [0x{:x}, +{}) leaves the DDR image", name, addr, bytes.size()));
  std::memcpy(image.data() + addr, bytes.data(), bytes.size());
}

}  // namespace

void apply_outputs(const QGraph& g, const CompiledModel& m, const QOp& op, const std::vector<model::Tensor>& values,
                   std::vector<uint8_t>& image) {
  if (std::holds_alternative<AliasOp>(op)) return;  // the same bytes under another name
  for (TensorId t : op_outputs(op)) {
    const uint64_t addr = m.ddr.addr.at(t.value);
    if (addr == UINT64_MAX) continue;
    put(image, addr, values.at(t.value), g.tensor(t).name);
  }
}

std::vector<uint8_t> initial_image(const QGraph& g, const CompiledModel& m, const std::vector<model::Tensor>& values) {
  std::vector<uint8_t> image(m.ddr.end(), 0);
  // A graph without constants has an empty (null) weight blob; memcpy must not see it.
  if (!m.consts.bytes.empty()) std::memcpy(image.data(), m.consts.bytes.data(), m.consts.bytes.size());
  for (const GraphIO& io : g.inputs) put(image, m.ddr.addr.at(io.tensor.value), values.at(io.tensor.value), io.name);
  return image;
}

Manifest make_manifest(const QGraph& g, const CompiledModel& m, const isa::Isa& isa, const BundleOptions& o) {
  Manifest mf;
  mf.model = o.model;
  mf.npu_file = "npu.yaml";
  mf.npu_source = o.npu.source;
  mf.npu_hash = util::fnv1a64(o.npu.text);
  mf.sram_bytes = o.npu.config.sram_bytes.value;
  mf.alignment = o.npu.config.alignment.value;
  mf.ddr_bytes = o.npu.config.ddr_bytes.value;
  mf.isa_name = std::string(isa.name());
  mf.isa_version = isa.version();
  mf.image = "model.ddr.bin";
  mf.sample = o.sample;
  mf.weights = {m.ddr.weights.base, m.ddr.weights.bytes};
  mf.input = {m.ddr.inputs.base, m.ddr.inputs.bytes};
  mf.arena = {m.ddr.arena.base, m.ddr.arena.bytes};
  mf.output = {m.ddr.outputs.base, m.ddr.outputs.bytes};
  for (const GraphIO& io : g.inputs) {
    mf.inputs.push_back(manifest_tensor(g, m, io.tensor));
    mf.inputs.back().name = io.name;
  }
  for (const GraphIO& io : g.outputs) {
    mf.outputs.push_back(manifest_tensor(g, m, io.tensor));
    mf.outputs.back().name = io.name;
  }
  for (size_t si = 0; si < m.segments.size(); ++si) {
    const CompiledSegment& cs = m.segments[si];
    const Segment& s = cs.segment;
    ManifestSegment ms;
    ms.index = static_cast<int64_t>(si);
    if (s.target == Target::kNpu) {
      ms.kind = "npu";
      const std::string base = segment_prefix(si);
      const bundle::BundlePaths files = bundle::BundlePaths::at(base);
      ms.bin = files.binary.string();
      ms.hex = files.readmemh.string();
      ms.asm_file = files.assembly.string();
      ms.memmap = files.memmap.string();
      ms.ddr = files.ddr.string();
      ms.expect = base + ".expect.ddr.bin";
      for (uint32_t i = s.first; i < s.end; ++i) ms.ops.push_back(op_label(g, g.ops[i]));
      ms.instructions = cs.program.instrs.size();
      ms.sram_peak = cs.program.sram_peak;
      ms.macs = cs.macs;
      for (TensorId t : s.inputs) ms.inputs.push_back(manifest_tensor(g, m, t));
      for (TensorId t : s.outputs) ms.outputs.push_back(manifest_tensor(g, m, t));
      ++mf.npu_segments;
    } else {
      ms.kind = "cpu";
      ms.graph = fmt::format("seg{}.cpu.yaml", si);
      const auto& step = std::get<CpuStepOp>(g.ops.at(s.first));
      ms.nodes = step.nodes;
      for (size_t i = 0; i < step.inputs.size(); ++i) {
        ms.inputs.push_back(manifest_tensor(g, m, step.inputs[i]));
        ms.inputs.back().value = step.graph.inputs.at(i);
      }
      for (size_t i = 0; i < step.outputs.size(); ++i) {
        ms.outputs.push_back(manifest_tensor(g, m, step.outputs[i]));
        ms.outputs.back().value = step.graph.outputs.at(i);
      }
      ++mf.cpu_steps;
    }
    mf.segments.push_back(std::move(ms));
  }
  mf.arena_planner = m.arena.planner;
  mf.arena_peak = m.arena.peak;
  mf.arena_lower_bound = m.arena.lower_bound;
  mf.arena_clean = m.arena.clean;
  for (size_t i = 0; i < m.lifetimes.arena.size(); ++i) {
    const ArenaTensor& a = m.lifetimes.arena[i];
    mf.arena_tensors.push_back({a.name, m.arena.offsets[i], a.bytes, a.life.lower, a.life.upper});
  }
  mf.macs = m.macs;
  mf.instructions = m.instructions;
  mf.sram_peak = m.sram_peak;
  mf.tokens = m.tokens;
  return mf;
}

Manifest write_bundle(const std::filesystem::path& out, const QGraph& g, const CompiledModel& m, const isa::Isa& isa,
                      const std::vector<model::Tensor>& values, const BundleOptions& o) {
  std::error_code ec;
  std::filesystem::create_directories(out, ec);
  if (ec) throw Error(fmt::format("{}: cannot create the output directory: {}", out.string(), ec.message()));
  const Manifest mf = make_manifest(g, m, isa, o);
  util::write_file(out / "npu.yaml", o.npu.text, "NPU config");
  std::vector<uint8_t> image = initial_image(g, m, values);
  bundle::write_ddr_image(out / mf.image, image);
  const std::string header = fmt::format("npuforge compile; model: {}; npu: {} (fnv1a64 {:016x}); isa: {} v{}", o.model,
                                         std::filesystem::path(o.npu.source).filename().string(), mf.npu_hash,
                                         isa.name(), isa.version());
  for (size_t si = 0; si < m.segments.size(); ++si) {
    const CompiledSegment& cs = m.segments[si];
    const ManifestSegment& ms = mf.segments[si];
    if (ms.kind == "npu") {
      const bundle::Listing listing{fmt::format("{}; segment {}", header, si),
                                    "SRAM operands name their buffers in the comments", cs.program.refs};
      bundle::write_bundle(isa, out / segment_prefix(si), cs.program.instrs, cs.program.memmap, image, listing);
      for (uint32_t i = cs.segment.first; i < cs.segment.end; ++i) apply_outputs(g, m, g.ops[i], values, image);
      bundle::write_ddr_image(out / ms.expect, image);
    } else {
      const auto& step = std::get<CpuStepOp>(g.ops.at(cs.segment.first));
      write_graph_yaml(step.graph, out / ms.graph, fmt::format("seg{}.cpu", si),
                       fmt::format("{}; CPU step of segment {}: {} nodes", header, si, step.nodes.size()));
      apply_outputs(g, m, g.ops[cs.segment.first], values, image);
    }
  }
  write_qgraph(out / "qgraph.bin", g, [&](size_t op) {
    for (const ManifestSegment& ms : mf.segments)
      if (ms.kind == "cpu" && m.segments.at(static_cast<size_t>(ms.index)).segment.first == op) return ms.graph;
    throw Error(fmt::format("internal: CPU step op {} is in no CPU segment", op));
  });
  mf.save_file(out / "manifest.yaml");
  return mf;
}

}  // namespace npuforge::compiler
