#include "regress/seed_kind.h"

#include <iterator>

#include <fmt/core.h>

#include "sim/verify/verify.h"
#include "util/error.h"

namespace npuforge::regress {
namespace {

struct CauseInfo {
  Cause cause;
  std::string_view name;
  std::string_view tag;  // what the reports show ("" for none; Finding: the finding's own)
};
constexpr CauseInfo kCauses[] = {
    {Cause::None, "none", ""},
    {Cause::Finding, "finding", ""},
    {Cause::NoFinding, "no-finding", ""},
    {Cause::Allocator, "allocator", "allocator/invariant"},
    {Cause::Generate, "generate", ""},
    {Cause::Simulator, "simulator", ""},
    {Cause::SimulatorCrash, "simulator-crash", ""},
    {Cause::WorkerKilled, "worker-killed", "runner/killed"},
    {Cause::WorkerExited, "worker-exited", "runner/killed"},
    {Cause::Timeout, "timeout", "runner/timeout"},
    {Cause::BadResult, "bad-result", "runner/bad-result"},
};

constexpr bool in_enum_order() {
  for (size_t i = 0; i < std::size(kCauses); ++i)
    if (static_cast<size_t>(kCauses[i].cause) != i) return false;
  return true;
}
static_assert(in_enum_order() && std::size(kCauses) == static_cast<size_t>(Cause::BadResult) + 1);

const CauseInfo& info(Cause c) { return kCauses[static_cast<size_t>(c)]; }

}  // namespace

std::string_view to_string(Cause cause) { return info(cause).name; }

std::optional<Cause> cause_named(std::string_view name) {
  for (const CauseInfo& c : kCauses)
    if (c.name == name) return c.cause;
  return std::nullopt;
}

std::string tag(const SeedKind& kind) {
  if (kind.cause == Cause::Finding) return fmt::format("{}/{}", sim::checker_of(kind.finding), sim::to_string(kind.finding));
  return std::string(info(kind.cause).tag);
}

std::optional<SeedKind> kind_of_tag(std::string_view text, Cause untagged) {
  if (text.empty()) return SeedKind{untagged};
  for (const CauseInfo& c : kCauses)  // the first cause with that tag (runner/killed: WorkerKilled)
    if (!c.tag.empty() && c.tag == text) return SeedKind{c.cause};
  const size_t slash = text.find('/');
  if (slash == std::string_view::npos) return std::nullopt;
  const auto k = sim::finding_kind_named(text.substr(slash + 1));
  if (!k || sim::checker_of(*k) != text.substr(0, slash)) return std::nullopt;
  return finding_kind(*k);
}

std::string kind_json_fields(const SeedKind& kind) {
  return fmt::format("\"cause\": \"{}\", \"finding_kind\": \"{}\"", to_string(kind.cause),
                     kind.cause == Cause::Finding ? sim::to_string(kind.finding) : "");
}

SeedKind parse_kind_fields(std::string_view cause, std::string_view finding, std::string_view source) {
  const std::optional<Cause> c = cause_named(cause);
  if (!c) throw Error(fmt::format("{}: unknown cause '{}'", source, cause));
  if (*c != Cause::Finding) return SeedKind{*c};
  const std::optional<sim::FindingKind> k = sim::finding_kind_named(finding);
  if (!k) throw Error(fmt::format("{}: unknown finding kind '{}'", source, finding));
  return finding_kind(*k);
}

SeedKind kind_of(const sim::verify::Verdict& v) {
  if (const sim::Finding* f = v.first()) return finding_kind(f->kind);
  return SeedKind{v.pass ? Cause::None : Cause::NoFinding};
}

}  // namespace npuforge::regress
