#include "regress/report.h"

#include <map>

#include <fmt/core.h>

#include "util/text.h"

namespace npuforge::regress {
namespace {

// Runs in first-seen order, so reports follow the list file.
std::vector<std::pair<std::string, std::vector<const SeedResult*>>> by_run(
    const std::vector<SeedResult>& results) {
  std::vector<std::pair<std::string, std::vector<const SeedResult*>>> runs;
  std::map<std::string, size_t> index;
  for (const auto& r : results) {
    auto [it, fresh] = index.emplace(r.job.run, runs.size());
    if (fresh) runs.push_back({r.job.run, {}});
    runs[it->second].second.push_back(&r);
  }
  return runs;
}

}  // namespace

std::string_view to_string(Status s) {
  switch (s) {
    case Status::Pass: return "pass";
    case Status::Fail: return "fail";
    case Status::Error: return "error";
  }
  return "?";
}

Totals count(const std::vector<SeedResult>& results) {
  Totals t;
  for (const auto& r : results) {
    (r.status == Status::Pass ? t.pass : r.status == Status::Fail ? t.fail : t.error)++;
  }
  return t;
}

std::string junit_xml(const std::vector<SeedResult>& results, const Totals& totals,
                      const std::vector<std::string>& problems) {
  std::string x = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  x += fmt::format("<testsuites name=\"npuforge regress\" tests=\"{}\" failures=\"{}\" errors=\"{}\" time=\"{:.3f}\">\n",
                   results.size() + problems.size(), totals.fail, totals.error + problems.size(), totals.seconds);
  for (const auto& [run, items] : by_run(results)) {
    const Totals t = [&] {
      Totals c;
      double s = 0;
      for (auto* r : items) {
        (r->status == Status::Pass ? c.pass : r->status == Status::Fail ? c.fail : c.error)++;
        s += r->seconds;
      }
      c.seconds = s;
      return c;
    }();
    x += fmt::format("  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" time=\"{:.3f}\">\n",
                     util::xml_escape(run), items.size(), t.fail, t.error, t.seconds);
    for (const SeedResult* r : items) {
      x += fmt::format("    <testcase classname=\"{}\" name=\"seed {}\" time=\"{:.3f}\"",
                       util::xml_escape("npuforge." + run), r->job.seed, r->seconds);
      if (r->status == Status::Pass) {
        x += "/>\n";
        continue;
      }
      const char* element = r->status == Status::Fail ? "failure" : "error";
      const std::string kind = tag(r->kind);
      x += ">\n";
      x += fmt::format("      <{} message=\"{}\" type=\"{}\">{}\nreproduce: {}</{}>\n", element,
                       util::xml_escape(r->finding), util::xml_escape(kind.empty() ? element : kind),
                       util::xml_escape(r->finding), util::xml_escape(r->repro), element);
      x += "    </testcase>\n";
    }
    x += "  </testsuite>\n";
  }
  if (!problems.empty()) {
    x += fmt::format("  <testsuite name=\"merge\" tests=\"{0}\" failures=\"0\" errors=\"{0}\" time=\"0\">\n",
                     problems.size());
    for (size_t i = 0; i < problems.size(); ++i) {
      x += fmt::format("    <testcase classname=\"npuforge.merge\" name=\"problem {}\" time=\"0\">\n"
                       "      <error message=\"{}\" type=\"merge/missing-shard\">{}</error>\n    </testcase>\n",
                       i + 1, util::xml_escape(problems[i]), util::xml_escape(problems[i]));
    }
    x += "  </testsuite>\n";
  }
  return x + "</testsuites>\n";
}

std::string summary_json(const std::vector<SeedResult>& results, const Totals& totals,
                         const std::vector<std::string>& problems) {
  std::string j = "{\n";
  j += fmt::format("  \"seeds\": {}, \"pass\": {}, \"fail\": {}, \"error\": {},\n", results.size(),
                   totals.pass, totals.fail, totals.error);
  j += fmt::format("  \"seconds\": {:.3f}, \"workers\": {}, \"seeds_per_second\": {:.3f},\n",
                   totals.seconds, totals.workers,
                   totals.seconds > 0 ? results.size() / totals.seconds : 0.0);
  j += "  \"failures\": [";
  bool first = true;
  for (const auto& r : results) {
    if (r.status == Status::Pass) continue;
    j += first ? "\n" : ",\n";
    first = false;
    j += fmt::format(
        "    {{\"run\": {}, \"seed\": {}, \"status\": \"{}\", \"kind\": {}, \"finding\": {}, "
        "\"findings\": {}, \"profile\": {}, \"rtl\": {}, \"files\": {}, \"repro\": {}, \"shrunk\": {}}}",
        util::json_quote(r.job.run), r.job.seed, to_string(r.status), util::json_quote(tag(r.kind)),
        util::json_quote(r.finding), r.findings, util::json_quote(r.job.profile), r.job.rtl ? "true" : "false",
        util::json_quote(r.prefix), util::json_quote(r.repro), util::json_quote(r.shrunk));
  }
  j += first ? "],\n" : "\n  ],\n";
  j += "  \"problems\": [";
  for (size_t i = 0; i < problems.size(); ++i) j += (i ? ", " : "") + util::json_quote(problems[i]);
  j += "]\n";
  return j + "}\n";
}

std::string summary_table(const std::vector<SeedResult>& results, const Totals& totals) {
  std::string s = fmt::format("{:<24} {:>7} {:>7} {:>7} {:>7} {:>9}\n", "run", "seeds", "pass",
                              "fail", "error", "cpu s");
  for (const auto& [run, items] : by_run(results)) {
    uint64_t p = 0, f = 0, e = 0;
    double sec = 0;
    for (auto* r : items) {
      (r->status == Status::Pass ? p : r->status == Status::Fail ? f : e)++;
      sec += r->seconds;
    }
    s += fmt::format("{:<24} {:>7} {:>7} {:>7} {:>7} {:>9.2f}\n", run, items.size(), p, f, e, sec);
  }
  s += fmt::format("{:<24} {:>7} {:>7} {:>7} {:>7}   wall {:.2f} s, {} workers, {:.2f} seeds/s\n",
                   "total", results.size(), totals.pass, totals.fail, totals.error, totals.seconds,
                   totals.workers, totals.seconds > 0 ? results.size() / totals.seconds : 0.0);
  return s;
}

std::string seed_table(const std::vector<SeedResult>& results) {
  std::string s = fmt::format("{:<20} {:<6} {:>8} {:>8} {:>10} {:>6} {:>10} {:>8}  {}\n", "seed", "status", "instrs",
                              "buffers", "peak SRAM", "%", "cycles", "findings", "first finding");
  for (const auto& r : results) {
    const double pct = r.sram_bytes ? 100.0 * static_cast<double>(r.peak_sram) / static_cast<double>(r.sram_bytes) : 0;
    s += fmt::format("{:<20} {:<6} {:>8} {:>8} {:>10} {:>5.1f}% {:>10} {:>8}  {}\n", r.job.id(), to_string(r.status),
                     r.instructions, r.buffers, r.peak_sram, pct, r.cycles, r.findings,
                     r.finding.size() > 60 ? r.finding.substr(0, 57) + "..." : r.finding);
  }
  return s;
}

}  // namespace npuforge::regress
