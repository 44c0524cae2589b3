#include "util/file_io.h"
#include "planner/plan_io.h"

#include <charconv>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <vector>

#include <fmt/core.h>
#include <yaml-cpp/yaml.h>

#include "util/error.h"
#include "util/text.h"
#include "util/yaml_util.h"

namespace npuforge::planner {
namespace {

// Bounds on what a plan may hold, so that the planners' and the checker's arithmetic (end =
// offset + size, sums of live sizes, upper - lower, upper + 1 for inclusive lifetimes) cannot
// overflow: 1 TiB per size or offset, times within +-2^60.
constexpr int64_t kMaxBytes = int64_t{1} << 40;
constexpr int64_t kMaxTime = int64_t{1} << 60;

enum class Column { kId, kLower, kUpper, kUpperInclusive, kSize, kAlignment, kOffset, kIgnored };

std::optional<Column> column_of(std::string_view name) {
  static const std::map<std::string_view, Column> kColumns = {
      {"id", Column::kId},         {"buffer", Column::kId},       {"buffer_id", Column::kId},
      {"lower", Column::kLower},   {"start", Column::kLower},     {"begin", Column::kLower},
      {"upper", Column::kUpper},   {"end", Column::kUpperInclusive},
      {"size", Column::kSize},     {"alignment", Column::kAlignment},
      {"offset", Column::kOffset}, {"hint", Column::kIgnored}};
  auto it = kColumns.find(name);
  if (it == kColumns.end()) return std::nullopt;
  return it->second;
}

struct Field {
  std::string_view text;
  size_t column;  // 1-based character column
};

std::vector<Field> split(std::string_view line) {
  std::vector<Field> out;
  size_t start = 0;
  while (true) {
    size_t comma = line.find(',', start);
    out.push_back({line.substr(start, comma - start), start + 1});
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return out;
}

int64_t parse_int(std::string_view source, size_t line, const Field& f, std::string_view what,
                  int64_t min, int64_t max) {
  int64_t v = 0;
  auto [p, ec] = std::from_chars(f.text.data(), f.text.data() + f.text.size(), v);
  if (f.text.empty() || ec != std::errc() || p != f.text.data() + f.text.size())
    throw Error(fmt::format("{}:{}:{}: expected an integer for '{}', got '{}'", source, line,
                            f.column, what, f.text));
  if (v < min)
    throw Error(fmt::format("{}:{}:{}: '{}' must be >= {}, got {}", source, line, f.column, what,
                            min, v));
  if (v > max)
    throw Error(fmt::format("{}:{}:{}: '{}' must be <= {}, got {}", source, line, f.column, what,
                            max, v));
  return v;
}

void check_lifespan(const PlanBuffer& b, std::string_view where) {
  if (b.lifespan.lower > b.lifespan.upper)
    throw Error(fmt::format("{}: buffer '{}' has lower {} > upper {}", where, b.id,
                            b.lifespan.lower, b.lifespan.upper));
}

// An id's bytes in hex, for messages about ids that are not text.
std::string id_bytes(std::string_view id) {
  std::string out;
  for (unsigned char c : id) out += fmt::format("{}{:02x}", out.empty() ? "" : " ", c);
  return out;
}

void check_unique(std::set<std::string>& ids, const PlanBuffer& b, std::string_view where) {
  if (!ids.insert(b.id).second)
    throw Error(fmt::format("{}: duplicate buffer id '{}'", where, b.id));
}

}  // namespace

PlanProblem read_plan_csv(std::string_view text, std::string_view source,
                          PlanReadOptions options) {
  std::vector<std::string_view> lines;
  for (size_t pos = 0; pos <= text.size();) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    std::string_view l = text.substr(pos, nl - pos);
    if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
    if (l.empty()) break;  // minimalloc stops at the first empty line
    lines.push_back(l);
    pos = nl + 1;
  }
  if (lines.empty()) throw Error(fmt::format("{}:1:1: expected a CSV header line", source));
  std::vector<Column> cols;
  std::set<Column> seen;
  for (const Field& f : split(lines[0])) {
    auto c = column_of(f.text);
    if (!c)
      throw Error(fmt::format("{}:1:{}: unknown column '{}' (expected id, lower, upper, size, "
                              "alignment, offset)", source, f.column, f.text));
    if (*c != Column::kIgnored && !seen.insert(*c).second)
      throw Error(fmt::format("{}:1:{}: duplicate column '{}'", source, f.column, f.text));
    cols.push_back(*c);
  }
  const bool has_upper = seen.count(Column::kUpper) || seen.count(Column::kUpperInclusive);
  for (auto [c, name] : {std::pair{Column::kId, "id"}, {Column::kLower, "lower"},
                         {Column::kSize, "size"}})
    if (!seen.count(c)) throw Error(fmt::format("{}:1:1: missing column '{}'", source, name));
  if (!has_upper) throw Error(fmt::format("{}:1:1: missing column 'upper'", source));

