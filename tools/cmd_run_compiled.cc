// The runner of a compiled model (run_compiled.h); `npuforge run-model` calls it for a directory.
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>

#include <fmt/core.h>

#include "compiler/convert.h"
#include "compiler/manifest.h"
#include "compiler/qgraph_io.h"
#include "compiler/qref.h"
#include "isa/npu_config.h"
#include "model/bindings.h"
#include "model/interpreter.h"
#include "model/load.h"
#include "model/npy.h"
#include "bundle/ddr_image.h"
#include "bundle/files.h"
#include "sim/verify/verdict_json.h"
#include "sim/verify/verify.h"
#include "tools/run_compiled.h"
#include "util/error.h"
#include "util/file_io.h"
#include "util/text.h"

namespace npuforge::tools {
namespace {

namespace fs = std::filesystem;
using compiler::Manifest;
using compiler::ManifestTensor;
using compiler::QGraph;
using compiler::QTensor;
using compiler::TensorId;

const QTensor& qtensor(const QGraph& g, const std::string& name, TensorId* id = nullptr) {
  const TensorId t = g.find(name);
  if (!t.valid()) throw Error(fmt::format("the manifest names tensor '{}' that the QGraph lacks", name));
  if (id) *id = t;
  return g.tensor(t);
}

// A tensor's stored value, read from the image.
model::Tensor read_stored(const std::vector<uint8_t>& image, const ManifestTensor& mt, const QTensor& t) {
  model::Tensor v(t.dtype, t.is_int8() ? t.storage_shape() : t.shape);
  const auto out = v.bytes();
  if (mt.ddr + out.size() > image.size())
    throw Error(fmt::format("tensor '{}' [0x{:x}, +{}) lies outside the DDR image", mt.tensor, mt.ddr, out.size()));
  std::memcpy(out.data(), image.data() + mt.ddr, out.size());
  return v;
}

void write_stored(std::vector<uint8_t>& image, uint64_t ddr, const model::Tensor& v, const std::string& name) {
  const auto b = v.bytes();
  if (ddr + b.size() > image.size())
    throw Error(fmt::format("tensor '{}' [0x{:x}, +{}) lies outside the DDR image", name, ddr, b.size()));
  std::memcpy(image.data() + ddr, b.data(), b.size());
}

// Bytes of `got` that differ from the reference; a line for the report when any.
std::string compare(const model::Tensor& got, const model::Tensor& want, const std::string& name, uint64_t& bad) {
  const auto g = got.bytes(), w = want.bytes();
  if (g.size() != w.size()) {
    bad += std::max(g.size(), w.size());
    return fmt::format("%{}: {} bytes, the reference has {}", name, g.size(), w.size());
  }
  uint64_t n = 0, first = 0;
  for (size_t i = 0; i < g.size(); ++i)
    if (g[i] != w[i] && n++ == 0) first = i;
  bad += n;
  if (n == 0) return {};
  return fmt::format("%{}: {} of {} bytes differ from the int8 reference, first at byte {} (got {}, want {})", name, n,
                     g.size(), first, static_cast<int>(static_cast<int8_t>(g[first])),
                     static_cast<int>(static_cast<int8_t>(w[first])));
}

// One model output against the float model.
struct Accuracy {
  double cosine = 1, max_abs = 0, max_ref = 0;
  int64_t top1 = -1, top1_ref = -1;  // [1, N] outputs with N > 1 only
};

Accuracy judge(const model::Tensor& got, const model::Tensor& want) {
  Accuracy a;
  double ab = 0, aa = 0, bb = 0;
  for (int64_t i = 0; i < got.numel(); ++i) {
    const double x = got.real_at(i), y = want.real_at(i);
    ab += x * y;
    aa += x * x;
    bb += y * y;
    a.max_abs = std::max(a.max_abs, std::fabs(x - y));
    a.max_ref = std::max(a.max_ref, std::fabs(y));
  }
  a.cosine = aa == 0 && bb == 0 ? 1 : aa == 0 || bb == 0 ? 0 : ab / std::sqrt(aa * bb);
  if (want.rank() == 2 && want.shape()[0] == 1 && want.shape()[1] > 1) {
    a.top1 = a.top1_ref = 0;
    for (int64_t i = 1; i < want.numel(); ++i) {
      if (got.real_at(i) > got.real_at(a.top1)) a.top1 = i;
      if (want.real_at(i) > want.real_at(a.top1_ref)) a.top1_ref = i;
    }
  }
  return a;
}

struct SegmentReport {
  std::string kind;
  uint64_t cycles = 0, instructions = 0, sram_peak = 0, findings = 0, mismatched = 0;
  bool pass = true;
  double seconds = 0;
};

struct Runner {
  explicit Runner(const RunCompiledOptions& options) : o(options) {}
  const RunCompiledOptions& o;
  Manifest mf;
  QGraph g;
  compiler::QrefResult ref;
  isa::NpuConfig npu;
  std::vector<uint8_t> image;
  fs::path work;  // where segment files go (empty until a segment needs it)
  bool ok = true;

