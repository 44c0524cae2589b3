#include "compiler/graph_yaml.h"

#include <sstream>
#include <system_error>

#include <fmt/core.h>
#include <yaml-cpp/yaml.h>

#include "model/npy.h"
#include "util/error.h"
#include "util/file_io.h"

namespace npuforge::compiler {
namespace {

std::string q(std::string_view s) {
  YAML::Emitter e;
  e << YAML::DoubleQuoted << std::string(s);
  return e.c_str();
}

// A float that reads back as the same float ({} is the shortest round-trip form).
std::string flt(float v) {
  if (std::isnan(v)) return ".nan";
  if (std::isinf(v)) return v > 0 ? ".inf" : "-.inf";
  std::string s = fmt::format("{}", v);
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

template <class T, class F>
std::string join(const std::vector<T>& v, F&& f) {
  std::string out = "[";
  for (size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + f(v[i]);
  return out + "]";
}

std::string tensor_values(const model::Tensor& t) {
  std::string out = "[";
  for (int64_t i = 0; i < t.numel(); ++i) {
    if (i) out += ", ";
    out += t.dtype() == model::DType::kFloat32 ? flt(static_cast<float>(t.real_at(i))) : fmt::format("{}", t.int_at(i));
  }
  return out + "]";
}

std::string attribute(const model::Attribute& a) {
  return std::visit(
      [](const auto& v) -> std::string {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, int64_t>) return fmt::format("{{int: {}}}", v);
        else if constexpr (std::is_same_v<T, float>) return fmt::format("{{float: {}}}", flt(v));
        else if constexpr (std::is_same_v<T, std::string>) return fmt::format("{{string: {}}}", q(v));
        else if constexpr (std::is_same_v<T, std::vector<int64_t>>)
          return "{ints: " + join(v, [](int64_t x) { return fmt::format("{}", x); }) + "}";
        else if constexpr (std::is_same_v<T, std::vector<float>>) return "{floats: " + join(v, flt) + "}";
        else if constexpr (std::is_same_v<T, std::vector<std::string>>)
          return "{strings: " + join(v, [](const std::string& s) { return q(s); }) + "}";
        else
          return fmt::format("{{tensor: {{dtype: {}, shape: {}, values: {}}}}}", model::dtype_name(v.dtype()),
                             join(v.shape(), [](int64_t x) { return fmt::format("{}", x); }), tensor_values(v));
      },
      a.value);
}

}  // namespace

void write_graph_yaml(const model::Graph& g, const std::filesystem::path& yaml_path,
                      const std::filesystem::path& const_dir, const std::string& comment) {
  const std::filesystem::path base = yaml_path.parent_path();
  std::error_code ec;
  std::filesystem::create_directories(base / const_dir, ec);
  if (ec) throw Error(fmt::format("{}: cannot create the directory: {}", (base / const_dir).string(), ec.message()));
  std::string out;
  std::istringstream lines(comment);
  for (std::string line; std::getline(lines, line);) out += "# " + line + "\n";
  if (!g.name.empty()) out += "name: " + q(g.name) + "\n";
  out += fmt::format("opset: {}\n", g.opset);
  out += "inputs:\n";
  for (const std::string& in : g.inputs) {
    const model::ValueInfo* v = g.find_value(in);
    if (!v || !v->shape_known()) throw Error(fmt::format("{}: input '{}' has no known shape", g.source, in));
    out += fmt::format("  - {{name: {}, dtype: {}, shape: {}}}\n", q(in), model::dtype_name(v->dtype),
                       join(v->shape, [](int64_t x) { return fmt::format("{}", x); }));
  }
  out += "outputs:\n";
  for (const std::string& o : g.outputs) out += fmt::format("  - {{name: {}}}\n", q(o));
  if (!g.constants.empty()) out += "constants:\n";
  size_t k = 0;
  for (const auto& [name, t] : g.constants) {
    const std::filesystem::path file = const_dir / fmt::format("c{}.npy", k++);
    model::write_npy(base / file, t);
    out += fmt::format("  - {{name: {}, file: {}}}\n", q(name), q(file.generic_string()));
  }
  out += g.nodes.empty() ? "nodes: []\n" : "nodes:\n";
  for (const model::Node& n : g.nodes) {
    out += fmt::format("  - name: {}\n    op: {}\n", q(n.name), q(n.op_type));
    if (!n.domain.empty()) out += fmt::format("    domain: {}\n", q(n.domain));
    out += "    inputs: " + join(n.inputs, [](const std::string& s) { return q(s); }) + "\n";
    out += "    outputs: " + join(n.outputs, [](const std::string& s) { return q(s); }) + "\n";
    if (!n.attributes.empty()) {
      out += "    attributes:\n";
      for (const auto& [key, a] : n.attributes) out += fmt::format("      {}: {}\n", q(key), attribute(a));
    }
  }
  util::write_file(yaml_path, out, "CPU step graph");
}

}  // namespace npuforge::compiler