  PlanProblem p;
  std::set<std::string> ids;
  for (size_t ln = 1; ln < lines.size(); ++ln) {
    const size_t line = ln + 1;
    std::vector<Field> fields = split(lines[ln]);
    if (fields.size() != cols.size())
      throw Error(fmt::format("{}:{}:1: expected {} fields, got {}", source, line, cols.size(),
                              fields.size()));
    PlanBuffer b;
    for (size_t k = 0; k < cols.size(); ++k) {
      const Field& f = fields[k];
      switch (cols[k]) {
        case Column::kId:
          if (f.text.empty())
            throw Error(fmt::format("{}:{}:{}: empty buffer id", source, line, f.column));
          b.id = std::string(f.text);
          break;
        case Column::kLower: b.lifespan.lower = parse_int(source, line, f, "lower", -kMaxTime, kMaxTime); break;
        case Column::kUpper:
          b.lifespan.upper = parse_int(source, line, f, "upper", -kMaxTime, kMaxTime) + (options.inclusive ? 1 : 0);
          break;
        case Column::kUpperInclusive: b.lifespan.upper = parse_int(source, line, f, "end", -kMaxTime, kMaxTime) + 1; break;
        case Column::kSize: b.size = {uint64_t(parse_int(source, line, f, "size", 0, kMaxBytes))}; break;
        case Column::kAlignment: b.alignment = {uint64_t(parse_int(source, line, f, "alignment", 1, kMaxBytes))}; break;
        case Column::kOffset:
          if (!f.text.empty()) b.offset = uint64_t(parse_int(source, line, f, "offset", 0, kMaxBytes));
          break;
        case Column::kIgnored: break;
      }
    }
    const std::string where = fmt::format("{}:{}:1", source, line);
    check_lifespan(b, where);
    check_unique(ids, b, where);
    p.buffers.push_back(std::move(b));
  }
  return p;
}

namespace {

int64_t yaml_int(std::string_view source, const YAML::Node& map, const char* key, bool required,
                 int64_t fallback, int64_t min, int64_t max) {
  const YAML::Node n = map[key];
  if (!n) {
    if (required)
      throw Error(fmt::format("{}: buffer is missing the field '{}'", util::where_column(source, map), key));
    return fallback;
  }
  int64_t v = 0;
  if (!n.IsScalar() || !YAML::convert<int64_t>::decode(n, v))
    throw Error(fmt::format("{}: expected an integer for '{}'", util::where_column(source, n), key));
  if (v < min)
    throw Error(fmt::format("{}: '{}' must be >= {}, got {}", util::where_column(source, n), key, min, v));
  if (v > max)
    throw Error(fmt::format("{}: '{}' must be <= {}, got {}", util::where_column(source, n), key, max, v));
  return v;
}

}  // namespace

PlanProblem read_plan_yaml(std::string_view text, std::string_view source,
                           PlanReadOptions options) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(text));
  } catch (const YAML::Exception& e) {
    throw Error(fmt::format("{}:{}:{}: malformed YAML: {}", source, e.mark.line + 1,
                            e.mark.column + 1, e.msg));
  }
  if (!root.IsMap()) throw Error(fmt::format("{}:1:1: expected a map with 'buffers'", source));
  PlanProblem p;
  bool inclusive = options.inclusive;
  if (const YAML::Node l = root["lifetimes"]) {
    const std::string s = l.IsScalar() ? l.as<std::string>() : "";
    if (s == "inclusive") inclusive = true;
    else if (s == "half-open") inclusive = false;
    else throw Error(fmt::format("{}: 'lifetimes' must be half-open or inclusive", util::where_column(source, l)));
  }
  if (root["capacity"]) p.capacity = Bytes{uint64_t(yaml_int(source, root, "capacity", true, 0, 0, kMaxBytes))};
  const YAML::Node bufs = root["buffers"];
  if (!bufs || !bufs.IsSequence())
    throw Error(fmt::format("{}: expected a sequence 'buffers'", util::where_column(source, bufs ? bufs : root)));
  std::set<std::string> ids;
  for (const YAML::Node& n : bufs) {
    if (!n.IsMap()) throw Error(fmt::format("{}: expected a buffer map", util::where_column(source, n)));
    PlanBuffer b;
    const YAML::Node id = n["id"];
    if (!id || !id.IsScalar() || id.Scalar().empty())
      throw Error(fmt::format("{}: buffer is missing the field 'id'", util::where_column(source, n)));
    b.id = id.Scalar();
    if (!util::valid_utf8(b.id))
      throw Error(fmt::format("{}: buffer id is not valid UTF-8 (bytes {}); YAML text must be UTF-8",
                              util::where_column(source, id), id_bytes(b.id)));
    b.lifespan.lower = yaml_int(source, n, "lower", true, 0, -kMaxTime, kMaxTime);
    b.lifespan.upper = yaml_int(source, n, "upper", true, 0, -kMaxTime, kMaxTime) + (inclusive ? 1 : 0);
    b.size = {uint64_t(yaml_int(source, n, "size", true, 0, 0, kMaxBytes))};
    b.alignment = {uint64_t(yaml_int(source, n, "alignment", false, 1, 1, kMaxBytes))};
    if (n["offset"]) b.offset = uint64_t(yaml_int(source, n, "offset", true, 0, 0, kMaxBytes));
    check_lifespan(b, util::where_column(source, n));
    check_unique(ids, b, util::where_column(source, n));
    p.buffers.push_back(std::move(b));
  }
  return p;
}

