#include "compiler/manifest.h"

#include <fmt/core.h>
#include <yaml-cpp/yaml.h>

#include "model/tensor.h"
#include "util/error.h"
#include "util/file_io.h"
#include "util/yaml_util.h"

namespace npuforge::compiler {
namespace {

// A string as YAML writes it (quoted only when needed).
std::string q(std::string_view s) {
  YAML::Emitter e;
  e << std::string(s);
  return e.c_str();
}

std::string list(const std::vector<std::string>& v) {
  std::string out = "[";
  for (size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + q(v[i]);
  return out + "]";
}

std::string ints(const std::vector<int64_t>& v) {
  std::string out = "[";
  for (size_t i = 0; i < v.size(); ++i) out += fmt::format("{}{}", i ? ", " : "", v[i]);
  return out + "]";
}

std::string tensor_line(const ManifestTensor& t) {
  std::string out = "{";
  if (!t.name.empty()) out += "name: " + q(t.name) + ", ";
  out += "tensor: " + q(t.tensor);
  if (!t.value.empty()) out += ", value: " + q(t.value);
  // The scale with every digit a float holds, so a reader gets the compiler's value back.
  out += fmt::format(", ddr: 0x{:x}, bytes: {}, dtype: {}, layout: {}, shape: {}, scale: {}}}", t.ddr, t.bytes,
                     q(t.dtype), q(t.layout), ints(t.shape), t.scale);
  return out;
}

void tensors(std::string& out, std::string_view indent, std::string_view key, const std::vector<ManifestTensor>& v) {
  if (v.empty()) {
    out += fmt::format("{}{}: []\n", indent, key);
    return;
  }
  out += fmt::format("{}{}:\n", indent, key);
  for (const ManifestTensor& t : v) out += fmt::format("{}  - {}\n", indent, tensor_line(t));
}

// ---- reading ----
struct Reader {
  std::string source;

  [[noreturn]] void fail(const YAML::Node& at, std::string_view msg) const {
    throw Error(fmt::format("{}: {}", util::where(source, at), msg));
  }
  YAML::Node need(const YAML::Node& map, const char* key, std::string_view what) const {
    const YAML::Node v = map[key];
    if (!v) fail(map, fmt::format("{} has no '{}'", what, key));
    return v;
  }
  std::string str(const YAML::Node& map, const char* key, std::string_view what) const {
    return util::read_string(need(map, key, what), fmt::format("{}.{}", what, key), source);
  }
  std::string opt_str(const YAML::Node& map, const char* key, std::string_view what) const {
    return map[key] ? str(map, key, what) : std::string();
  }
  uint64_t u64(const YAML::Node& map, const char* key, std::string_view what) const {
    return static_cast<uint64_t>(util::read_int(need(map, key, what), fmt::format("{}.{}", what, key), source, 0, INT64_MAX));
  }
  int64_t i64(const YAML::Node& map, const char* key, std::string_view what) const {
    return util::read_int(need(map, key, what), fmt::format("{}.{}", what, key), source, INT64_MIN / 2, INT64_MAX / 2);
  }
  YAML::Node seq(const YAML::Node& map, const char* key, std::string_view what) const {
    const YAML::Node v = need(map, key, what);
    if (!v.IsSequence()) fail(v, fmt::format("'{}.{}' must be a list", what, key));
    return v;
  }
  std::vector<std::string> strings(const YAML::Node& map, const char* key, std::string_view what) const {
    std::vector<std::string> out;
    const YAML::Node v = seq(map, key, what);
    for (size_t i = 0; i < v.size(); ++i) out.push_back(util::read_string(v[i], fmt::format("{}.{}[{}]", what, key, i), source));
    return out;
  }
  ManifestRegion region(const YAML::Node& map, const char* key, std::string_view what) const {
    const YAML::Node r = need(map, key, what);
    const std::string w = fmt::format("{}.{}", what, key);
    util::reject_unknown_keys(r, {"base", "bytes"}, source, w);
    return {u64(r, "base", w), u64(r, "bytes", w)};
  }
  ManifestTensor tensor(const YAML::Node& n, const std::string& what) const {
    util::reject_unknown_keys(n, {"name", "tensor", "value", "ddr", "bytes", "dtype", "layout", "shape", "scale"}, source,
                              what);
    ManifestTensor t;
    t.name = opt_str(n, "name", what);
    t.tensor = str(n, "tensor", what);
    t.value = opt_str(n, "value", what);
    t.ddr = u64(n, "ddr", what);
    t.bytes = u64(n, "bytes", what);
    t.dtype = str(n, "dtype", what);
    if (!model::dtype_from_name(t.dtype))  // int8 and float32, or a CPU-side value's own dtype (uint8, ...)
      fail(n, fmt::format("'{}.dtype' = '{}' (expected int8, float32 or another model dtype)", what, t.dtype));
    t.layout = str(n, "layout", what);
    if (t.layout != "hwc" && t.layout != "row_major" && t.layout != "onnx")
      fail(n, fmt::format("'{}.layout' = '{}' (expected hwc, row_major or onnx)", what, t.layout));
    const YAML::Node shape = seq(n, "shape", what);
    for (size_t i = 0; i < shape.size(); ++i)
      t.shape.push_back(util::read_int(shape[i], fmt::format("{}.shape[{}]", what, i), source, 0, INT64_MAX / 2));
    t.scale = util::read_double(need(n, "scale", what), what + ".scale", source, 0, 1e30);
    return t;
  }
  std::vector<ManifestTensor> tensor_list(const YAML::Node& map, const char* key, std::string_view what) const {
    std::vector<ManifestTensor> out;
    const YAML::Node v = seq(map, key, what);
    for (size_t i = 0; i < v.size(); ++i) out.push_back(tensor(v[i], fmt::format("{}.{}[{}]", what, key, i)));
    return out;
  }
  ManifestSegment segment(const YAML::Node& n, size_t i) const {
    const std::string what = fmt::format("segments[{}]", i);
    util::reject_unknown_keys(n, {"index", "kind", "files", "ops", "instructions", "sram_peak", "macs", "graph", "nodes",
                                  "inputs", "outputs"},
                              source, what);
    ManifestSegment s;
    s.index = i64(n, "index", what);
    s.kind = str(n, "kind", what);
    if (s.kind == "npu") {
      const YAML::Node f = need(n, "files", what);
      const std::string fw = what + ".files";
      util::reject_unknown_keys(f, {"bin", "hex", "asm", "memmap", "ddr", "expect"}, source, fw);
      s.bin = str(f, "bin", fw);
      s.hex = str(f, "hex", fw);
      s.asm_file = str(f, "asm", fw);
      s.memmap = str(f, "memmap", fw);
      s.ddr = str(f, "ddr", fw);
      s.expect = str(f, "expect", fw);
      s.ops = strings(n, "ops", what);
      s.instructions = u64(n, "instructions", what);
      s.sram_peak = u64(n, "sram_peak", what);
      s.macs = u64(n, "macs", what);
    } else if (s.kind == "cpu") {
      s.graph = str(n, "graph", what);
      s.nodes = strings(n, "nodes", what);
    } else {
      fail(n, fmt::format("'{}.kind' = '{}' (expected npu or cpu)", what, s.kind));
    }
    s.inputs = tensor_list(n, "inputs", what);
    s.outputs = tensor_list(n, "outputs", what);
    return s;
  }
};

}  // namespace

std::string Manifest::to_yaml() const {
  std::string out = "# npuforge compile manifest: the segments of a compiled model, in order\n";
  out += fmt::format("format: {}\nmodel: {}\n", format, q(model));
  out += fmt::format("npu: {{file: {}, source: {}, fnv1a64: {:016x}, sram_bytes: {}, alignment: {}, ddr_bytes: {}}}\n",
                     q(npu_file), q(npu_source), npu_hash, sram_bytes, alignment, ddr_bytes);
  out += fmt::format("isa: {{name: {}, version: {}}}\n", q(isa_name), isa_version);
  out += fmt::format("image: {}\nsample: {}\n", q(image), q(sample));
  out += "regions:\n";
  for (const auto& [key, r] : {std::pair{"weights", weights}, {"input", input}, {"arena", arena}, {"output", output}})
    out += fmt::format("  {}: {{base: 0x{:x}, bytes: {}}}\n", key, r.base, r.bytes);
  tensors(out, "", "inputs", inputs);
  tensors(out, "", "outputs", outputs);
  out += segments.empty() ? "segments: []\n" : "segments:\n";
  for (const ManifestSegment& s : segments) {
    out += fmt::format("  - index: {}\n    kind: {}\n", s.index, s.kind);
    if (s.kind == "npu") {
      out += fmt::format("    files: {{bin: {}, hex: {}, asm: {}, memmap: {}, ddr: {}, expect: {}}}\n", q(s.bin), q(s.hex),
                         q(s.asm_file), q(s.memmap), q(s.ddr), q(s.expect));
      out += "    ops: " + list(s.ops) + "\n";
      out += fmt::format("    instructions: {}\n    sram_peak: {}\n    macs: {}\n", s.instructions, s.sram_peak, s.macs);
    } else {
      out += fmt::format("    graph: {}\n    nodes: {}\n", q(s.graph), list(s.nodes));
    }
    tensors(out, "    ", "inputs", s.inputs);
    tensors(out, "    ", "outputs", s.outputs);
  }
  out += fmt::format("arena:\n  planner: {}\n  peak: {}\n  lower_bound: {}\n  clean: {}\n", q(arena_planner), arena_peak,
                     arena_lower_bound, arena_clean ? "true" : "false");
  out += arena_tensors.empty() ? "  tensors: []\n" : "  tensors:\n";
  for (const ManifestArenaTensor& t : arena_tensors)
    out += fmt::format("    - {{name: {}, offset: 0x{:x}, size: {}, lower: {}, upper: {}}}\n", q(t.name), t.offset, t.size,
                       t.lower, t.upper);
  out += fmt::format(
      "statistics: {{macs: {}, instructions: {}, sram_peak: {}, tokens: {}, npu_segments: {}, cpu_steps: {}}}\n", macs,
      instructions, sram_peak, tokens, npu_segments, cpu_steps);
  return out;
}

void Manifest::save_file(const std::filesystem::path& path) const { util::write_file(path, to_yaml(), "manifest"); }

Manifest Manifest::load_string(std::string_view text, std::string_view source) {
  const YAML::Node root = util::load_yaml_string(text, source);
  const Reader r{std::string(source)};
  util::reject_unknown_keys(root, {"format", "model", "npu", "isa", "image", "sample", "regions", "inputs", "outputs",
                                   "segments", "arena", "statistics"},
                            source, "manifest");
  Manifest m;
  m.format = r.i64(root, "format", "manifest");
  if (m.format != 1) r.fail(root["format"], fmt::format("'format' = {} (this npuforge reads format 1)", m.format));
  m.model = r.str(root, "model", "manifest");
  const YAML::Node npu = r.need(root, "npu", "manifest");
  util::reject_unknown_keys(npu, {"file", "source", "fnv1a64", "sram_bytes", "alignment", "ddr_bytes"}, source, "npu");
  m.npu_file = r.str(npu, "file", "npu");
  m.npu_source = r.str(npu, "source", "npu");
  {
    const std::string h = r.str(npu, "fnv1a64", "npu");
    try {
      size_t used = 0;
      m.npu_hash = std::stoull(h, &used, 16);
      if (used != h.size()) throw std::invalid_argument(h);
    } catch (const std::exception&) {
      r.fail(npu["fnv1a64"], fmt::format("'npu.fnv1a64' = '{}' is not a hexadecimal hash", h));
    }
  }
  m.sram_bytes = r.u64(npu, "sram_bytes", "npu");
  m.alignment = r.u64(npu, "alignment", "npu");
  m.ddr_bytes = r.u64(npu, "ddr_bytes", "npu");
  const YAML::Node isa = r.need(root, "isa", "manifest");
  util::reject_unknown_keys(isa, {"name", "version"}, source, "isa");
  m.isa_name = r.str(isa, "name", "isa");
  m.isa_version = r.i64(isa, "version", "isa");
  m.image = r.str(root, "image", "manifest");
  m.sample = r.opt_str(root, "sample", "manifest");
  const YAML::Node regions = r.need(root, "regions", "manifest");
  util::reject_unknown_keys(regions, {"weights", "input", "arena", "output"}, source, "regions");
  m.weights = r.region(regions, "weights", "regions");
  m.input = r.region(regions, "input", "regions");
  m.arena = r.region(regions, "arena", "regions");
  m.output = r.region(regions, "output", "regions");
  m.inputs = r.tensor_list(root, "inputs", "manifest");
  m.outputs = r.tensor_list(root, "outputs", "manifest");
  const YAML::Node segs = r.seq(root, "segments", "manifest");
  for (size_t i = 0; i < segs.size(); ++i) m.segments.push_back(r.segment(segs[i], i));
  const YAML::Node arena = r.need(root, "arena", "manifest");
  util::reject_unknown_keys(arena, {"planner", "peak", "lower_bound", "clean", "tensors"}, source, "arena");
  m.arena_planner = r.str(arena, "planner", "arena");
  m.arena_peak = r.u64(arena, "peak", "arena");
  m.arena_lower_bound = r.u64(arena, "lower_bound", "arena");
  m.arena_clean = util::read_bool(r.need(arena, "clean", "arena"), "arena.clean", source);
  const YAML::Node at = r.seq(arena, "tensors", "arena");
  for (size_t i = 0; i < at.size(); ++i) {
    const std::string what = fmt::format("arena.tensors[{}]", i);
    util::reject_unknown_keys(at[i], {"name", "offset", "size", "lower", "upper"}, source, what);
    m.arena_tensors.push_back(
        {r.str(at[i], "name", what), r.u64(at[i], "offset", what), r.u64(at[i], "size", what), r.i64(at[i], "lower", what),
         r.i64(at[i], "upper", what)});
  }
  const YAML::Node st = r.need(root, "statistics", "manifest");
  util::reject_unknown_keys(st, {"macs", "instructions", "sram_peak", "tokens", "npu_segments", "cpu_steps"}, source,
                            "statistics");
  m.macs = r.u64(st, "macs", "statistics");
  m.instructions = r.u64(st, "instructions", "statistics");
  m.sram_peak = r.u64(st, "sram_peak", "statistics");
  m.tokens = r.u64(st, "tokens", "statistics");
  m.npu_segments = r.i64(st, "npu_segments", "statistics");
  m.cpu_steps = r.i64(st, "cpu_steps", "statistics");
  return m;
}

Manifest Manifest::load_file(const std::filesystem::path& path) {
  return load_string(util::read_file(path, "manifest"), path.string());
}

}  // namespace npuforge::compiler