  // --work-dir, else a temporary directory made when a segment first writes its files (and
  // kept: a failing segment's reproduction reads them).
  const fs::path& work_dir() {
    if (work.empty()) {
      work = o.work_dir.empty() ? fs::temp_directory_path() / fmt::format("npuforge_run_{}", ::getpid())
                                : fs::path(o.work_dir);
      fs::create_directories(work);
      if (o.work_dir.empty()) fmt::print("segment files: {}\n", work.string());
    }
    return work;
  }

  sim::verify::Options sim_options(const std::string& segment) const {
    sim::verify::Options v;
    v.backend = sim::verify::backend_named(o.backend);
    v.rtl = o.rtl;
    v.max_errors = o.max_errors;
    v.keep_final_ddr = true;
    if (!o.trace.empty()) {
      const fs::path t(o.trace);
      v.trace = (t.parent_path() / (t.stem().string() + "." + segment + t.extension().string())).string();
    }
    return v;
  }

  // The `npuforge sim` command that runs segment `k` alone on the files write_segment wrote.
  std::string repro(const compiler::ManifestSegment& s, const std::string& k, const sim::verify::Options& v) {
    const fs::path& w = work_dir();
    std::vector<std::string> args = {fs::read_symlink("/proc/self/exe").string(), "sim", (o.dir / s.bin).string(),
                                     "--memmap", (o.dir / s.memmap).string(), "--ddr", (w / (k + ".in.ddr.bin")).string(),
                                     "--npu", (o.dir / mf.npu_file).string(), "--out-ddr",
                                     (w / (k + ".out.ddr.bin")).string(), "--json", (w / (k + ".json")).string(),
                                     "--max-errors", std::to_string(o.max_errors), "--backend", o.backend};
    if (o.rtl) args.push_back("--rtl");
    if (!v.trace.empty()) args.insert(args.end(), {"--trace", v.trace});
    return util::shell_join(args);
  }

  // A segment's files: its DDR image in and out, its verdict and its report.
  void write_segment(const std::string& k, const bundle::Program& p, const sim::verify::Verdict& v) {
    const fs::path& w = work_dir();
    bundle::write_ddr_image(w / (k + ".in.ddr.bin"), p.ddr_init);
    bundle::write_ddr_image(w / (k + ".out.ddr.bin"), v.final_ddr);
    util::write_file(w / (k + ".json"), sim::verify::to_json(v), "JSON verdict");
    util::write_file(w / (k + ".log"), sim::verify::report(v), "segment report");
  }

  SegmentReport run_npu(const compiler::ManifestSegment& s) {
    SegmentReport r;
    r.kind = "npu";
    const std::string k = fmt::format("seg{}", s.index);
    // The image now, lent to the program for the run.
    bundle::Program p = bundle::read_program(isa::builtin_isa(), {.binary = o.dir / s.bin, .memmap = o.dir / s.memmap},
                                             npu, std::move(image), k + "'s input DDR image");
    const sim::verify::Options v = sim_options(k);
    const auto t0 = std::chrono::steady_clock::now();
    sim::verify::Verdict verdict = sim::verify::run(p, v);
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    r.cycles = verdict.cycles;
    r.instructions = s.instructions;
    r.sram_peak = s.sram_peak;
    r.findings = verdict.findings;
    r.pass = verdict.pass;
    if (!r.pass || o.keep || !o.work_dir.empty()) write_segment(k, p, verdict);
    if (!r.pass) {
      fmt::print("seg{} (npu) failed; the simulator said:\n{}", s.index, sim::verify::report(verdict));
      fmt::print("  reproduce: {}\n", repro(s, k, v));
    }
    image = std::move(verdict.final_ddr);
    image.resize(std::max(image.size(), p.ddr_init.size()), 0);  // bytes past the written extent read as zero
    check_outputs(s, r);
    return r;
  }

