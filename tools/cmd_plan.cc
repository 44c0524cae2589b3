// `npuforge plan` (make a memory plan) and `npuforge check-plan` (check one, or a
// generator memory map), both with an optional SVG picture.
#include <chrono>
#include <optional>

#include <fmt/core.h>

#include "bundle/memmap.h"
#include "planner/ddr_check.h"
#include "planner/plan_check.h"
#include "planner/plan_io.h"
#include "planner/plan_svg.h"
#include "planner/planner.h"
#include "tools/command.h"
#include "tools/input_file.h"
#include "tools/io_util.h"

namespace npuforge::tools {
namespace {

using namespace npuforge::planner;

struct PlanOptions {
  std::string input, algo = "greedy-size", capacity, svg;
  std::vector<std::string> outputs;
  double time_limit = 60;
  bool inclusive = false;
};

struct CheckOptions {
  std::string input, capacity, svg, addresses, base = "0";
  int instances = 1;
  bool inclusive = false;
};

uint64_t parse_number(const std::string& text, const char* what) {
  try {
    size_t used = 0;
    const uint64_t v = std::stoull(text, &used, 0);
    if (used == text.size()) return v;
  } catch (const std::exception&) {
  }
  throw Error(fmt::format("{}: expected a number (decimal or 0x...), got '{}'", what, text));
}

std::optional<Bytes> parse_capacity(const std::string& text) {
  if (text.empty()) return std::nullopt;
  return Bytes{parse_number(text, "--capacity")};
}

double ratio(Bytes peak, Bytes lb) { return lb.value ? double(peak.value) / double(lb.value) : 1.0; }

int run_plan(const PlanOptions& o) {
  PlanProblem p = load_plan_file(o.input, {.inclusive = o.inclusive});
  if (auto cap = parse_capacity(o.capacity)) p.capacity = cap;
  PlannerOptions opt;
  opt.capacity = p.capacity;
  opt.time_limit_s = o.time_limit;
  const auto t0 = std::chrono::steady_clock::now();
  const PlanResult r = run_planner(o.algo, p, opt);
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  const Bytes lb = lower_bound(p);
  if (!r.found) {
    fmt::print(stderr, "npuforge plan: {}: {} buffers cannot be placed within capacity {}: {}\n",
               o.input, p.buffers.size(), p.capacity->value, r.note);
    return kExitFinding;
  }
  const PlanProblem plan = with_offsets(p, r.offsets);
  const PlanCheckResult check = check_plan(plan);
  for (const auto& out : o.outputs) save_plan_file(plan, out);
  if (!o.svg.empty()) util::write_file(o.svg, plan_svg(plan, &check, {.title = o.input}));
  // A planner's proof (exact, best) may raise the lower bound above the load bound.
  const std::string proven_bound =
      r.lower_bound > lb ? fmt::format(", proven lower bound {} ({:.4f}x)", r.lower_bound.value, ratio(r.peak, r.lower_bound))
                         : "";
  fmt::print("{}: {} {} buffers, peak {} bytes, lower bound {} ({:.4f}x){}, {:.1f} ms{}{}{}\n", o.input,
             o.algo, p.buffers.size(), r.peak.value, lb.value, ratio(r.peak, lb), proven_bound, ms,
             r.proven_optimal ? ", optimal (proven)" : "",
             r.winner.empty() || r.winner == o.algo ? "" : ", placement by " + r.winner,
             r.note.empty() ? "" : "; " + r.note);
  if (!check.ok()) {  // a planner bug: never expected, but never hidden either
    fmt::print(stderr, "{}", check.report());
    return kExitFinding;
  }
  if (!r.fits) {
    fmt::print(stderr, "npuforge plan: {}: peak {} exceeds the capacity {}\n", o.input,
               r.peak.value, p.capacity->value);
    return kExitFinding;
  }
  return kExitOk;
}

int run_check(const CheckOptions& o) {
  PlanProblem p;
  PlanCheckResult r;
  std::optional<PlanCheckResult> ddr;  // a compiled program's DDR tensors
  const bool memmap = is_memmap_path(o.input);
  if (memmap) {
    const MemMap m = MemMap::load_file(o.input);
    p = problem_from_memmap(m);
    if (auto cap = parse_capacity(o.capacity)) p.capacity = cap;
    r = check_plan(p);  // alignment and capacity come from the map unless overridden
    if (!m.ddr_buffers.empty()) ddr = check_memmap_ddr(m);
  } else {
    p = load_plan_file(o.input, {.inclusive = o.inclusive});
    if (auto cap = parse_capacity(o.capacity)) p.capacity = cap;
    r = check_plan(p);
  }
  if (!o.svg.empty())
    util::write_file(o.svg, plan_svg(p, &r, {.inclusive = memmap, .title = o.input}));
  fmt::print("{}: {}", o.input, r.report());
  if (ddr) fmt::print("{} (DDR tensors): {}", o.input, ddr->report());
  if (!r.ok() || (ddr && !ddr->ok())) return kExitFinding;
  if (!o.addresses.empty()) {
    const auto addrs = instantiate(p, parse_number(o.base, "--base"), o.instances);
    std::string csv = "instance,id,address,size\n";
    for (size_t k = 0; k < addrs.size(); ++k)
      for (size_t i = 0; i < p.buffers.size(); ++i)
        csv += fmt::format("{},{},{:#x},{}\n", k, p.buffers[i].id, addrs[k][i], p.buffers[i].size.value);
    util::write_file(o.addresses, csv);
  }
  return kExitOk;
}

}  // namespace

void add_plan_command(CLI::App& app, Runner& run) {
  auto opts = std::make_shared<PlanOptions>();
  auto* sub = app.add_subcommand("plan", "Plan buffer offsets (CSV id,lower,upper,size or YAML) "
                                         "and report the peak against the lower bound");
  sub->add_option("input", opts->input, "Problem file (.csv, .yaml)")->required()->check(input_file("input"));
  std::string names;
  for (const auto& n : planner_names()) names += (names.empty() ? "" : ", ") + n;
  sub->add_option("--algo", opts->algo, "Planner: " + names)->capture_default_str();
  sub->add_option("--capacity", opts->capacity, "Arena bytes (exact searches within it; exit 1 if exceeded)");
  sub->add_option("--time-limit", opts->time_limit, "Seconds of budget for exact, lifetime-aware and best")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  sub->add_option("-o,--output", opts->outputs, "Write the plan (.csv or .yaml; repeatable)");
  sub->add_option("--svg", opts->svg, "Draw the plan (time x, address y)");
  sub->add_flag("--inclusive", opts->inclusive, "Lifetimes in the input are inclusive [first, last]");
  bind_runner(sub, opts, run, &run_plan);
}

void add_check_plan_command(CLI::App& app, Runner& run) {
  auto opts = std::make_shared<CheckOptions>();
  auto* sub = app.add_subcommand("check-plan", "Check a plan (.csv/.yaml with offsets) or a memory "
                                               "map (*.memmap.yaml): offsets, alignment, capacity, overlaps");
  sub->add_option("input", opts->input, "Plan or memory map")->required()->check(input_file("input"));
  sub->add_option("--capacity", opts->capacity, "Arena bytes (default: the file's, if any)");
  sub->add_option("--svg", opts->svg, "Draw the plan, overlaps in red");
  sub->add_flag("--inclusive", opts->inclusive, "Lifetimes in the plan are inclusive [first, last]");
  sub->add_option("--addresses", opts->addresses, "After a clean check, write absolute addresses (CSV)");
  sub->add_option("--base", opts->base, "Base address for --addresses")->capture_default_str();
  sub->add_option("--instances", opts->instances, "Copies side by side, at base + k * peak")->capture_default_str();
  bind_runner(sub, opts, run, &run_check);
}

}  // namespace npuforge::tools
