#include "model/yaml_import.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include <fmt/core.h>

#include "model/attribute_names.h"
#include "model/npy.h"
#include "model/op.h"
#include "model/random_tensor.h"
#include "util/error.h"
#include "util/file_io.h"
#include "util/rng.h"
#include "util/suggest.h"
#include "util/yaml_util.h"

namespace npuforge::model {
namespace {

using util::read_int;
using util::read_string;
using util::reject_unknown_keys;
using util::where;

struct Reader {
  std::string source;
  std::filesystem::path base_dir;

  [[noreturn]] void fail(const YAML::Node& at, std::string_view message) const {
    throw Error(fmt::format("{}: {}", where(source, at), message));
  }

  YAML::Node require_list(const YAML::Node& node, std::string_view key) const {  // by value: callers pass temporaries
    if (!node.IsSequence()) fail(node, fmt::format("'{}' must be a list", key));
    return node;
  }

  DType dtype(const YAML::Node& node, std::string_view key) const {
    const std::string name = read_string(node, key, source);
    const auto t = dtype_from_name(name);
    if (!t) fail(node, fmt::format("'{}' = '{}' is not a dtype (float32, uint8, int8, int32, int64, bool)", key, name));
    return *t;
  }

  // Dims of a constant: non-negative integers.
  Shape shape(const YAML::Node& node, std::string_view key) const {
    Shape s;
    for (const auto& d : require_list(node, key)) s.push_back(read_int(d, key, source, 0, int64_t{1} << 40));
    return s;
  }

  // Dims of an input or output may also be unknown: "?" or a symbolic name ("batch").
  ValueInfo value_info(const YAML::Node& node, std::string_view what) const {
    reject_unknown_keys(node, {"name", "dtype", "shape"}, source, what);
    ValueInfo info;
    if (node["dtype"]) info.dtype = dtype(node["dtype"], "dtype");
    if (!node["shape"]) return info;
    info.has_shape = true;
    for (const auto& d : require_list(node["shape"], "shape")) {
      if (d.IsScalar() && !d.Scalar().empty() && (std::isalpha(static_cast<unsigned char>(d.Scalar()[0])) ||
                                                   d.Scalar() == "?")) {
        info.shape.push_back(kUnknownDim);
        info.dim_names.push_back(d.Scalar() == "?" ? "" : d.Scalar());
      } else {
        info.shape.push_back(read_int(d, "shape", source, 0, int64_t{1} << 40));
        info.dim_names.emplace_back();
      }
    }
    return info;
  }

