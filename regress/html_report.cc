#include "regress/html_report.h"

#include <algorithm>
#include <cctype>
#include <map>

#include <fmt/core.h>

#include "bundle/memmap.h"
#include "planner/plan_check.h"
#include "planner/plan_problem.h"
#include "planner/plan_svg.h"
#include "regress/failure_window.h"
#include "regress/html_style.h"
#include "sim/verify/verdict_json.h"
#include "util/error.h"
#include "util/file_io.h"
#include "util/text.h"

namespace npuforge::regress {
namespace fs = std::filesystem;
namespace {

std::string esc(std::string_view s) { return util::xml_escape(s); }

// JSON inside <script>: "</" would end the element early.
std::string script_safe(std::string json) {
  for (size_t at = json.find("</"); at != std::string::npos; at = json.find("</", at + 3)) json.replace(at, 2, "<\\/");
  return json;
}

std::string status_badge(Status s) {
  return fmt::format("<span class='badge {0}'>{0}</span>", to_string(s));
}

double seeds_per_second(const RegressReport& rep) {
  return rep.totals.seconds > 0 ? static_cast<double>(rep.results.size()) / rep.totals.seconds : 0.0;
}

std::string header(const RegressReport& rep) {
  const Totals& t = rep.totals;
  const bool ok = t.fail + t.error == 0 && rep.problems.empty();
  std::string h = fmt::format("<header class='{}'><h1>{}</h1><div class='verdict'>{}</div></header>\n",
                              ok ? "ok" : "bad", esc(rep.title), ok ? "PASS" : "FAIL");
  h += "<section class='stats'>";
  auto stat = [&](const std::string& label, const std::string& value, const char* cls) {
    h += fmt::format("<div class='stat {}'><div class='value'>{}</div><div class='label'>{}</div></div>", cls, value, label);
  };
  stat("seeds", std::to_string(rep.results.size()), "");
  stat("pass", std::to_string(t.pass), "pass");
  stat("fail", std::to_string(t.fail), t.fail ? "fail" : "");
  stat("error", std::to_string(t.error), t.error ? "error" : "");
  stat("wall time", fmt::format("{:.1f} s", t.seconds), "");
  stat("seeds / s", fmt::format("{:.2f}", seeds_per_second(rep)), "");
  h += "</section>\n";
  if (!rep.problems.empty()) {
    h += "<section class='problems'><h2>Missing results</h2><ul>";
    for (const auto& p : rep.problems) h += "<li>" + esc(p) + "</li>";
    h += "</ul><p>These seeds are not in the report: the merge failed.</p></section>\n";
  }
  return h;
}

std::string runs_table(const RegressReport& rep) {
  struct Row {
    uint64_t seeds = 0, pass = 0, fail = 0, error = 0, cycles = 0;
    double cpu = 0;
  };
  std::vector<std::string> order;
  std::map<std::string, Row> rows;
  for (const auto& r : rep.results) {
    if (!rows.count(r.job.run)) order.push_back(r.job.run);
    Row& row = rows[r.job.run];
    ++row.seeds;
    (r.status == Status::Pass ? row.pass : r.status == Status::Fail ? row.fail : row.error)++;
    row.cycles += r.cycles;
    row.cpu += r.seconds;
  }
  std::string h = "<section><h2>Runs</h2><table class='runs'><thead><tr><th>run</th><th>seeds</th><th>pass</th>"
                  "<th>fail</th><th>error</th><th>mean cycles</th><th>cpu s</th></tr></thead><tbody>";
  for (const auto& name : order) {
    const Row& r = rows[name];
    h += fmt::format("<tr class='{}'><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.1f}</td></tr>",
                     r.fail + r.error ? "bad" : "ok", esc(name), r.seeds, r.pass, r.fail, r.error,
                     r.seeds ? r.cycles / r.seeds : 0, r.cpu);
  }
  return h + "</tbody></table></section>\n";
}

// The first findings of a seed's simulator verdict (PREFIX.sim.json, sim/verify/verdict_json.h),
// at most `max`, one line each; none when the simulator left no readable verdict.
std::vector<std::string> sim_findings(const std::string& prefix, size_t max) {
  std::vector<std::string> out;
  const fs::path path = prefix + ".sim.json";
  if (!fs::exists(path)) return out;
  try {
    const sim::verify::Verdict v = sim::verify::parse_json(util::read_file(path, "simulator verdict"), path.string());
    for (size_t i = 0; i < v.kept.size() && i < max; ++i) out.push_back(sim::format(v.kept[i]));
  } catch (const Error&) {  // a verdict cut short (the worker died mid-write): the card shows the first finding only
  }
  return out;
}

std::string relative_link(const std::string& path, const fs::path& out) {
  std::error_code ec;
  const fs::path rel = fs::relative(fs::absolute(path), fs::absolute(out), ec);
  return ec || rel.empty() ? "file://" + fs::absolute(path).string() : rel.generic_string();
}

std::string failure_card(const SeedResult& r, const fs::path& out, bool timeline) {
  std::string h = fmt::format("<article class='failure' id='seed-{}'><h3>{} <code>{}</code> <span class='kind'>{}</span></h3>\n",
                              esc(r.job.name()), status_badge(r.status), esc(r.job.id()), esc(tag(r.kind)));
  h += fmt::format("<p class='finding'>{}</p>\n", esc(r.finding.empty() ? "(no finding text)" : r.finding));
  h += fmt::format("<div class='repro'><code>{}</code><button type='button' onclick='copyRepro(this)'>Copy</button></div>\n",
                   esc(r.repro));
  std::string files;
  for (const char* ext : {".s", ".memmap.yaml", ".sim.log", ".log", ".bin", ".ddr.bin"}) {
    if (fs::exists(r.prefix + ext)) {
      files += fmt::format(" <a href='{}'>{}</a>", esc(relative_link(r.prefix + ext, out)), ext + 1);
    }
  }
  if (!r.shrunk.empty() && fs::exists(r.shrunk)) {
    files += fmt::format(" <a href='{}'>shrunk program</a>", esc(relative_link(r.shrunk, out)));
  }
  if (!files.empty()) h += "<p class='files'>files:" + files + "</p>\n";
  const std::vector<std::string> findings = sim_findings(r.prefix, 6);
  if (findings.size() > 1) {
    h += "<details><summary>first findings</summary><pre>";
    for (const auto& f : findings) h += esc(f) + "\n";
    h += "</pre></details>\n";
  }
  const fs::path memmap = r.prefix + ".memmap.yaml";
  if (timeline && fs::exists(memmap)) {
    try {
      const auto hot = finding_symbols(r.finding);
      std::string names;
      for (const auto& s : hot) names += (names.empty() ? "%" : ", %") + s;
      const std::string red = "Filled red: " + esc(names.empty() ? "(the finding names no buffer)" : names) +
                              "; outlined red: buffers whose placement overlaps another live buffer.";
      const std::string whole = memory_timeline_svg(memmap, r.job.id(), hot);
      const std::string window = failure_window_svg(memmap, r.job.id(), r.finding);
      if (window.empty()) {
        h += "<figure class='timeline'>" + whole + "<figcaption>Memory timeline: instruction on x, SRAM address on y " +
             "(up to the peak). " + red + "</figcaption></figure>\n";
      } else {
        h += "<figure class='timeline'><div class='failure-window'>" + window +
             "</div><figcaption>The failure's window: the instructions around the first finding (dashed line), "
             "the addresses of the buffers it names and their neighbours, labelled. " + red +
             "</figcaption><details class='whole'><summary>whole program</summary>" + whole +
             "<p class='note'>Instruction on x, SRAM address on y (up to the peak).</p></details></figure>\n";
      }
    } catch (const std::exception& e) {
      h += fmt::format("<p class='note'>memory timeline unavailable: {}</p>\n", esc(e.what()));
    }
  }
  return h + "</article>\n";
}

std::string failures_section(const RegressReport& rep, const fs::path& out, const HtmlOptions& o) {
  std::vector<const SeedResult*> bad;
  for (const auto& r : rep.results) {
    if (r.status != Status::Pass) bad.push_back(&r);
  }
  if (bad.empty()) return "<section><h2>Failures</h2><p class='none'>No failing seed.</p></section>\n";
  std::string h = fmt::format("<section><h2>Failures ({})</h2>\n", bad.size());
  for (size_t i = 0; i < bad.size() && i < o.max_failure_cards; ++i) {
    h += failure_card(*bad[i], out, i < o.max_timelines);
  }
  if (bad.size() > o.max_failure_cards) {
    h += fmt::format("<p class='note'>{} more failing seeds: see the seed table below and failures.txt.</p>\n",
                     bad.size() - o.max_failure_cards);
  }
  return h + "</section>\n";
}

std::string coverage_section(const Coverage& cov) {
  std::string h = fmt::format("<section><h2>Coverage over {} seeds</h2>\n<div class='coverage'>", cov.seeds());
  for (const auto& g : cov.groups()) {
    const size_t covered = g.covered();
    const double pct = g.bins.empty() ? 100.0 : 100.0 * static_cast<double>(covered) / static_cast<double>(g.bins.size());
    h += fmt::format("<div class='group {}'><div class='gname'>{}</div><div class='bar'><span style='width:{:.1f}%'></span></div>"
                     "<div class='gnum'>{}/{} ({:.0f}%)</div><div class='closed'>{}</div><div class='bins'>",
                     g.complete() ? "done" : "open", esc(g.name), pct, covered, g.bins.size(), pct,
                     g.complete() ? fmt::format("closed after {} seed{}", g.complete_after, g.complete_after == 1 ? "" : "s")
                                  : fmt::format("{} hole{}", g.bins.size() - covered, g.bins.size() - covered == 1 ? "" : "s"));
    for (const auto& [bin, n] : g.bins) {
      h += fmt::format("<span class='bin {}' title='{}.{}: {} hits'>{} <b>{}</b></span>", n ? "hit" : "hole", esc(g.name),
                       esc(bin), n, esc(bin), n);
    }
    h += "</div></div>\n";
  }
  return h + "</div></section>\n";
}

// A histogram of the cycles of the seeds that ran (fail and error in their own colour).
std::string cycles_histogram(const RegressReport& rep) {
  std::vector<const SeedResult*> ran;
  for (const auto& r : rep.results) {
    if (r.cycles > 0) ran.push_back(&r);
  }
  if (ran.empty()) return "<p class='note'>No seed reported cycles.</p>";
  uint64_t lo = ran[0]->cycles, hi = lo;
  for (auto* r : ran) lo = std::min(lo, r->cycles), hi = std::max(hi, r->cycles);
  const size_t nbins = std::min<size_t>(30, std::max<size_t>(1, ran.size() / 2));
  const double width = std::max(1.0, static_cast<double>(hi - lo + 1) / static_cast<double>(nbins));
  std::vector<size_t> ok(nbins, 0), bad(nbins, 0);
  for (auto* r : ran) {
    const size_t b = std::min(nbins - 1, static_cast<size_t>(static_cast<double>(r->cycles - lo) / width));
    (r->status == Status::Pass ? ok : bad)[b]++;
  }
  size_t top = 1;
  for (size_t b = 0; b < nbins; ++b) top = std::max(top, ok[b] + bad[b]);
  constexpr double W = 900, H = 260, L = 50, B = 40, T = 10;
  const double bw = (W - L - 10) / static_cast<double>(nbins);
  std::string s = fmt::format("<svg viewBox='0 0 {} {}' class='hist' role='img' aria-label='histogram of cycles'>", W, H);
  auto y = [&](double n) { return H - B - (H - B - T) * n / static_cast<double>(top); };
  s += fmt::format("<line x1='{}' x2='{}' y1='{}' y2='{}' class='axis'/>", L, W - 10, H - B, H - B);
  s += fmt::format("<text x='{}' y='{}' class='tick' text-anchor='end'>{}</text>", L - 6, T + 4, top);
  s += fmt::format("<text x='{}' y='{}' class='tick' text-anchor='end'>0</text>", L - 6, H - B);
  for (size_t b = 0; b < nbins; ++b) {
    const double x = L + bw * static_cast<double>(b);
    const uint64_t from = lo + static_cast<uint64_t>(width * static_cast<double>(b));
    const uint64_t to = lo + static_cast<uint64_t>(width * static_cast<double>(b + 1));
    s += fmt::format("<g><title>{} to {} cycles: {} seeds ({} failing)</title>", from, to, ok[b] + bad[b], bad[b]);
    if (ok[b]) s += fmt::format("<rect x='{:.1f}' y='{:.1f}' width='{:.1f}' height='{:.1f}' class='ok'/>", x + 1, y(static_cast<double>(ok[b])), bw - 2, H - B - y(static_cast<double>(ok[b])));
    if (bad[b]) s += fmt::format("<rect x='{:.1f}' y='{:.1f}' width='{:.1f}' height='{:.1f}' class='bad'/>", x + 1, y(static_cast<double>(ok[b] + bad[b])), bw - 2, y(static_cast<double>(ok[b])) - y(static_cast<double>(ok[b] + bad[b])));
    s += "</g>";
  }
  s += fmt::format("<text x='{}' y='{}' class='tick'>{}</text><text x='{}' y='{}' class='tick' text-anchor='end'>{}</text>",
                   L, H - B + 16, lo, W - 10, H - B + 16, hi);
  s += fmt::format("<text x='{}' y='{}' class='tick' text-anchor='middle'>cycles per seed (red: failing seeds)</text>", (L + W) / 2, H - 6);
  return s + "</svg>";
}

std::string performance_section(const RegressReport& rep) {
  double cpu = 0;
  for (const auto& r : rep.results) cpu += r.seconds;
  std::string h = "<section><h2>Throughput and cycles</h2>";
  h += fmt::format("<p>{} seeds in {:.1f} s wall time on {} worker{}: <b>{:.2f} seeds/s</b>; {:.1f} s of seed time in total, "
                   "{:.2f} s per seed on average.</p>",
                   rep.results.size(), rep.totals.seconds, rep.totals.workers, rep.totals.workers == 1 ? "" : "s",
                   seeds_per_second(rep), cpu, rep.results.empty() ? 0.0 : cpu / static_cast<double>(rep.results.size()));
  return h + cycles_histogram(rep) + "</section>\n";
}

std::string seed_table(const RegressReport& rep) {
  std::string data = "[";
  for (size_t i = 0; i < rep.results.size(); ++i) {
    const SeedResult& r = rep.results[i];
    const double pct = r.sram_bytes ? 100.0 * static_cast<double>(r.peak_sram) / static_cast<double>(r.sram_bytes) : 0.0;
    data += fmt::format("{}[{},{},\"{}\",{},{},{},{:.1f},{:.3f},{}]", i ? ",\n" : "", util::json_quote(r.job.run), r.job.seed,
                        to_string(r.status), r.instructions, r.buffers, r.cycles, pct, r.seconds,
                        util::json_quote(r.finding));
  }
  data += "]";
  return "<section><h2>All seeds</h2><div class='controls'>"
         "<label>status <select id='f-status'><option value=''>all</option><option>pass</option><option>fail</option>"
         "<option>error</option></select></label> <label>search <input id='f-text' type='search' "
         "placeholder='run, seed or finding'></label> <span id='f-count'></span>"
         " <button type='button' id='f-prev'>&#8592; prev</button> <span id='f-page'></span> "
         "<button type='button' id='f-next'>next &#8594;</button></div>"
         "<table class='seeds'><thead><tr><th data-k='0'>run</th><th data-k='1'>seed</th><th data-k='2'>status</th>"
         "<th data-k='3'>instructions</th><th data-k='4'>buffers</th><th data-k='5'>cycles</th><th data-k='6'>peak SRAM %</th>"
         "<th data-k='7'>seconds</th><th data-k='8'>first finding</th></tr></thead><tbody id='seed-rows'></tbody></table>"
         "<noscript><p class='note'>The seed table needs JavaScript; results.jsonl has the same data.</p></noscript>"
         "<script type='application/json' id='seed-data'>" +
         script_safe(data) + "</script></section>\n";
}

}  // namespace

std::vector<std::string> finding_symbols(const std::string& finding) {
  std::vector<std::string> out;
  for (size_t at = finding.find('%'); at != std::string::npos; at = finding.find('%', at + 1)) {
    size_t end = at + 1;
    while (end < finding.size() && (std::isalnum(static_cast<unsigned char>(finding[end])) || finding[end] == '_' ||
                                    finding[end] == '.')) {
      ++end;
    }
    const std::string name = finding.substr(at + 1, end - at - 1);
    if (!name.empty() && std::find(out.begin(), out.end(), name) == out.end()) out.push_back(name);
  }
  return out;
}

std::string memory_timeline_svg(const fs::path& memmap, const std::string& title,
                                const std::vector<std::string>& highlight) {
  planner::PlanProblem plan = planner::problem_from_memmap(bundle::MemMap::load_file(memmap));
  const planner::PlanCheckResult check = planner::check_plan(plan);
  // Drawn up to the peak, not the whole SRAM: the buffers would be a sliver at the bottom.
  plan.capacity.reset();
  planner::SvgOptions opt;
  opt.inclusive = true;
  opt.title = title;
  opt.highlight = highlight;
  return scalable_svg(planner::plan_svg(plan, &check, opt), "memmap");
}

std::string html_report(const RegressReport& rep, const fs::path& out, const HtmlOptions& o) {
  std::string h = "<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
                  "<meta name='viewport' content='width=device-width, initial-scale=1'>";
  h += "<title>" + esc(rep.title) + "</title><style>" + std::string(kReportCss) + "</style></head><body>\n";
  h += header(rep);
  h += "<nav><a href='#failures'>Failures</a> <a href='#coverage'>Coverage</a> <a href='#perf'>Throughput</a> "
       "<a href='#seeds'>All seeds</a> <span class='files'>files: <a href='junit.xml'>junit.xml</a> "
       "<a href='summary.json'>summary.json</a> <a href='coverage.json'>coverage.json</a> "
       "<a href='failures.txt'>failures.txt</a> <a href='results.jsonl'>results.jsonl</a></span></nav>\n<main>\n";
  h += runs_table(rep);
  h += "<div id='failures'></div>" + failures_section(rep, out, o);
  h += "<div id='coverage'></div>" + coverage_section(rep.coverage);
  h += "<div id='perf'></div>" + performance_section(rep);
  h += "<div id='seeds'></div>" + seed_table(rep);
  h += "</main><footer>written by npuforge; static page, no server needed</footer>\n";
  h += "<script>" + std::string(kReportJs) + "</script>\n</body></html>\n";
  return h;
}

}  // namespace npuforge::regress
