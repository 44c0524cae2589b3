// `npuforge run-model` (the reference interpreter on .npy inputs) and `npuforge model-info`
// (what a user checks first about a model). MODEL is an .onnx file or a YAML graph.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>

#include <fmt/core.h>

#include "model/bindings.h"
#include "model/interpreter.h"
#include "model/load.h"
#include "model/npy.h"
#include "model/stats.h"
#include "tools/command.h"
#include "tools/input_file.h"
#include "tools/run_compiled.h"

namespace npuforge::tools {
namespace {

using namespace npuforge::model;

struct RunModelOptions {
  std::string model;
  std::vector<std::string> inputs, outputs, input_shapes;
  std::string dump_dir;
  // A compiled model (a directory from npuforge compile -o) only:
  bool rtl = false;
  std::string trace;
  std::string backend = "systemc";
  uint64_t max_errors = 20;
  std::string work_dir;
  bool keep = false;
  std::string reference;
  double min_cosine = 0;
};

struct ModelInfoOptions {
  std::string model;
  std::vector<std::string> input_shapes;
};

LoadOptions load_options(const std::vector<std::string>& input_shapes) {
  LoadOptions o;
  for (const std::string& text : input_shapes) {
    auto [name, shape] = parse_input_shape(text);
    if (!o.input_shapes.emplace(name, shape).second)
      throw Error(fmt::format("--input-shape: input '{}' is given twice", name));
  }
  return o;
}

std::string human_bytes(int64_t bytes) {
  if (bytes < 1024) return fmt::format("{} B", bytes);
  if (bytes < 1024 * 1024) return fmt::format("{:.1f} KiB", double(bytes) / 1024);
  if (bytes < int64_t{1} << 30) return fmt::format("{:.1f} MiB", double(bytes) / (1024 * 1024));
  return fmt::format("{:.2f} GiB", double(bytes) / double(int64_t{1} << 30));
}

std::string human_count(int64_t n) {
  if (n < 10'000) return std::to_string(n);
  if (n < 10'000'000) return fmt::format("{:.1f} K", double(n) / 1e3);
  if (n < 10'000'000'000) return fmt::format("{:.1f} M", double(n) / 1e6);
  return fmt::format("{:.2f} G", double(n) / 1e9);
}

std::string value_str(const Graph& g, const std::string& name) {
  const ValueInfo* v = g.find_value(name);
  if (!v) return "?";
  return fmt::format("{} {}", dtype_name(v->dtype), v->has_shape ? shape_str(v->shape) : "(unknown shape)");
}

// min/max/mean: enough to see at a glance that an output is alive and sane.
std::string summary(const Tensor& t) {
  if (t.numel() == 0) return "empty";
  double lo = std::numeric_limits<double>::infinity(), hi = -lo, sum = 0;
  for (int64_t i = 0; i < t.numel(); ++i) {
    const double v = t.real_at(i);
    lo = std::min(lo, v);
    hi = std::max(hi, v);
    sum += v;
  }
  return fmt::format("min {:.6g} max {:.6g} mean {:.6g}", lo, hi, sum / double(t.numel()));
}

// A value name as a file name: path separators and the like become '_'.
std::string file_name_of(const std::string& value) {
  std::string s = value;
  for (char& c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_')) c = '_';
  return s + ".npy";
}

int run_model(const RunModelOptions& o) {
  if (std::filesystem::is_directory(o.model)) {
    if (!std::filesystem::exists(std::filesystem::path(o.model) / "manifest.yaml"))
      throw Error(fmt::format("{}: is a directory without manifest.yaml; run-model reads a model file (.onnx, .yaml) "
                              "or a compiled model (npuforge compile -o DIR)",
                              o.model));
    if (!o.input_shapes.empty() || !o.dump_dir.empty())
      throw Error("--input-shape and --dump-dir are for model files; a compiled model has fixed shapes");
    return run_compiled_model({.dir = o.model, .inputs = o.inputs, .outputs = o.outputs, .rtl = o.rtl,
                               .trace = o.trace, .backend = o.backend, .max_errors = o.max_errors,
                               .work_dir = o.work_dir, .keep = o.keep, .reference = o.reference,
                               .min_cosine = o.min_cosine});
  }
  if (o.rtl || !o.trace.empty() || !o.work_dir.empty() || o.keep || o.backend != "systemc" || !o.reference.empty() ||
      o.min_cosine != 0)
    throw Error("--rtl, --trace, --backend, --work-dir, --keep, --reference and --min-cosine are for compiled models "
                "(a directory from npuforge compile)");
  Graph graph = import_model(o.model);
  TensorMap inputs = read_inputs(graph.inputs, o.inputs);
  // Dimensions the model leaves open are taken from the input files, unless --input-shape
  // fixes them; the interpreter then checks every input against the model.
  LoadOptions load = load_options(o.input_shapes);
  for (const auto& [name, t] : inputs) {
    const ValueInfo* info = graph.find_value(name);
    if (load.input_shapes.count(name) || (info && info->shape_known())) continue;
    if (info && info->has_shape && info->shape.size() != t.rank())
      throw Error(fmt::format("{}: input '{}' is {} {}, the model expects rank {} ({})", o.model, name,
                              dtype_name(t.dtype()), shape_str(t.shape()), info->shape.size(), shape_str(info->shape)));
    load.input_shapes.emplace(name, t.shape());
  }
  prepare_graph(graph, load);
  const auto outputs_to = bind_files(graph.outputs, o.outputs, "--output");
  const Interpreter interpreter(graph);
  RunOptions run;
  run.keep_intermediates = !o.dump_dir.empty();
  const TensorMap results = interpreter.run(std::move(inputs), run);
  for (const std::string& name : graph.outputs) {
    const Tensor& t = results.at(name);
    auto file = outputs_to.find(name);
    if (file != outputs_to.end()) write_npy(file->second, t);
    fmt::print("{}: {} {}: {}{}\n", name, dtype_name(t.dtype()), shape_str(t.shape()), summary(t),
               file != outputs_to.end() ? " -> " + file->second.string() : "");
  }
  if (!o.dump_dir.empty()) {
    std::filesystem::create_directories(o.dump_dir);
    for (const auto& [name, t] : results) write_npy(std::filesystem::path(o.dump_dir) / file_name_of(name), t);
    fmt::print("{} values written to {}\n", results.size(), o.dump_dir);
  }
  return kExitOk;
}

int model_info(const ModelInfoOptions& o) {
  Graph graph = import_model(o.model);
  const size_t file_nodes = graph.nodes.size();
  prepare_graph(graph, load_options(o.input_shapes));
  const GraphStats s = graph_stats(graph);
  fmt::print("model: {}{}, opset {}\n", o.model, graph.name.empty() ? "" : " (" + graph.name + ")", graph.opset);
  fmt::print("inputs:\n");
  for (const std::string& in : graph.inputs) fmt::print("  {}: {}\n", in, value_str(graph, in));
  fmt::print("outputs:\n");
  for (const std::string& out : graph.outputs) fmt::print("  {}: {}\n", out, value_str(graph, out));
  fmt::print("nodes: {} ({} imported; constant folding and clean-up removed {})\n", graph.nodes.size(),
             file_nodes, file_nodes - std::min(file_nodes, graph.nodes.size()));
  std::vector<std::pair<std::string, int64_t>> ops(s.op_counts.begin(), s.op_counts.end());
  std::stable_sort(ops.begin(), ops.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  fmt::print("ops:\n");
  for (const auto& [op, n] : ops) fmt::print("  {:<24} {:>6}\n", op, n);
  fmt::print("parameters: {} ({}, {} in {} constants)\n", s.parameter_count, human_count(s.parameter_count),
             human_bytes(s.parameter_bytes), graph.constants.size());
  fmt::print("activations: {} values, {} in total ({} bytes)\n", s.activation_count, human_bytes(s.activation_bytes),
             s.activation_bytes);
  if (!s.largest_activation.empty())
    fmt::print("largest activation: '{}' {} ({}, {} bytes)\n", s.largest_activation,
               value_str(graph, s.largest_activation), human_bytes(s.largest_activation_bytes),
               s.largest_activation_bytes);
  fmt::print("MACs: {} ({})\n", s.macs, human_count(s.macs));
  if (!s.largest_conv.empty())
    fmt::print("largest Conv: '{}' ({} MACs)\n", s.largest_conv, human_count(s.largest_conv_macs));
  return kExitOk;
}

void add_input_shape_option(CLI::App* sub, std::vector<std::string>& shapes) {
  sub->add_option("--input-shape", shapes,
                  "Fix an input's unknown dimensions: NAME=1x3x224x224 (repeatable)");
}

}  // namespace

void add_run_model_command(CLI::App& app, Runner& run) {
  auto opts = std::make_shared<RunModelOptions>();
  auto* sub = app.add_subcommand("run-model", "Run a model (.onnx or YAML graph) on .npy inputs with the "
                                              "reference interpreter, or a compiled model (directory from npuforge "
                                              "compile) on the simulated NPU, and write its outputs as .npy");
  sub->add_option("model", opts->model, "Model file (.onnx, .yaml) or compiled model directory")
      ->required()
      ->check(input_path("model"));
  sub->add_option("--input", opts->inputs, "Input .npy, in the model's input order, or NAME=FILE.npy (repeatable)");
  sub->add_option("--output", opts->outputs, "Output .npy, in the model's output order, or NAME=FILE.npy (repeatable)");
  add_input_shape_option(sub, opts->input_shapes);
  sub->add_option("--dump-dir", opts->dump_dir, "Also write every intermediate value as DIR/<name>.npy");
  sub->add_flag("--rtl", opts->rtl, "Compiled model: the Verilated scratchpad and decoder in the loop");
  sub->add_option("--trace", opts->trace, "Compiled model: a VCD waveform per NPU segment (FILE -> FILE stem.segK.vcd)");
  sub->add_option("--backend", opts->backend, "Compiled model: systemc (default) or sequential");
  sub->add_option("--max-errors", opts->max_errors, "Compiled model: findings each NPU segment prints");
  sub->add_option("--work-dir", opts->work_dir,
                  "Compiled model: write each NPU segment's DDR images, verdict and report here (default: only a "
                  "failing segment's, into a temporary directory the output names)");
  sub->add_flag("--keep", opts->keep,
                "Compiled model: keep every NPU segment's files, not only a failing one's (in --work-dir or the "
                "temporary directory)");
  sub->add_option("--reference", opts->reference,
                  "Compiled model: the float model its outputs are judged against (default: the copy compile put in "
                  "the directory)");
  sub->add_option("--min-cosine", opts->min_cosine,
                  "Compiled model: fail when an output's cosine similarity with the float model is below this")
      ->check(CLI::Range(0.0, 1.0));
  bind_runner(sub, opts, run, &run_model);
}

void add_model_info_command(CLI::App& app, Runner& run) {
  auto opts = std::make_shared<ModelInfoOptions>();
  auto* sub = app.add_subcommand("model-info", "Ops histogram, inputs and outputs, parameters, activation sizes "
                                               "and MACs of a model (.onnx or YAML graph)");
  sub->add_option("model", opts->model, "Model file (.onnx, .yaml)")->required()->check(input_file("model"));
  add_input_shape_option(sub, opts->input_shapes);
  bind_runner(sub, opts, run, &model_info);
}

}  // namespace npuforge::tools
