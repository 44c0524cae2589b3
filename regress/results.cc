#include "regress/results.h"

#include <chrono>

#include <fmt/core.h>
#include <yaml-cpp/yaml.h>

#include "regress/html_report.h"
#include "regress/json_read.h"
#include "util/error.h"
#include "util/file_io.h"
#include "util/text.h"

namespace npuforge::regress {
namespace {

Status parse_status(const std::string& s, std::string_view source) {
  if (s == "pass") return Status::Pass;
  if (s == "fail") return Status::Fail;
  if (s == "error") return Status::Error;
  throw Error(fmt::format("{}: status '{}' (expected pass, fail or error)", source, s));
}

// A result's kind from its tag; an untagged failure or error reads as the usual cause of its
// status (a failure without a finding, a simulator error).
SeedKind read_kind(const std::string& text, Status status, std::string_view source) {
  const Cause untagged = status == Status::Pass ? Cause::None : status == Status::Fail ? Cause::NoFinding : Cause::Simulator;
  if (const auto k = kind_of_tag(text, untagged)) return *k;
  throw Error(fmt::format("{}: unknown kind '{}' (expected checker/kind, e.g. hazard/hazard, or runner/...)", source, text));
}

}  // namespace

double unix_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string run_info_json(const RunInfo& i) {
  return fmt::format(
      "{{\"shard\": \"{}/{}\", \"list_jobs\": {}, \"shard_jobs\": {}, \"exe\": {}, \"started\": {:.3f}, "
      "\"finished\": {:.3f}}}\n",
      i.shard.k, i.shard.n, i.list_jobs, i.shard_jobs, util::json_quote(i.exe), i.started, i.finished);
}

RunInfo parse_run_info(std::string_view text, std::string_view source) {
  const YAML::Node n = parse_json_object(text, source);
  RunInfo i;
  i.shard = parse_shard(json_field<std::string>(n, "shard", source));
  i.list_jobs = json_field<uint64_t>(n, "list_jobs", source);
  i.shard_jobs = json_field<uint64_t>(n, "shard_jobs", source);
  i.exe = json_field<std::string>(n, "exe", source);
  i.started = json_field<double>(n, "started", source);
  i.finished = json_field<double>(n, "finished", source);
  return i;
}

std::string result_json(const SeedResult& r) {
  const Job& j = r.job;
  return fmt::format(
      "{{\"index\": {}, \"run\": {}, \"seed\": {}, \"profile\": {}, \"npu\": {}, \"length\": {}, \"rtl\": {}, "
      "\"plant\": {}, \"status\": \"{}\", \"kind\": {}, \"finding\": {}, \"findings\": {}, "
      "\"instructions\": {}, \"buffers\": {}, \"peak_sram\": {}, \"sram_bytes\": {}, \"cycles\": {}, "
      "\"seconds\": {:.4f}, \"prefix\": {}, \"repro\": {}, \"shrunk\": {}}}",
      j.index, util::json_quote(j.run), j.seed, util::json_quote(j.profile), util::json_quote(j.npu), j.length,
      j.rtl ? "true" : "false", util::json_quote(j.plant), to_string(r.status), util::json_quote(tag(r.kind)),
      util::json_quote(r.finding), r.findings, r.instructions, r.buffers, r.peak_sram, r.sram_bytes, r.cycles,
      r.seconds, util::json_quote(r.prefix), util::json_quote(r.repro), util::json_quote(r.shrunk));
}

std::string results_jsonl(const std::vector<SeedResult>& results) {
  std::string s;
  for (const auto& r : results) s += result_json(r) + "\n";
  return s;
}

Job read_job_fields(const YAML::Node& n, std::string_view source) {
  Job j;
  j.index = json_field<uint64_t>(n, "index", source);
  j.run = json_field<std::string>(n, "run", source);
  j.seed = json_field<uint64_t>(n, "seed", source);
  j.profile = json_field<std::string>(n, "profile", source);
  j.npu = json_field<std::string>(n, "npu", source);
  j.length = json_field<int64_t>(n, "length", source);
  j.rtl = json_field<bool>(n, "rtl", source);
  j.plant = json_field<std::string>(n, "plant", source);
  return j;
}

std::vector<SeedResult> parse_results(std::string_view text, std::string_view source) {
  std::vector<SeedResult> out;
  size_t line_no = 0, pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    const std::string where = fmt::format("{}:{}", source, line_no);
    const YAML::Node n = parse_json_object(line, where);
    SeedResult r;
    r.job = read_job_fields(n, where);
    r.status = parse_status(json_field<std::string>(n, "status", where), where);
    r.kind = read_kind(json_field<std::string>(n, "kind", where), r.status, where);
    r.finding = json_field<std::string>(n, "finding", where);
    r.findings = json_field<uint64_t>(n, "findings", where);
    r.instructions = json_field<uint64_t>(n, "instructions", where);
    r.buffers = json_field<uint64_t>(n, "buffers", where);
    r.peak_sram = json_field<uint64_t>(n, "peak_sram", where);
    r.sram_bytes = json_field<uint64_t>(n, "sram_bytes", where);
    r.cycles = json_field<uint64_t>(n, "cycles", where);
    r.seconds = json_field<double>(n, "seconds", where);
    r.prefix = json_field<std::string>(n, "prefix", where);
    r.repro = json_field<std::string>(n, "repro", where);
    r.shrunk = json_field<std::string>(n, "shrunk", where);
    out.push_back(std::move(r));
  }
  return out;
}

void write_reports(const std::filesystem::path& out, const RegressReport& rep) {
  util::write_file(out / "junit.xml", junit_xml(rep.results, rep.totals, rep.problems));
  util::write_file(out / "summary.json", summary_json(rep.results, rep.totals, rep.problems));
  util::write_file(out / "coverage.json", rep.coverage.to_json());
  std::string failures;
  for (const auto& r : rep.results) {
    if (r.status != Status::Pass) failures += r.repro + "\n";
  }
  util::write_file(out / "failures.txt", failures);
  util::write_file(out / "results.jsonl", results_jsonl(rep.results));
  util::write_file(out / "index.html", html_report(rep, out));
}

}  // namespace npuforge::regress