  SegmentReport run_cpu(const compiler::ManifestSegment& s) {
    SegmentReport r;
    r.kind = "cpu";
    const auto& seg = g.segments.at(static_cast<size_t>(s.index));
    const auto& step = std::get<compiler::CpuStepOp>(g.ops.at(seg.first));
    const auto t0 = std::chrono::steady_clock::now();
    model::TensorMap in;
    for (size_t i = 0; i < step.inputs.size(); ++i) {
      const QTensor& t = g.tensor(step.inputs[i]);
      const model::Tensor v = read_stored(image, s.inputs.at(i), t);
      in[step.graph.inputs[i]] = t.is_int8() ? compiler::dequantize(v, t) : v;
    }
    const model::TensorMap out = model::run_graph(step.graph, std::move(in));
    for (size_t i = 0; i < step.outputs.size(); ++i) {
      const QTensor& t = g.tensor(step.outputs[i]);
      const model::Tensor& v = out.at(step.graph.outputs[i]);
      write_stored(image, s.outputs.at(i).ddr, t.is_int8() ? compiler::quantize(v, t) : v, t.name);
    }
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    check_outputs(s, r);
    return r;
  }

  void check_outputs(const compiler::ManifestSegment& s, SegmentReport& r) {
    for (const ManifestTensor& mt : s.outputs) {
      TensorId id;
      const QTensor& t = qtensor(g, mt.tensor, &id);
      const std::string line = compare(read_stored(image, mt, t), ref.values.at(id.value), mt.tensor, r.mismatched);
      if (!line.empty()) fmt::print("seg{} ({}): {}\n", s.index, r.kind, line);
    }
    if (r.mismatched) r.pass = false;
  }

  // The outputs against the float model on the same inputs; false when one is below --min-cosine.
  bool judge_outputs(const model::TensorMap& inputs, const model::TensorMap& got) const {
    const fs::path file = o.reference.empty() ? o.dir / mf.model : fs::path(o.reference);
    if (!fs::exists(file)) {
      fmt::print("float reference: {} is missing (compile copies the model there; --reference FILE names "
                 "another): outputs not judged\n",
                 file.string());
      return o.min_cosine <= 0;
    }
    model::LoadOptions load;
    for (const ManifestTensor& mt : mf.inputs) load.input_shapes[mt.name] = mt.shape;
    const model::Graph graph = model::load_model(file, load);
    const model::TensorMap want = model::Interpreter(graph).run(inputs);
    fmt::print("float reference: {} on npuforge's fp32 interpreter (onnxruntime is not linked in; tests/models "
               "checks the interpreter against it)\n",
               file.filename().string());
    bool pass = true;
    for (const ManifestTensor& mt : mf.outputs) {
      auto w = want.find(mt.name);
      if (w == want.end()) throw Error(fmt::format("{}: the float model has no output '{}'", file.string(), mt.name));
      const model::Tensor& g_out = got.at(mt.name);
      if (g_out.shape() != w->second.shape())
        throw Error(fmt::format("output '{}' is {}, the float model's is {}", mt.name, model::shape_str(g_out.shape()),
                                model::shape_str(w->second.shape())));
      const Accuracy a = judge(g_out, w->second);
      const bool low = o.min_cosine > 0 && a.cosine < o.min_cosine;
      pass = pass && !low;
      fmt::print("  {}: cosine {:.6f}, max|diff| {:.4g} (max|float| {:.4g}){}{}\n", mt.name, a.cosine, a.max_abs,
                 a.max_ref, a.top1 >= 0 ? fmt::format(", top-1 {} (float {})", a.top1, a.top1_ref) : "",
                 low ? fmt::format("  BELOW --min-cosine {}", o.min_cosine) : "");
    }
    return pass;
  }

