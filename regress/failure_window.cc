#include "regress/failure_window.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>

#include <fmt/core.h>

#include "bundle/memmap.h"
#include "planner/plan_check.h"
#include "regress/html_report.h"

namespace npuforge::regress {
namespace {

using planner::PlanBuffer;
using planner::TimeValue;

// The instruction of a finding line "[kind] #12 gemm ...": the first '#' followed by digits.
std::optional<TimeValue> finding_instruction(const std::string& finding) {
  for (size_t at = finding.find('#'); at != std::string::npos; at = finding.find('#', at + 1)) {
    if (at + 1 < finding.size() && std::isdigit(static_cast<unsigned char>(finding[at + 1])))
      return static_cast<TimeValue>(std::strtoll(finding.c_str() + at + 1, nullptr, 10));
  }
  return std::nullopt;
}

// The byte range of a finding line's "sram[0x400, 0x500)".
std::optional<std::pair<uint64_t, uint64_t>> finding_range(const std::string& finding) {
  const size_t at = finding.find("sram[");
  if (at == std::string::npos) return std::nullopt;
  char* end = nullptr;
  const uint64_t lo = std::strtoull(finding.c_str() + at + 5, &end, 0);
  if (!end || *end != ',') return std::nullopt;
  const uint64_t hi = std::strtoull(end + 1, &end, 0);
  if (!end || *end != ')' || hi <= lo) return std::nullopt;
  return std::make_pair(lo, hi);
}

uint64_t end_of(const PlanBuffer& b) { return *b.offset + b.size.value; }

// Widens [lo, hi) to the nearest live buffer below and above it (at most twice the range's
// size each way, so that one huge neighbour does not shrink the faulting buffers back to a sliver).
void add_neighbours(const std::vector<const PlanBuffer*>& live, uint64_t& lo, uint64_t& hi,
                    std::vector<std::string>& labelled) {
  const PlanBuffer* below = nullptr;
  const PlanBuffer* above = nullptr;
  for (const PlanBuffer* b : live) {
    if (end_of(*b) <= lo && (!below || end_of(*b) > end_of(*below))) below = b;
    if (*b->offset >= hi && (!above || *b->offset < *above->offset)) above = b;
  }
  const uint64_t reach = 2 * std::max<uint64_t>(hi - lo, 64);
  if (below) {
    lo = std::max(*below->offset, lo > reach ? lo - reach : 0);
    labelled.push_back(below->id);
  }
  if (above) {
    hi = std::min(end_of(*above), hi + reach);
    labelled.push_back(above->id);
  }
}

}  // namespace

std::optional<FailureWindow> failure_window(const planner::PlanProblem& plan, const std::string& finding,
                                            TimeValue half_width) {
  std::vector<const PlanBuffer*> named;
  for (const std::string& id : finding_symbols(finding))
    for (const PlanBuffer& b : plan.buffers)
      if (b.id == id && b.offset) named.push_back(&b);
  std::optional<TimeValue> centre = finding_instruction(finding);
  if (!centre && !named.empty()) centre = named.front()->lifespan.lower;
  if (!centre) return std::nullopt;
  TimeValue first = 0, last = 1;
  for (const PlanBuffer& b : plan.buffers) last = std::max(last, b.lifespan.upper);
  FailureWindow w;
  w.view.t0 = std::max(first, *centre - half_width);
  w.view.t1 = std::min(last, *centre + half_width + 1);
  if (w.view.t1 <= w.view.t0) return std::nullopt;
  if (finding_instruction(finding)) {
    w.view.marker = *centre;
    w.view.marker_label = fmt::format("#{} (first finding)", *centre);
  }
  const planner::Lifespan span{w.view.t0, w.view.t1};
  std::vector<const PlanBuffer*> live;
  for (const PlanBuffer& b : plan.buffers)
    if (b.offset && b.lifespan.intersects(span)) live.push_back(&b);
  if (live.empty()) return std::nullopt;
  uint64_t lo = UINT64_MAX, hi = 0;
  for (const PlanBuffer* b : named) {
    if (!b->lifespan.intersects(span)) continue;
    lo = std::min(lo, *b->offset);
    hi = std::max(hi, end_of(*b));
    w.faulting.push_back(b->id);
  }
  if (w.faulting.empty()) {
    if (const auto range = finding_range(finding)) {
      lo = range->first;
      hi = range->second;
    } else {
      for (const PlanBuffer* b : live) lo = std::min(lo, *b->offset), hi = std::max(hi, end_of(*b));
    }
  }
  w.labelled = w.faulting;
  for (const PlanBuffer* b : live)  // what shares the faulting bytes
    if (*b->offset < hi && end_of(*b) > lo && std::find(w.labelled.begin(), w.labelled.end(), b->id) == w.labelled.end())
      w.labelled.push_back(b->id);
  add_neighbours(live, lo, hi, w.labelled);
  const uint64_t margin = (hi - lo) / 16;
  w.view.lo = lo > margin ? lo - margin : 0;
  w.view.hi = hi + margin;
  return w;
}

std::string failure_window_svg(const std::filesystem::path& memmap, const std::string& title,
                               const std::string& finding) {
  const planner::PlanProblem plan = planner::problem_from_memmap(bundle::MemMap::load_file(memmap));
  const auto w = failure_window(plan, finding);
  if (!w) return {};
  const planner::PlanCheckResult check = planner::check_plan(plan);
  planner::SvgOptions opt;
  opt.inclusive = true;
  opt.title = fmt::format("{}: instructions {}..{}, SRAM [{:#x}, {:#x})", title, w->view.t0, w->view.t1 - 1,
                          w->view.lo, w->view.hi);
  opt.highlight = w->faulting;
  opt.labelled = w->labelled;
  opt.window = w->view;
  return scalable_svg(planner::plan_svg(plan, &check, opt), "memmap window");
}

std::string scalable_svg(std::string svg, const std::string& css_class) {
  const size_t w = svg.find("width='"), h = svg.find("height='");
  if (svg.rfind("<svg ", 0) == 0 && w != std::string::npos && h != std::string::npos) {
    const std::string width = svg.substr(w + 7, svg.find('\'', w + 7) - w - 7);
    const std::string height = svg.substr(h + 8, svg.find('\'', h + 8) - h - 8);
    svg.insert(5, fmt::format("viewBox='0 0 {} {}' class='{}' ", width, height, css_class));
  }
  return svg;
}

}  // namespace npuforge::regress
