#pragma once
// index.html of a results directory: one static, self-contained page (inline CSS and JS, no
// server, no network) for a person in a browser. It shows the verdict and any missing shard,
// pass/fail per run, every failing seed with its first finding, its reproduction command
// (with a copy button), its files and its memory timeline (planner::plan_svg of the seed's
// memory map, the buffers the finding names filled red and overlapping buffers outlined red:
// the failure's window, regress/failure_window.h, with the whole program one click away),
// coverage per group with its holes and after how many seeds it closed, seeds/s and a
// histogram of cycles, and a filterable, paged table of all seeds (the seed data is embedded
// as JSON, so thousands of seeds stay light).
#include <filesystem>
#include <string>
#include <vector>

#include "regress/results.h"

namespace npuforge::regress {

struct HtmlOptions {
  size_t max_failure_cards = 500;  // failing seeds shown in full; the rest are in the table
  size_t max_timelines = 50;       // failing seeds with a memory timeline
};

// `out` is the results directory the page is written to (links to seed files are relative
// to it); seed files are read from each result's prefix when present.
std::string html_report(const RegressReport& report, const std::filesystem::path& out,
                        const HtmlOptions& options = {});

// The buffer names ("%name" without the '%') a finding line mentions, in order, no repeats.
std::vector<std::string> finding_symbols(const std::string& finding);

// The memory timeline of one seed's memory map (an SVG that scales with its container), the
// buffers in `highlight` filled red. Throws npuforge::Error on an unreadable map.
std::string memory_timeline_svg(const std::filesystem::path& memmap, const std::string& title,
                                const std::vector<std::string>& highlight);

}  // namespace npuforge::regress