  // A number as YAML writes it (".inf", "-.inf", ".nan" included).
  double number(const YAML::Node& node, std::string_view key) const {
    if (!node.IsScalar()) fail(node, fmt::format("'{}' must hold numbers", key));
    const std::string& s = node.Scalar();
    if (s == ".inf" || s == "+.inf" || s == ".Inf") return std::numeric_limits<double>::infinity();
    if (s == "-.inf" || s == "-.Inf") return -std::numeric_limits<double>::infinity();
    if (s == ".nan" || s == ".NaN") return std::numeric_limits<double>::quiet_NaN();
    if (s == "true") return 1;
    if (s == "false") return 0;
    size_t used = 0;
    double v = 0;
    try {
      v = std::stod(s, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (s.empty() || used != s.size()) fail(node, fmt::format("'{}': '{}' is not a number", key, s));
    return v;
  }

  void flatten(const YAML::Node& node, std::string_view key, std::vector<std::pair<double, YAML::Node>>& out) const {
    if (node.IsSequence()) {
      for (const auto& v : node) flatten(v, key, out);
    } else {
      out.emplace_back(number(node, key), node);
    }
  }

  // Stores `v` into element i of `t`; a value the dtype cannot hold exactly is an error.
  void store(Tensor& t, int64_t i, double v, const YAML::Node& at, std::string_view key) const {
    const size_t k = static_cast<size_t>(i);
    const auto integral = [&](double lo, double hi) {
      if (!(v >= lo && v <= hi) || v != std::floor(v))
        fail(at, fmt::format("'{}': {} is not a valid {} value", key, v, dtype_name(t.dtype())));
    };
    switch (t.dtype()) {
      case DType::kFloat32: t.values<float>()[k] = static_cast<float>(v); break;
      case DType::kUInt8: integral(0, 255); t.values<uint8_t>()[k] = static_cast<uint8_t>(v); break;
      case DType::kInt8: integral(-128, 127); t.values<int8_t>()[k] = static_cast<int8_t>(v); break;
      case DType::kInt32: integral(-2147483648.0, 2147483647.0); t.values<int32_t>()[k] = static_cast<int32_t>(v); break;
      case DType::kInt64: integral(-9.2e18, 9.2e18); t.values<int64_t>()[k] = static_cast<int64_t>(v); break;
      case DType::kBool: integral(0, 1); t.values<bool>()[k] = v != 0; break;
    }
  }

  Tensor make_tensor(DType dtype, const Shape& shape, const YAML::Node& at) const {
    try {
      return Tensor(dtype, shape);
    } catch (const Error& e) {
      fail(at, e.what());
    } catch (const std::bad_alloc&) {
      fail(at, fmt::format("a tensor of shape {} does not fit in memory", shape_str(shape)));
    }
  }

  Tensor inline_values(const YAML::Node& node, DType dtype, const Shape& shape) const {
    std::vector<std::pair<double, YAML::Node>> flat;
    flatten(node, "values", flat);
    Tensor t = make_tensor(dtype, shape, node);
    if (static_cast<int64_t>(flat.size()) != t.numel())
      fail(node, fmt::format("'values' holds {} numbers, the shape {} needs {}", flat.size(), shape_str(shape), t.numel()));
    for (size_t i = 0; i < flat.size(); ++i) store(t, static_cast<int64_t>(i), flat[i].first, flat[i].second, "values");
    return t;
  }

  // random: {seed: S, low: L, high: H}: floats uniform in [low, high) (default [-1, 1)),
  // integers uniform in [low, high] (default the dtype's range, [-1000, 1000] for the wide
  // ones). npuforge::Rng makes the values the same on every machine.
  Tensor random_values(const YAML::Node& node, DType dtype, const Shape& shape) const {
    reject_unknown_keys(node, {"seed", "low", "high"}, source, "random");
    if (!node["seed"]) fail(node, "'random' needs a 'seed'");
    Rng rng(static_cast<uint64_t>(read_int(node["seed"], "seed", source, 0, INT64_MAX)));
    Tensor t = make_tensor(dtype, shape, node);
    if (dtype == DType::kFloat32) {
      const double low = node["low"] ? number(node["low"], "low") : -1.0;
      const double high = node["high"] ? number(node["high"], "high") : 1.0;
      if (!(low <= high)) fail(node, "'random': low must not exceed high");
      fill_random(t, rng, {low, high});
      return t;
    }
    int64_t lo = -1000, hi = 1000;
    if (dtype == DType::kInt8) lo = -128, hi = 127;
    if (dtype == DType::kUInt8) lo = 0, hi = 255;
    if (dtype == DType::kBool) lo = 0, hi = 1;
    if (node["low"]) lo = read_int(node["low"], "low", source, INT64_MIN, INT64_MAX);
    if (node["high"]) hi = read_int(node["high"], "high", source, INT64_MIN, INT64_MAX);
    if (lo > hi) fail(node, "'random': low must not exceed high");
    for (int64_t i = 0; i < t.numel(); ++i) store(t, i, static_cast<double>(rng.range(lo, hi)), node, "random");
    return t;
  }

  Tensor constant(const YAML::Node& node, const std::string& name) const {
    const std::string what = fmt::format("constant '{}'", name);
    reject_unknown_keys(node, {"name", "dtype", "shape", "values", "random", "fill", "file"}, source, what);
    int sources = 0;
    for (const char* k : {"values", "random", "fill", "file"}) sources += node[k] ? 1 : 0;
    if (sources != 1) fail(node, fmt::format("{} needs exactly one of values, random, fill or file", what));
    const bool has_dtype = static_cast<bool>(node["dtype"]);
    const DType dtype = has_dtype ? this->dtype(node["dtype"], "dtype") : DType::kFloat32;
    std::optional<Shape> shape = node["shape"] ? std::optional(this->shape(node["shape"], "shape")) : std::nullopt;
    if (node["file"]) {
      const std::filesystem::path file = base_dir / read_string(node["file"], "file", source);
      Tensor t = read_npy(file);
      if (has_dtype && dtype != t.dtype())
        fail(node, fmt::format("{}: dtype {} but {} holds {}", what, dtype_name(dtype), file.string(), dtype_name(t.dtype())));
      if (shape && *shape != t.shape())
        fail(node, fmt::format("{}: shape {} but {} holds {}", what, shape_str(*shape), file.string(), shape_str(t.shape())));
      return t;
    }
    if (!shape) {
      if (!node["values"]) fail(node, fmt::format("{} needs a 'shape'", what));
      // Inline values without a shape: a scalar or a flat list.
      shape = node["values"].IsSequence() ? Shape{static_cast<int64_t>(node["values"].size())} : Shape{};
    }
    if (node["values"]) return inline_values(node["values"], dtype, *shape);
    if (node["random"]) return random_values(node["random"], dtype, *shape);
    Tensor filled = make_tensor(dtype, *shape, node);
    const double v = number(node["fill"], "fill");
    for (int64_t i = 0; i < filled.numel(); ++i) store(filled, i, v, node["fill"], "fill");
    return filled;
  }

  bool is_integer(const std::string& s) const {
    if (s.empty()) return false;
    size_t i = (s[0] == '-' || s[0] == '+') ? 1 : 0;
    if (i == s.size()) return false;
    for (; i < s.size(); ++i)
      if (!std::isdigit(static_cast<unsigned char>(s[i]))) return false;
    return true;
  }

  bool is_number(const std::string& s) const {
    if (s.empty()) return false;
    size_t used = 0;
    try {
      std::stod(s, &used);
    } catch (const std::exception&) {
      return false;
    }
    return used == s.size();
  }

  // Scalars are ints, floats (with a '.' or exponent) or strings by their look; lists are
  // ints unless one element is a float, or strings; {ints|floats|int|float|string|strings:
  // ...} forces a kind; {tensor: {dtype, shape, values}} is a tensor.
  Attribute attribute(const YAML::Node& node, const std::string& key) const {
    if (node.IsMap()) {
      reject_unknown_keys(node, {"int", "float", "string", "ints", "floats", "strings", "tensor"}, source,
                          fmt::format("attribute '{}'", key));
      if (node.size() != 1) fail(node, fmt::format("attribute '{}' needs exactly one kind key", key));
      const std::string kind = node.begin()->first.as<std::string>();
      const YAML::Node v = node.begin()->second;
      if (kind == "int") return {read_int(v, key, source, INT64_MIN, INT64_MAX)};
      if (kind == "float") return {static_cast<float>(number(v, key))};
      if (kind == "string") return {read_string(v, key, source)};
      if (kind == "ints") {
        std::vector<int64_t> out;
        for (const auto& e : require_list(v, key)) out.push_back(read_int(e, key, source, INT64_MIN, INT64_MAX));
        return {out};
      }
      if (kind == "floats") {
        std::vector<float> out;
        for (const auto& e : require_list(v, key)) out.push_back(static_cast<float>(number(e, key)));
        return {out};
      }
      if (kind == "strings") {
        std::vector<std::string> out;
        for (const auto& e : require_list(v, key)) out.push_back(read_string(e, key, source));
        return {out};
      }
      reject_unknown_keys(v, {"dtype", "shape", "values"}, source, fmt::format("attribute '{}' tensor", key));
      if (!v["values"]) fail(v, fmt::format("attribute '{}': a tensor needs 'values'", key));
      const DType dt = v["dtype"] ? dtype(v["dtype"], "dtype") : DType::kFloat32;
      const Shape sh = v["shape"] ? shape(v["shape"], "shape")
                       : v["values"].IsSequence() ? Shape{static_cast<int64_t>(v["values"].size())}
                                                  : Shape{};
      return {inline_values(v["values"], dt, sh)};
    }
    if (node.IsScalar()) {
      const std::string& s = node.Scalar();
      if (node.Tag() == "!") return {s};  // quoted: a string even when it looks like a number
      if (is_integer(s)) return {read_int(node, key, source, INT64_MIN, INT64_MAX)};
      if (is_number(s) || s.starts_with(".") || s.starts_with("-.")) return {static_cast<float>(number(node, key))};
      return {s};
    }
    if (!node.IsSequence()) fail(node, fmt::format("attribute '{}' must be a scalar, a list or a map", key));
    bool all_int = true, all_number = true;
    for (const auto& e : node) {
      if (!e.IsScalar()) fail(e, fmt::format("attribute '{}': list elements must be scalars", key));
      all_int = all_int && is_integer(e.Scalar());
      all_number = all_number && (is_number(e.Scalar()) || e.Scalar().starts_with(".") || e.Scalar().starts_with("-."));
    }
    if (node.size() > 0 && all_int) {
      std::vector<int64_t> out;
      for (const auto& e : node) out.push_back(read_int(e, key, source, INT64_MIN, INT64_MAX));
      return {out};
    }
    if (node.size() > 0 && all_number) {
      std::vector<float> out;
      for (const auto& e : node) out.push_back(static_cast<float>(number(e, key)));
      return {out};
    }
    std::vector<std::string> out;
    for (const auto& e : node) out.push_back(e.Scalar());
    if (out.empty()) return {std::vector<int64_t>{}};
    return {out};
  }

  std::vector<std::string> names(const YAML::Node& node, std::string_view key) const {
    std::vector<std::string> out;
    for (const auto& e : require_list(node, key)) {
      if (e.IsNull()) {
        out.emplace_back();  // `~` marks an omitted optional input, like ""
        continue;
      }
      out.push_back(read_string(e, key, source));
    }
    return out;
  }

  // An attribute ONNX does not define for the op is a typo, not something to ignore: the op
  // would run with its default (or say a required one is missing, with no word of the typo).
  void check_attribute_name(const YAML::Node& key_node, const std::string& key, const Node& node, int64_t opset) const {
    const auto known = onnx_attribute_names(node.domain, node.op_type, opset);
    if (!known || std::find(known->begin(), known->end(), key) != known->end()) return;
    const std::string hint = util::did_you_mean(key, *known);
    std::string list;
    for (const auto& k : *known) list += fmt::format("{}{}", list.empty() ? "" : ", ", k);
    fail(key_node, fmt::format("node '{}': unknown attribute '{}' of {}{}{} ({} takes: {})", node.name, key, node.op_type,
                               hint.empty() ? "" : "; ", hint, node.op_type, list.empty() ? "no attributes" : list));
  }

  Node node(const YAML::Node& n, size_t index, int64_t opset) const {
    reject_unknown_keys(n, {"name", "op", "domain", "inputs", "outputs", "attributes"}, source, "node");
    Node node;
    if (!n["op"]) fail(n, "a node needs 'op'");
    node.op_type = read_string(n["op"], "op", source);
    node.name = n["name"] ? read_string(n["name"], "name", source) : fmt::format("{}_{}", node.op_type, index);
    if (n["domain"]) node.domain = read_string(n["domain"], "domain", source);
    if (node.domain == "ai.onnx") node.domain.clear();
    if (n["inputs"]) node.inputs = names(n["inputs"], "inputs");
    if (!n["outputs"]) fail(n, fmt::format("node '{}' needs 'outputs'", node.name));
    node.outputs = names(n["outputs"], "outputs");
    if (n["attributes"]) {
      util::require_map(n["attributes"], source, "attributes");
      for (const auto& kv : n["attributes"]) {
        const std::string key = util::key_string(kv.first, source);
        check_attribute_name(kv.first, key, node, opset);
        node.attributes.emplace(key, attribute(kv.second, key));
      }
    }
    return node;
  }

  Graph graph(const YAML::Node& root) const {
    reject_unknown_keys(root, {"name", "opset", "inputs", "outputs", "constants", "nodes"}, source, "model graph");
    Graph g;
    g.source = source;
    g.name = root["name"] ? read_string(root["name"], "name", source) : std::string();
    g.opset = root["opset"] ? read_int(root["opset"], "opset", source, 1, 1000) : 17;
    std::set<std::string, std::less<>> defined;
    const auto define = [&](const YAML::Node& at, const std::string& name) {
      if (name.empty()) fail(at, "a name must not be empty");
      if (!defined.insert(name).second) fail(at, fmt::format("'{}' is defined twice", name));
    };
    if (!root["inputs"] || !root["outputs"] || !root["nodes"]) fail(root, "a model graph needs inputs, outputs and nodes");
    for (const auto& in : require_list(root["inputs"], "inputs")) {
      if (!in.IsMap() || !in["name"]) fail(in, "an input needs a 'name'");
      const std::string name = read_string(in["name"], "name", source);
      define(in, name);
      g.inputs.push_back(name);
      g.values[name] = value_info(in, fmt::format("input '{}'", name));
    }
    if (root["constants"]) {
      for (const auto& c : require_list(root["constants"], "constants")) {
        if (!c.IsMap() || !c["name"]) fail(c, "a constant needs a 'name'");
        const std::string name = read_string(c["name"], "name", source);
        define(c, name);
        g.constants.emplace(name, constant(c, name));
        g.values[name] = known(g.constants.at(name).dtype(), g.constants.at(name).shape());
      }
    }
    size_t index = 0;
    for (const auto& n : require_list(root["nodes"], "nodes")) {
      g.nodes.push_back(node(n, index++, g.opset));
      for (const std::string& out : g.nodes.back().outputs)
        if (!out.empty()) define(n, out);
    }
    std::set<std::string, std::less<>> node_names;
    for (const Node& n : g.nodes)
      if (!node_names.insert(n.name).second) n.fail(fmt::format("{}: node name is used twice", source));
    for (const auto& out : require_list(root["outputs"], "outputs")) {
      if (!out.IsMap() || !out["name"]) fail(out, "an output needs a 'name'");
      const std::string name = read_string(out["name"], "name", source);
      if (!defined.count(name)) fail(out, fmt::format("output '{}' is not an input, a constant or a node output", name));
      for (const std::string& o : g.outputs)
        if (o == name) fail(out, fmt::format("output '{}' is listed twice", name));
      g.outputs.push_back(name);
      // A declared type of a node output is checked by shape inference.
      if (out["dtype"] || out["shape"]) {
        if (!g.values.count(name)) g.values[name] = value_info(out, fmt::format("output '{}'", name));
      } else {
        reject_unknown_keys(out, {"name", "dtype", "shape"}, source, fmt::format("output '{}'", name));
      }
    }
    try {
      sort_topologically(g);
    } catch (const Error& e) {
      throw Error(fmt::format("{}: {}", source, e.what()));
    }
    return g;
  }
};

}  // namespace

Graph import_yaml_string(std::string_view text, std::string_view source, const std::filesystem::path& base_dir) {
  const YAML::Node root = util::load_yaml_string(text, source);
  return Reader{std::string(source), base_dir}.graph(root);
}

Graph import_yaml_file(const std::filesystem::path& path) {
  return import_yaml_string(util::read_file(path, "model graph"), path.string(), path.parent_path());
}

}  // namespace npuforge::model
