#include "regress/jobs.h"

#include <charconv>
#include <set>

#include <fmt/core.h>
#include <yaml-cpp/yaml.h>

#include "util/error.h"
#include "util/plant.h"

namespace npuforge::regress {
namespace {

// More seeds than any regression runs; bounds the memory of a mistyped range (a list of
// 100 M jobs would need tens of GB before the first seed starts).
constexpr uint64_t kMaxSeeds = 1'000'000;

uint64_t parse_u64(std::string_view s, std::string_view what) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  uint64_t v = 0;
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || p != s.data() + s.size()) {
    throw Error(fmt::format("{}: '{}' is not a non-negative integer", what, s));
  }
  return v;
}

std::string resolve(const std::filesystem::path& list, const std::string& p) {
  if (p.empty()) return p;
  // An unreadable or over-long name counts as "not here": the run that uses it reports it.
  std::error_code ec;
  const std::filesystem::path path(p);
  if (path.is_absolute() || std::filesystem::exists(path, ec)) return p;
  const auto root = std::filesystem::absolute(list, ec).parent_path().parent_path().parent_path();
  if (std::filesystem::exists(root / path, ec)) return (root / path).lexically_normal().string();
  return p;
}

}  // namespace

std::string Job::id() const { return fmt::format("{}:{}", run, seed); }
std::string Job::name() const { return fmt::format("{}-{}", run, seed); }

void number_jobs(std::vector<Job>& jobs) {
  for (size_t i = 0; i < jobs.size(); ++i) jobs[i].index = i;
}

std::vector<uint64_t> parse_seeds(std::string_view spec) {
  std::vector<uint64_t> out;
  std::set<uint64_t> seen;
  const std::string where = fmt::format("seeds '{}'", spec);
  size_t pos = 0;
  while (pos <= spec.size()) {
    size_t comma = spec.find(',', pos);
    if (comma == std::string_view::npos) comma = spec.size();
    const std::string_view part = spec.substr(pos, comma - pos);
    const size_t dash = part.find('-');
    uint64_t lo = 0, hi = 0;
    if (dash == std::string_view::npos) {
      lo = hi = parse_u64(part, where);
    } else {
      lo = parse_u64(part.substr(0, dash), where);
      hi = parse_u64(part.substr(dash + 1), where);
      if (hi < lo) throw Error(fmt::format("{}: range '{}' is empty (expected LO-HI, LO <= HI)", where, part));
      if (hi - lo >= kMaxSeeds)
        throw Error(fmt::format("{}: range '{}' is too large (at most {} seeds)", where, part, kMaxSeeds));
    }
    for (uint64_t s = lo;; ++s) {
      if (seen.insert(s).second) out.push_back(s);
      if (out.size() > kMaxSeeds) throw Error(fmt::format("{}: more than {} seeds", where, kMaxSeeds));
      if (s == hi) break;
    }
    pos = comma + 1;
  }
  return out;
}

Shard parse_shard(std::string_view spec) {
  const size_t slash = spec.find('/');
  const std::string where = fmt::format("--shard '{}' (expected K/N with 1 <= K <= N)", spec);
  if (slash == std::string_view::npos) throw Error(where);
  const uint64_t k = parse_u64(spec.substr(0, slash), where);
  const uint64_t n = parse_u64(spec.substr(slash + 1), where);
  if (n == 0 || k == 0 || k > n || n > 1'000'000) throw Error(where);
  return {static_cast<unsigned>(k), static_cast<unsigned>(n)};
}

std::vector<Job> select_shard(const std::vector<Job>& jobs, Shard shard) {
  std::vector<Job> out;
  for (size_t i = shard.k - 1; i < jobs.size(); i += shard.n) out.push_back(jobs[i]);
  return out;
}

std::vector<Job> load_list(const std::filesystem::path& path) {
  YAML::Node root;
  try {
    root = YAML::LoadFile(path.string());
  } catch (const YAML::Exception& e) {
    throw Error(fmt::format("{}:{}: {}", path.string(), e.mark.line + 1, e.msg));
  }
  const std::string file = path.string();
  if (!root.IsMap() || !root["runs"] || !root["runs"].IsSequence()) {
    throw Error(fmt::format("{}: expected a map with a 'runs' list", file));
  }
  Job defaults;
  auto apply = [&](const YAML::Node& n, Job& job, const std::string& where, bool entry) {
    for (const auto& kv : n) {
      const auto line = kv.first.Mark().line + 1;
      if (!kv.first.IsScalar()) throw Error(fmt::format("{}:{}: {}: a key must be a plain name", file, line, where));
      const std::string key = kv.first.Scalar();
      try {
        if (key == "npu") job.npu = resolve(path, kv.second.as<std::string>());
        else if (key == "length") job.length = kv.second.as<int64_t>();
        else if (key == "rtl") job.rtl = kv.second.as<bool>();
        else if (key == "plant") job.plant = plant_name(parse_plant(kv.second.as<std::string>()));
        else if (entry && key == "name") job.run = kv.second.as<std::string>();
        else if (entry && key == "profile") job.profile = resolve(path, kv.second.as<std::string>());
        else if (entry && key == "seeds") continue;
        else throw Error(fmt::format("{}:{}: {}: unknown key '{}'", file, line, where, key));
      } catch (const YAML::Exception&) {
        throw Error(fmt::format("{}:{}: {}: bad value for '{}'", file, line, where, key));
      } catch (const Error& e) {
        throw Error(fmt::format("{}:{}: {}: {}", file, line, where, e.what()));
      }
    }
  };
  if (root["defaults"]) apply(root["defaults"], defaults, "defaults", false);
  std::vector<Job> jobs;
  size_t index = 0;
  for (const auto& entry : root["runs"]) {
    const std::string where = fmt::format("runs[{}]", index++);
    if (!entry.IsMap()) throw Error(fmt::format("{}: {}: expected a map", file, where));
    Job job = defaults;
    job.origin = fmt::format("{}:{}: {}", file, entry.Mark().line + 1, where);
    apply(entry, job, where, true);
    if (job.profile.empty() || !entry["seeds"]) {
      throw Error(fmt::format("{}:{}: {}: 'profile' and 'seeds' are required", file,
                              entry.Mark().line + 1, where));
    }
    if (job.run.empty()) job.run = std::filesystem::path(job.profile).stem().string();
    if (!entry["seeds"].IsScalar())
      throw Error(fmt::format("{}:{}: {}: 'seeds' must be a string like \"1-500\"", file,
                              entry["seeds"].Mark().line + 1, where));
    std::vector<uint64_t> seeds;
    try {
      seeds = parse_seeds(entry["seeds"].Scalar());
    } catch (const Error& e) {
      throw Error(fmt::format("{}:{}: {}: {}", file, entry["seeds"].Mark().line + 1, where, e.what()));
    }
    for (uint64_t seed : seeds) {
      if (jobs.size() >= kMaxSeeds)
        throw Error(fmt::format("{}: more than {} jobs in the list", file, kMaxSeeds));
      job.seed = seed;
      jobs.push_back(job);
    }
  }
  return jobs;
}

}  // namespace npuforge::regress
