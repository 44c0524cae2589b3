#include "planner/plan_svg.h"

#include <algorithm>

#include <fmt/core.h>

namespace npuforge::planner {
namespace {

constexpr double kWidth = 1200, kHeight = 700, kLeft = 90, kRight = 20, kTop = 40, kBottom = 40;

std::string escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '<') out += "&lt;";
    else if (c == '>') out += "&gt;";
    else if (c == '&') out += "&amp;";
    else if (c == '"') out += "&quot;";
    else out += c;
  }
  return out;
}

// Times [t0, t1) across, addresses [bottom, top) up; what lies outside is clamped to the edges.
struct Scale {
  TimeValue t0, t1;
  uint64_t bottom, top;
  double x(TimeValue t) const {
    t = std::clamp(t, t0, t1);
    return kLeft + (kWidth - kLeft - kRight) * double(t - t0) / double(std::max<TimeValue>(1, t1 - t0));
  }
  double y(uint64_t a) const {
    a = std::clamp(a, bottom, std::max(bottom, top));
    return kHeight - kBottom -
           (kHeight - kTop - kBottom) * double(a - bottom) / double(std::max<uint64_t>(1, top - bottom));
  }
};

// A dashed line across at address `at`, its label `label_dy` pixels below the line's own
// height (labels of lines too close together would print over each other).
std::string hline(const Scale& s, uint64_t at, const char* colour, const char* label, double label_dy = 0) {
  return fmt::format(
      "<line x1='{:.1f}' x2='{:.1f}' y1='{:.1f}' y2='{:.1f}' stroke='{}' stroke-dasharray='6 3'/>"
      "<text x='2' y='{:.1f}' font-size='11' fill='{}'>{} {}</text>\n",
      kLeft, kWidth - kRight, s.y(at), s.y(at), colour, s.y(at) + 4 + label_dy, colour, label, at);
}

// The lower bound, peak and capacity lines of a whole plan; a label closer than a line of
// text to the one above it moves down a line.
std::string bound_lines(const Scale& s, uint64_t lb, uint64_t peak, std::optional<uint64_t> capacity) {
  constexpr double kLine = 12;
  std::string out;
  double cap_y = -1e9;
  if (capacity) {
    out += hline(s, *capacity, "gray", "cap");
    cap_y = s.y(*capacity);
  }
  const double peak_dy = std::max(0.0, cap_y + kLine - s.y(peak));
  out += hline(s, peak, "green", "peak", peak_dy);
  out += hline(s, lb, "blue", "LB", std::max(0.0, s.y(peak) + peak_dy + kLine - s.y(lb)));
  return out;
}

// A window's edges: its lowest and highest address, and the finding's time.
std::string window_marks(const Scale& s, const SvgWindow& w) {
  std::string out = fmt::format(
      "<text x='2' y='{:.1f}' font-size='11'>{:#x}</text><text x='2' y='{:.1f}' font-size='11'>{:#x}</text>\n",
      s.y(w.lo), w.lo, s.y(w.hi) + 10, w.hi);
  if (w.marker) {
    const double x = (s.x(*w.marker) + s.x(*w.marker + 1)) / 2;
    out += fmt::format(
        "<line class='marker' x1='{0:.1f}' x2='{0:.1f}' y1='{1:.1f}' y2='{2:.1f}' stroke='black' stroke-width='2' "
        "stroke-dasharray='4 2'/><text x='{3:.1f}' y='{4:.1f}' font-size='13'>{5}</text>\n",
        x, kTop - 6, kHeight - kBottom, x + 4, kHeight - kBottom + 14, escape(w.marker_label));
  }
  return out;
}

}  // namespace