  int run() {
    mf = Manifest::load_file(o.dir / "manifest.yaml");
    g = compiler::read_qgraph(o.dir / "qgraph.bin");
    std::vector<std::string> names;
    for (const ManifestTensor& t : mf.inputs) names.push_back(t.name);
    model::TensorMap inputs = model::read_inputs(names, o.inputs);
    for (const ManifestTensor& mt : mf.inputs) {
      const model::Tensor& v = inputs.at(mt.name);
      if (v.shape() != mt.shape)
        throw Error(fmt::format("input '{}' is {}, the compiled model expects {}", mt.name, model::shape_str(v.shape()),
                                model::shape_str(mt.shape)));
    }
    const auto outputs_to = model::bind_files([&] {
      std::vector<std::string> n;
      for (const ManifestTensor& t : mf.outputs) n.push_back(t.name);
      return n;
    }(), o.outputs, "--output");
    ref = compiler::run_qref(g, inputs);
    image = bundle::read_ddr_image(o.dir / mf.image);
    image.resize(std::max<size_t>(image.size(), mf.output.base + mf.output.bytes), 0);
    for (const ManifestTensor& mt : mf.inputs) {
      TensorId id;
      qtensor(g, mt.tensor, &id);
      write_stored(image, mt.ddr, ref.values.at(id.value), mt.tensor);  // quantized and laid out as qref did
    }
    npu = isa::load_npu_config((o.dir / mf.npu_file).string()).config;

    std::vector<SegmentReport> reports;
    model::TensorMap final_outputs;
    for (const auto& s : mf.segments) reports.push_back(s.kind == "npu" ? run_npu(s) : run_cpu(s));

    fmt::print("{:<6} {:<4} {:>12} {:>12} {:>10} {:>9} {:>10}  {}\n", "seg", "kind", "cycles", "instructions",
               "SRAM peak", "findings", "time (s)", "verdict");
    uint64_t cycles = 0, instructions = 0;
    for (size_t i = 0; i < reports.size(); ++i) {
      const SegmentReport& r = reports[i];
      cycles += r.cycles;
      instructions += r.instructions;
      ok = ok && r.pass;
      const std::string verdict = r.pass ? "bit-exact, clean"
                                         : fmt::format("FAIL ({} findings, {} bytes differ)", r.findings, r.mismatched);
      if (r.kind == "npu")
        fmt::print("seg{:<3} npu  {:>12} {:>12} {:>10} {:>9} {:>10.3f}  {}\n", i, r.cycles, r.instructions, r.sram_peak,
                   r.findings, r.seconds, verdict);
      else
        fmt::print("seg{:<3} cpu  {:>12} {:>12} {:>10} {:>9} {:>10.3f}  {}\n", i, "-", "-", "-", "-", r.seconds,
                   r.pass ? "bit-exact" : verdict);
    }
    fmt::print("total: {} cycles, {} instructions on the NPU ({} backend{})\n", cycles, instructions, o.backend,
               o.rtl ? ", RTL" : "");
    fmt::print("arena: planner {}, peak {} bytes, lower bound {}{}\n", mf.arena_planner, mf.arena_peak,
               mf.arena_lower_bound, mf.arena_clean ? "" : " (its static check has findings)");

    for (const ManifestTensor& mt : mf.outputs) {
      TensorId id;
      const QTensor& t = qtensor(g, mt.tensor, &id);
      const model::Tensor stored = read_stored(image, mt, t);
      const model::Tensor v = t.is_int8() ? compiler::dequantize(stored, t) : stored;
      final_outputs[mt.name] = v;
      auto file = outputs_to.find(mt.name);
      if (file != outputs_to.end()) model::write_npy(file->second, v);
      fmt::print("{}: {} {}{}\n", mt.name, model::dtype_name(v.dtype()), model::shape_str(v.shape()),
                 file != outputs_to.end() ? " -> " + file->second.string() : "");
    }
    const bool accurate = judge_outputs(inputs, final_outputs);
    fmt::print("{}\n", !ok         ? "FAIL: see the segments above"
                       : !accurate ? fmt::format("FAIL: an output's cosine is below --min-cosine {}", o.min_cosine)
                                   : "PASS: every segment clean and bit-exact with the int8 reference");
    return ok && accurate ? 0 : 1;
  }
};

}  // namespace

int run_compiled_model(const RunCompiledOptions& options) { return Runner(options).run(); }

}  // namespace npuforge::tools
