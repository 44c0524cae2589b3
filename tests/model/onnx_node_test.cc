// The ONNX backend test data shipped by Debian's libonnx-testdata (node tests, pytorch-
// converted, pytorch-operator, simple): every case is imported, run on its input_N.pb and
// compared with its output_N.pb (float: |a - b| <= 1e-5 + 1e-4 |b|; integers exactly), and
// the inferred shapes are cross-checked with ONNX's own shape inference.
//
// A case counts as supported when every op in it is in the registry (at the model's opset).
// Failures are: a wrong result, a shape that disagrees with ONNX, an npuforge::Error that does
// not say "not supported" (an op that rejects a variant it does not implement must say so),
// and any other exception. An unsupported case must end in a clear npuforge::Error naming
// the file: never a crash. The tables print pass/total per op; NPUFORGE_NODE_TEST_VERBOSE=1
// prints every case.
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>

#include <fmt/core.h>
#include <gtest/gtest.h>

#include "model/interpreter.h"
#include "model/load.h"
#include "model/onnx_import.h"
#include "onnx_shape_check.h"
#include "test_ops.h"
#include "util/error.h"
#include "util/file_io.h"

namespace npuforge::model {
namespace {

namespace fs = std::filesystem;

// The data directory: $NPUFORGE_ONNX_TESTDATA, else where dpkg says the package put it.
std::optional<fs::path> testdata_root() {
  if (const char* env = std::getenv("NPUFORGE_ONNX_TESTDATA")) return fs::path(env);
  FILE* p = popen("dpkg -L libonnx-testdata 2>/dev/null", "r");
  if (!p) return std::nullopt;
  std::string out;
  std::array<char, 4096> buf;
  while (size_t n = fread(buf.data(), 1, buf.size(), p)) out.append(buf.data(), n);
  pclose(p);
  size_t pos = 0;
  while (pos < out.size()) {
    size_t end = out.find('\n', pos);
    if (end == std::string::npos) end = out.size();
    const std::string line = out.substr(pos, end - pos);
    const std::string suffix = "/data/node";
    if (line.size() > suffix.size() && line.compare(line.size() - suffix.size(), suffix.size(), suffix) == 0 &&
        fs::is_directory(line))
      return fs::path(line).parent_path();
    pos = end + 1;
  }
  return std::nullopt;
}

enum class Outcome { kPass, kUnsupported, kFail };

struct CaseResult {
  Outcome outcome = Outcome::kPass;
  bool supported = false;       // every op in the registry
  std::set<std::string> ops;    // op types in the model (Constant aside)
  std::string message;
  bool legacy_opset = false;    // opset 6 read as 7 (see read_legacy_opset_as_7)
};

std::string tensor_diff(const Tensor& got, const Tensor& want) {
  if (got.dtype() != want.dtype() || got.shape() != want.shape())
    return fmt::format("got {} {}, expected {} {}", dtype_name(got.dtype()), shape_str(got.shape()),
                       dtype_name(want.dtype()), shape_str(want.shape()));
  for (int64_t i = 0; i < got.numel(); ++i) {
    if (got.dtype() == DType::kFloat32) {
      const double a = got.real_at(i), b = want.real_at(i);
      if (std::isnan(a) && std::isnan(b)) continue;
      if (a == b) continue;  // infinities
      if (!(std::fabs(a - b) <= 1e-5 + 1e-4 * std::fabs(b)))
        return fmt::format("element {}: got {:.9g}, expected {:.9g}", i, a, b);
    } else if (got.int_at(i) != want.int_at(i)) {
      return fmt::format("element {}: got {}, expected {}", i, got.int_at(i), want.int_at(i));
    }
  }
  return "";
}

std::vector<fs::path> numbered(const fs::path& dir, const std::string& prefix) {
  std::vector<fs::path> files;
  for (int i = 0; fs::exists(dir / fmt::format("{}_{}.pb", prefix, i)); ++i) files.push_back(dir / fmt::format("{}_{}.pb", prefix, i));
  return files;
}

// Many pytorch-converted cases (depthwise, grouped, dilated Conv) declare opset 6, below
// the 7 npuforge reads. When ONNX's schema registry says each of the model's ops has the
// same definition at opset 6 as at 7, the case is read as opset 7: the same semantics, so
// still a golden for the opset-7 implementation. Returns whether it did.
bool read_legacy_opset_as_7(onnx::ModelProto& proto) {
  for (auto& o : *proto.mutable_opset_import()) {
    if (!(o.domain().empty() || o.domain() == "ai.onnx") || o.version() >= kMinOpset) continue;
    for (const auto& n : proto.graph().node()) {
      if (!n.domain().empty() && n.domain() != "ai.onnx") continue;
      const auto* old_schema = onnx::OpSchemaRegistry::Schema(n.op_type(), static_cast<int>(o.version()), "");
      const auto* new_schema = onnx::OpSchemaRegistry::Schema(n.op_type(), static_cast<int>(kMinOpset), "");
      if (!old_schema || !new_schema || old_schema->since_version() != new_schema->since_version()) return false;
    }
    o.set_version(kMinOpset);
    return true;
  }
  return false;
}

// The op types of the model and whether the registry covers them all.
void classify(const onnx::ModelProto& proto, const OpRegistry& ops, CaseResult& r) {
  int64_t opset = 0;
  for (const auto& o : proto.opset_import())
    if (o.domain().empty() || o.domain() == "ai.onnx") opset = o.version();
  r.supported = opset >= kMinOpset && opset <= kMaxOpset;
  for (const auto& n : proto.graph().node()) {
    const std::string domain = n.domain() == "ai.onnx" ? "" : n.domain();
    const std::string op = domain.empty() ? n.op_type() : domain + "." + n.op_type();
    if (op == "Constant") continue;
    r.ops.insert(op);
    if (op == "Identity" || op == "Dropout") continue;  // the importer removes these
    const OpDef* def = ops.find(domain, n.op_type());
    if (!def || (domain.empty() && (opset < def->min_opset || opset > def->max_opset))) r.supported = false;
  }
}

CaseResult run_case(const fs::path& dir, const OpRegistry& ops) {
  CaseResult r;
  const fs::path model_path = dir / "model.onnx";
  onnx::ModelProto proto;
  {
    const std::string bytes = util::read_file(model_path);
    if (!proto.ParseFromString(bytes)) {
      r.outcome = Outcome::kFail;
      r.message = "protobuf cannot parse the test's model";
      return r;
    }
  }
  r.legacy_opset = read_legacy_opset_as_7(proto);
  classify(proto, ops, r);
  try {
    const std::string bytes = proto.SerializeAsString();
    Graph graph = import_onnx_bytes({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()}, model_path.string());
    std::vector<fs::path> sets;
    for (const auto& e : fs::directory_iterator(dir))
      if (e.is_directory() && e.path().filename().string().starts_with("test_data_set_")) sets.push_back(e.path());
    std::sort(sets.begin(), sets.end());
    if (sets.empty()) throw Error("no test_data_set_N directory");
    for (const fs::path& set : sets) {
      const auto input_files = numbered(set, "input");
      const auto output_files = numbered(set, "output");
      if (input_files.size() != graph.inputs.size())
        throw Error(fmt::format("{} input files for {} graph inputs", input_files.size(), graph.inputs.size()));
      if (output_files.size() != graph.outputs.size())
        throw Error(fmt::format("{} output files for {} graph outputs", output_files.size(), graph.outputs.size()));
      TensorMap inputs;
      LoadOptions load;
      load.infer.ops = &ops;
      for (size_t i = 0; i < input_files.size(); ++i) {
        Tensor t = read_tensor_pb(input_files[i]);
        const ValueInfo* info = graph.find_value(graph.inputs[i]);
        if (info && !info->shape_known() && (!info->has_shape || info->shape.size() == t.rank()))
          load.input_shapes.emplace(graph.inputs[i], t.shape());
        inputs.emplace(graph.inputs[i], std::move(t));
      }
      Graph prepared = graph;
      prepare_graph(prepared, load);
      const Interpreter interpreter(prepared, &ops);
      const TensorMap outputs = interpreter.run(std::move(inputs));
      for (size_t i = 0; i < output_files.size(); ++i) {
        const Tensor want = read_tensor_pb(output_files[i]);
        const std::string diff = tensor_diff(outputs.at(prepared.outputs[i]), want);
        if (!diff.empty()) {
          r.outcome = Outcome::kFail;
          r.message = fmt::format("{}: output '{}': {}", set.filename().string(), prepared.outputs[i], diff);
          return r;
        }
      }
      const auto check = testing::compare_with_onnx_inference(proto, prepared);
      if (!check.mismatches.empty()) {
        r.outcome = Outcome::kFail;
        r.message = "shape inference disagrees with ONNX's: " + check.mismatches[0];
        return r;
      }
    }
    r.outcome = Outcome::kPass;
  } catch (const Error& e) {
    r.message = e.what();
    const bool clear = r.message.find("not supported") != std::string::npos;
    // An op outside the registry must fail, and clearly (naming the file); an op inside
    // it may only refuse a variant it says it does not support.
    if (!r.message.starts_with(model_path.string())) {
      r.outcome = Outcome::kFail;
      r.message = "error does not name the model file: " + r.message;
    } else {
      r.outcome = (!r.supported || clear) ? Outcome::kUnsupported : Outcome::kFail;
    }
  } catch (const std::exception& e) {
    r.outcome = Outcome::kFail;
    r.message = fmt::format("not an npuforge::Error ({}): {}", typeid(e).name(), e.what());
  }
  return r;
}

struct Tally {
  int pass = 0, unsupported = 0, fail = 0;
  int total() const { return pass + unsupported + fail; }
};

struct SetReport {
  std::map<std::string, Tally> per_op;
  Tally overall;
  int legacy_opset = 0;
  std::vector<std::string> failures;
};

SetReport run_set(const fs::path& set_dir, const OpRegistry& ops, const std::string& only = "") {
  SetReport report;
  const bool verbose = std::getenv("NPUFORGE_NODE_TEST_VERBOSE") != nullptr;
  std::vector<fs::path> cases;
  for (const auto& e : fs::directory_iterator(set_dir))
    if (e.is_directory() && fs::exists(e.path() / "model.onnx") && (only.empty() || e.path().filename() == only))
      cases.push_back(e.path());
  std::sort(cases.begin(), cases.end());
  for (const fs::path& c : cases) {
    const CaseResult r = run_case(c, ops);
    const auto count = [&](Tally& t) {
      (r.outcome == Outcome::kPass ? t.pass : r.outcome == Outcome::kUnsupported ? t.unsupported : t.fail)++;
    };
    count(report.overall);
    report.legacy_opset += r.legacy_opset;
    for (const std::string& op : r.ops) count(report.per_op[op]);
    if (r.outcome == Outcome::kFail) report.failures.push_back(fmt::format("{}: {}", c.filename().string(), r.message));
    if (verbose)
      fmt::print("{:<60} {}{}{}\n", c.filename().string(), r.legacy_opset ? "(opset 6 read as 7) " : "",
                 r.outcome == Outcome::kPass ? "pass" : r.outcome == Outcome::kUnsupported ? "unsupported" : "FAIL",
                 r.outcome == Outcome::kPass ? "" : ": " + r.message);
  }
  return report;
}

void print_report(const std::string& name, const SetReport& report) {
  fmt::print("ONNX test data '{}': per op (pass/total, unsupported, FAIL)\n", name);
  for (const auto& [op, t] : report.per_op) {
    if (t.pass == 0 && t.fail == 0) continue;  // ops with no supported case: summarised below
    fmt::print("  {:<32} {:>3}/{:<3}  unsupported {:>3}  fail {}\n", op, t.pass, t.total(), t.unsupported, t.fail);
  }
  int unsupported_ops = 0;
  for (const auto& [op, t] : report.per_op) unsupported_ops += (t.pass == 0 && t.fail == 0);
  fmt::print("  ({} more ops appear only in unsupported cases)\n", unsupported_ops);
  fmt::print("ONNX test data '{}': {}/{} cases pass, {} unsupported (clear error), {} fail ({} opset-6 models "
             "read as opset 7)\n", name, report.overall.pass, report.overall.total(), report.overall.unsupported,
             report.overall.fail, report.legacy_opset);
}

class OnnxTestData : public ::testing::TestWithParam<const char*> {};

TEST_P(OnnxTestData, SupportedCasesPassAndOthersFailClearly) {
  const auto root = testdata_root();
  if (!root) GTEST_SKIP() << "libonnx-testdata is not installed (apt-get install libonnx-testdata, or set NPUFORGE_ONNX_TESTDATA)";
  const fs::path dir = *root / GetParam();
  if (!fs::is_directory(dir)) GTEST_SKIP() << dir << " is missing";
  const SetReport report = run_set(dir, builtin_ops());
  print_report(GetParam(), report);
  EXPECT_GT(report.overall.total(), 0);
  for (const std::string& f : report.failures) ADD_FAILURE() << f;
}

INSTANTIATE_TEST_SUITE_P(Sets, OnnxTestData,
                         ::testing::Values("node", "pytorch-converted", "pytorch-operator", "simple"),
                         [](const auto& info) {
                           std::string s = info.param;
                           for (char& c : s) c = std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
                           return s;
                         });

// The harness itself catches wrong results: a planted Relu that forgets to clamp fails the
// real test_relu case, the correct one passes, and the case is unsupported without Relu.
std::vector<Tensor> relu_without_clamp(const RunContext& c) { return {c.input(0)}; }

TEST(OnnxTestDataHarness, CatchesAPlantedWrongOp) {
  const auto root = testdata_root();
  if (!root || !fs::exists(*root / "node" / "test_relu")) GTEST_SKIP() << "libonnx-testdata is not installed";
  OpRegistry planted;
  planted.add({.domain = "", .op_type = "Relu", .min_opset = 1, .max_opset = 17, .infer = testing::same_as_input,
               .run = relu_without_clamp});
  SetReport bad = run_set(*root / "node", planted, "test_relu");
  ASSERT_EQ(bad.overall.fail, 1);
  EXPECT_NE(bad.failures[0].find("test_relu: test_data_set_0: output 'y': element"), std::string::npos) << bad.failures[0];
  const SetReport good = run_set(*root / "node", testing::test_registry(), "test_relu");
  EXPECT_EQ(good.overall.pass, 1);
  const SetReport none = run_set(*root / "node", OpRegistry(), "test_relu");
  EXPECT_EQ(none.overall.unsupported, 1);
}

}  // namespace
}  // namespace npuforge::model