std::string write_plan_csv(const PlanProblem& plan) {
  bool align = false, offset = false;
  for (const auto& b : plan.buffers) {
    align |= b.alignment.value != 1;
    offset |= b.offset.has_value();
  }
  std::string out = "id,lower,upper,size";
  if (align) out += ",alignment";
  if (offset) out += ",offset";
  out += '\n';
  for (const auto& b : plan.buffers) {
    out += fmt::format("{},{},{},{}", b.id, b.lifespan.lower, b.lifespan.upper, b.size.value);
    if (align) out += fmt::format(",{}", b.alignment.value);
    if (offset) out += b.offset ? fmt::format(",{}", *b.offset) : std::string(",");
    out += '\n';
  }
  return out;
}

std::string write_plan_yaml(const PlanProblem& plan) {
  std::string out = fmt::format("# npuforge plan: {} buffers, lower bound {}, peak {}\n",
                                plan.buffers.size(), lower_bound(plan).value,
                                plan_peak(plan).value);
  if (plan.capacity) out += fmt::format("capacity: {}\n", plan.capacity->value);
  out += "lifetimes: half-open\nbuffers:\n";
  for (const auto& b : plan.buffers) {
    // yaml-cpp would write U+FFFD in place of such bytes: a different id, silently.
    if (!util::valid_utf8(b.id))
      throw Error(fmt::format("plan YAML: buffer id (bytes {}) is not valid UTF-8, which YAML cannot hold; "
                              "write the plan as CSV instead", id_bytes(b.id)));
    YAML::Emitter id;  // quotes ids that YAML would otherwise misread
    id << YAML::Flow << b.id;
    out += fmt::format("  - {{id: {}, lower: {}, upper: {}, size: {}", id.c_str(),
                       b.lifespan.lower, b.lifespan.upper, b.size.value);
    if (b.alignment.value != 1) out += fmt::format(", alignment: {}", b.alignment.value);
    if (b.offset) out += fmt::format(", offset: {}", *b.offset);
    out += "}\n";
  }
  return out;
}

bool is_memmap_path(const std::filesystem::path& path) {
  const std::string name = path.filename().string();
  const std::string suffix = ".memmap.yaml";
  return name.size() >= suffix.size() &&
         name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
}

PlanProblem load_plan_file(const std::filesystem::path& path, PlanReadOptions options) {
  const std::string ext = path.extension().string();
  const std::string text = util::read_file(path);
  if (ext == ".csv") return read_plan_csv(text, path.string(), options);
  if (ext == ".yaml" || ext == ".yml") return read_plan_yaml(text, path.string(), options);
  throw Error(fmt::format("{}: unknown plan format (expected .csv, .yaml or .yml)", path.string()));
}

void save_plan_file(const PlanProblem& plan, const std::filesystem::path& path) {
  const std::string ext = path.extension().string();
  std::string text;
  if (ext == ".csv") text = write_plan_csv(plan);
  else if (ext == ".yaml" || ext == ".yml") text = write_plan_yaml(plan);
  else throw Error(fmt::format("{}: unknown plan format (expected .csv, .yaml or .yml)", path.string()));
  util::write_file(path, text, "plan");
}

}  // namespace npuforge::planner
