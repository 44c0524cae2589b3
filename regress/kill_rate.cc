#include "regress/kill_rate.h"

#include <algorithm>
#include <filesystem>

#include <fmt/core.h>

#include "regress/proc.h"
#include "regress/runner.h"

namespace npuforge::regress {
namespace fs = std::filesystem;

std::vector<Job> runs_for_plant(const std::vector<Job>& runs, Plant plant) {
  const bool rtl = plant_needs_rtl(plant);
  std::vector<Job> out;
  for (const Job& r : runs)
    if (r.rtl == rtl) out.push_back(r);
  if (out.empty() && rtl) {  // no RTL run in the list: the TLM runs, with the RTL in the loop
    for (Job r : runs) {
      r.rtl = true;
      r.run += "-rtl";
      out.push_back(r);
    }
  }
  for (Job& r : out) r.plant = std::string(plant_name(plant));
  return out;
}

std::string_view to_string(Catch c) {
  switch (c) {
    case Catch::None:
    case Catch::Finding: return "";
    case Catch::Fail: return "fail";
    case Catch::Timeout: return "timeout";
    case Catch::Crash: return "crash";
    case Catch::GenError: return "gen-error";
    case Catch::Error: return "error";
    case Catch::BaselineFails: return "baseline-fails";
  }
  return "";
}

Catch catch_of(Status status, const SeedKind& kind) {
  switch (status) {
    case Status::Pass: return Catch::None;
    case Status::Fail: return kind.cause == Cause::Finding || kind.cause == Cause::Allocator ? Catch::Finding : Catch::Fail;
    case Status::Error: break;
  }
  switch (kind.cause) {
    case Cause::Timeout: return Catch::Timeout;
    case Cause::WorkerKilled:
    case Cause::SimulatorCrash: return Catch::Crash;
    case Cause::Generate: return Catch::GenError;
    default: return Catch::Error;
  }
}

std::string kind_column(const PlantOutcome& o) {
  return o.how == Catch::Finding ? tag(o.kind) : std::string(to_string(o.how));
}

namespace {

PlantOutcome run_plant(const KillRateOptions& o, Plant plant, std::FILE* log) {
  PlantOutcome res;
  res.plant = plant;
  const std::vector<Job> runs = runs_for_plant(o.runs, plant);
  const fs::path dir = fs::path(o.out) / std::string(plant_name(plant));
  fs::remove_all(dir);
  // Seed-major order: every run of seed k before seed k + 1, in chunks that keep the
  // workers busy; the first failing job in that order is the catch.
  std::vector<std::pair<Job, uint64_t>> order;  // job, seeds tried so far
  for (size_t s = 0; s < o.seeds.size(); ++s) {
    for (Job j : runs) {
      j.seed = o.seeds[s];
      order.emplace_back(j, s + 1);
    }
  }
  const size_t chunk = std::max(1u, o.workers);
  for (size_t at = 0, part = 0; at < order.size() && !res.killed; at += chunk, ++part) {
    RegressOptions ro;
    for (size_t i = at; i < std::min(order.size(), at + chunk); ++i) ro.jobs.push_back(order[i].first);
    number_jobs(ro.jobs);
    ro.out = (dir / fmt::format("part-{}", part)).string();
    ro.workers = o.workers;
    ro.timeout_s = o.timeout_s;
    ro.exe = o.exe;
    const RegressOutcome r = run_regression(ro, nullptr);
    res.jobs += ro.jobs.size();
    // The first failing job of the chunk; a real finding beats a crash or timeout in it.
    size_t first = r.results.size();
    for (size_t i = 0; i < r.results.size(); ++i) {
      if (r.results[i].status == Status::Fail) {
        first = i;
        break;
      }
      if (r.results[i].status == Status::Error && first == r.results.size()) first = i;
    }
    for (size_t i = first; i < r.results.size(); ++i) {
      const SeedResult& s = r.results[i];
      res.killed = true;
      res.seed = s.job.seed;
      res.run = s.job.run;
      res.how = catch_of(s.status, s.kind);
      res.kind = s.kind;
      res.finding = s.finding;
      res.seeds_to_catch = order[at + i].second;
      break;
    }
    if (!res.killed) fs::remove_all(ro.out);  // keep only the catching seed's files
  }
  if (res.killed) {
    // The same job without the plant must pass, else the catch proves nothing.
    Job clean;
    for (const auto& entry : order)
      if (entry.first.run == res.run) {
        clean = entry.first;
        break;
      }
    clean.seed = res.seed;
    clean.plant.clear();
    RegressOptions base;
    base.jobs = {clean};
    base.out = (dir / "baseline").string();
    base.timeout_s = o.timeout_s;
    base.exe = o.exe;
    if (run_regression(base, nullptr).results.at(0).status != Status::Pass) {
      res.killed = false;
      res.how = Catch::BaselineFails;
    } else {
      fs::remove_all(base.out);
    }
  }
  if (log) {
    fmt::print(log, "{:<26} {}\n", plant_name(plant),
               res.killed ? fmt::format("killed by {}:{} ({})", res.run, res.seed, kind_column(res))
               : res.how == Catch::BaselineFails
                   ? fmt::format("NOT COUNTED: {}:{} fails without the plant too", res.run, res.seed)
                   : fmt::format("SURVIVED {} seeds x {} runs", o.seeds.size(), runs.size()));
    std::fflush(log);
  }
  return res;
}

}  // namespace

std::vector<PlantOutcome> run_kill_rate(const KillRateOptions& o, std::FILE* log) {
  std::vector<Plant> plants = o.plants;
  if (plants.empty())
    for (const PlantInfo& p : plant_catalogue()) plants.push_back(Plant{p.id});
  KillRateOptions opts = o;
  if (opts.exe.empty()) opts.exe = self_exe();
  std::vector<PlantOutcome> out;
  for (Plant p : plants) out.push_back(run_plant(opts, p, log));
  return out;
}

double median_seeds_to_catch(const std::vector<PlantOutcome>& outcomes) {
  std::vector<uint64_t> v;
  for (const auto& o : outcomes)
    if (o.killed) v.push_back(o.seeds_to_catch);
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? double(v[n / 2]) : (double(v[n / 2 - 1]) + double(v[n / 2])) / 2;
}

std::string kill_rate_table(const std::vector<PlantOutcome>& outcomes) {
  std::string s = fmt::format("{:<26} {:<10} {:<8} {:<24} {:<28} {}\n", "plant", "layer", "killed", "first seed",
                              "kind", "seeds to catch");
  size_t killed = 0;
  for (const auto& o : outcomes) {
    killed += o.killed;
    const PlantInfo& info = plant_info(o.plant.id);
    s += fmt::format("{:<26} {:<10} {:<8} {:<24} {:<28} {}\n", info.name, to_string(info.layer),
                     o.killed ? "yes" : "NO", o.killed ? fmt::format("{}:{}", o.run, o.seed) : "-",
                     o.killed || o.how != Catch::None ? kind_column(o) : "-",
                     o.killed ? std::to_string(o.seeds_to_catch) : "-");
  }
  s += fmt::format("killed {}/{} plants ({:.0f}%), median seeds to catch {}\n", killed, outcomes.size(),
                   outcomes.empty() ? 0.0 : 100.0 * double(killed) / double(outcomes.size()),
                   median_seeds_to_catch(outcomes));
  return s;
}

}  // namespace npuforge::regress
