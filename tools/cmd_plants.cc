// npuforge plants: the catalogue of planted bugs, one line each.
// npuforge kill-rate: every plant against the nightly profiles; exit 1 if one survives.
#include <algorithm>
#include <filesystem>
#include <sstream>

#include <fmt/core.h>

#include "regress/jobs.h"
#include "regress/kill_rate.h"
#include "regress/proc.h"
#include "tools/command.h"
#include "tools/input_file.h"
#include "util/error.h"
#include "util/plant.h"

namespace npuforge::tools {
namespace {

struct PlantsOpts {};

int run_plants(const PlantsOpts&) {
  for (const PlantInfo& p : plant_catalogue())
    fmt::print("{:<26} {:<10} {}\n", p.name, to_string(p.layer), p.breaks);
  return kExitOk;
}

struct KillRateOpts {
  std::string list;  // default: configs/regress/nightly.yaml
  std::string seeds = "1-100";
  std::vector<std::string> profiles;  // run names to keep
  std::vector<std::string> plants;    // plant names; empty: all
  unsigned jobs = 1;
  double timeout = 300;
  int64_t length = -1;  // -1: the list's
  std::string out = "results/kill-rate";
  bool quiet = false;
};

// configs/regress/nightly.yaml from the current directory, else from the source tree.
std::string default_list() {
  const std::string rel = "configs/regress/nightly.yaml";
  if (std::filesystem::exists(rel)) return rel;
  // The build tree sits in the source tree: build/tools/npuforge -> ../../configs/...
  const auto src = std::filesystem::path(regress::self_exe()).parent_path() / "../.." / rel;
  if (std::filesystem::exists(src)) return src.lexically_normal().string();
  throw Error("kill-rate: no regression list given and " + rel + " not found (give one)");
}

std::vector<std::string> split_commas(const std::vector<std::string>& in) {
  std::vector<std::string> out;
  for (const auto& s : in) {
    std::stringstream ss(s);
    for (std::string part; std::getline(ss, part, ',');)
      if (!part.empty()) out.push_back(part);
  }
  return out;
}

int run_kill_rate(const KillRateOpts& o) {
  using namespace regress;
  KillRateOptions k;
  std::vector<Job> jobs = load_list(o.list.empty() ? default_list() : o.list);
  const std::vector<std::string> keep = split_commas(o.profiles);
  for (const Job& j : jobs) {
    bool seen = false;
    for (const Job& r : k.runs) seen |= r.run == j.run;
    if (seen || (!keep.empty() && std::find(keep.begin(), keep.end(), j.run) == keep.end())) continue;
    Job r = j;
    if (o.length >= 0) r.length = o.length;
    k.runs.push_back(r);
  }
  for (const auto& name : keep) {
    bool found = false;
    for (const Job& r : k.runs) found |= r.run == name;
    if (!found) throw Error(fmt::format("kill-rate: --profiles: no run named '{}' in the list", name));
  }
  if (k.runs.empty()) throw Error("kill-rate: the list has no runs");
  k.seeds = parse_seeds(o.seeds);
  for (const auto& name : split_commas(o.plants)) k.plants.push_back(parse_plant(name));
  k.workers = std::max(1u, o.jobs);
  k.timeout_s = o.timeout;
  k.out = o.out;
  const std::vector<PlantOutcome> res = regress::run_kill_rate(k, o.quiet ? nullptr : stderr);
  fmt::print("{}", kill_rate_table(res));
  for (const auto& r : res)
    if (!r.killed) return kExitFinding;
  return kExitOk;
}

}  // namespace

void add_plants_command(CLI::App& app, Runner& run) {
  auto opts = std::make_shared<PlantsOpts>();
  CLI::App* sub = app.add_subcommand("plants", "List the planted bugs (name, layer, what it breaks)");
  bind_runner(sub, opts, run, &run_plants);

  auto k = std::make_shared<KillRateOpts>();
  CLI::App* kr = app.add_subcommand(
      "kill-rate", "Run every planted bug over the nightly profiles until a seed catches it; exit 1 if one survives");
  kr->add_option("list", k->list, "regression list (default configs/regress/nightly.yaml)")->transform(config_file("list", ConfigKind::kRegressList));
  kr->add_option("--seeds", k->seeds, "seeds to try, in order (default 1-100)");
  kr->add_option("--profiles", k->profiles, "only these runs of the list (names, comma-separated)");
  kr->add_option("--plants", k->plants, "only these plants (names, comma-separated; default all)");
  kr->add_option("-j,--jobs", k->jobs, "worker processes (default 1)");
  kr->add_option("--length", k->length, "instructions per program (default: the list's / profile's)");
  kr->add_option("--timeout", k->timeout, "seconds per seed before it is killed and counted as `timeout` (default 300)");
  kr->add_option("-o,--out", k->out, "where the catching seeds' files go (default results/kill-rate)");
  kr->add_flag("-q,--quiet", k->quiet, "no per-plant progress lines");
  bind_runner(kr, k, run, &run_kill_rate);
}

}  // namespace npuforge::tools