std::string plan_svg(const PlanProblem& plan, const PlanCheckResult* check,
                     const SvgOptions& options) {
  const uint64_t lb = lower_bound(plan).value, peak = plan_peak(plan).value;
  Scale s{0, 1, 0, std::max({lb, peak, plan.capacity ? plan.capacity->value : 0, uint64_t{1}})};
  bool first = true;
  for (const auto& b : plan.buffers) {
    s.t0 = first ? b.lifespan.lower : std::min(s.t0, b.lifespan.lower);
    s.t1 = first ? b.lifespan.upper : std::max(s.t1, b.lifespan.upper);
    first = false;
  }
  const SvgWindow* w = options.window ? &*options.window : nullptr;
  if (w) s = Scale{w->t0, std::max(w->t1, w->t0 + 1), w->lo, std::max(w->hi, w->lo + 1)};
  auto outside = [&](const PlanBuffer& b) {
    return w && (b.lifespan.upper <= w->t0 || b.lifespan.lower >= w->t1 || *b.offset + b.size.value <= w->lo ||
                 *b.offset >= w->hi);
  };
  std::string out = fmt::format(
      "<svg xmlns='http://www.w3.org/2000/svg' width='{}' height='{}' font-family='monospace'>\n"
      "<rect width='100%' height='100%' fill='white'/>\n"
      "<text x='{}' y='20' font-size='14'>{}{}</text>\n",
      kWidth, kHeight, kLeft, escape(options.title),
      w ? std::string() : fmt::format(" ({} buffers, peak {}, lower bound {})", plan.buffers.size(), peak, lb));
  std::vector<bool> bad(plan.buffers.size(), false);
  if (check)
    for (const auto& f : check->findings)
      if (f.outcome == PlanOutcome::kOverlap && f.other) bad[f.buffer] = bad[*f.other] = true;
  auto highlighted = [&](const std::string& id) {
    return std::find(options.highlight.begin(), options.highlight.end(), id) != options.highlight.end();
  };
  auto labelled = [&](const std::string& id) {
    return std::find(options.labelled.begin(), options.labelled.end(), id) != options.labelled.end();
  };
  for (size_t i = 0; i < plan.buffers.size(); ++i) {
    const PlanBuffer& b = plan.buffers[i];
    if (!b.offset || outside(b)) continue;
    const double x0 = s.x(b.lifespan.lower), x1 = s.x(b.lifespan.upper);
    const double y0 = s.y(*b.offset + b.size.value), y1 = s.y(*b.offset);
    const std::string life = options.inclusive
                                 ? fmt::format("[{}, {}]", b.lifespan.lower, b.lifespan.upper - 1)
                                 : fmt::format("[{}, {})", b.lifespan.lower, b.lifespan.upper);
    out += fmt::format(
        "<g><title>{} bytes [{:#x}, {:#x}) live {}</title><rect x='{:.1f}' y='{:.1f}' width='{:.1f}' "
        "height='{:.1f}' fill='{}' stroke='{}' stroke-width='{}'/>",
        escape(b.id), *b.offset, *b.offset + b.size.value, life, x0, y0, std::max(0.5, x1 - x0),
        std::max(0.5, y1 - y0),
        highlighted(b.id) ? std::string("#e53935") : fmt::format("hsl({},55%,75%)", (i * 47) % 360),
        bad[i] || highlighted(b.id) ? "red" : "#333", bad[i] || highlighted(b.id) ? 2 : 0.5);
    if ((x1 - x0 > 8.0 * double(b.id.size()) && y1 - y0 > 12) || labelled(b.id))
      out += fmt::format("<text x='{:.1f}' y='{:.1f}' font-size='{}'{}>{}</text>", x0 + 2,
                         (y0 + y1) / 2 + 4, w ? 12 : 10, highlighted(b.id) ? " font-weight='bold'" : "",
                         escape(b.id));
    out += "</g>\n";
  }
  // The shared bytes of each overlap, over the time both buffers are live.
  if (check)
    for (const auto& f : check->findings) {
      if (f.outcome != PlanOutcome::kOverlap || !f.other) continue;
      const PlanBuffer &a = plan.buffers[f.buffer], &b = plan.buffers[*f.other];
      if (!a.offset || !b.offset || outside(a) || outside(b)) continue;
      const uint64_t lo = std::max(*a.offset, *b.offset);
      const uint64_t hi = std::min(*a.offset + a.size.value, *b.offset + b.size.value);
      const TimeValue t0 = std::max(a.lifespan.lower, b.lifespan.lower);
      const TimeValue t1 = std::min(a.lifespan.upper, b.lifespan.upper);
      out += fmt::format(
          "<rect x='{:.1f}' y='{:.1f}' width='{:.1f}' height='{:.1f}' fill='red' opacity='0.7'>"
          "<title>{}</title></rect>\n",
          s.x(t0), s.y(hi), std::max(1.0, s.x(t1) - s.x(t0)), std::max(1.0, s.y(lo) - s.y(hi)),
          escape(f.message));
    }
  if (w) {
    out += window_marks(s, *w);
  } else {
    out += bound_lines(s, lb, peak, plan.capacity ? std::optional(plan.capacity->value) : std::nullopt);
  }
  out += fmt::format("<text x='{}' y='{}' font-size='11'>time {} .. {}</text>\n", kLeft,
                     kHeight - 12, s.t0, s.t1);
  out += "</svg>\n";
  return out;
}

}  // namespace npuforge::planner
