#include "regress/job_check.h"

#include <set>
#include <utility>

#include <fmt/core.h>

#include "gen/profile.h"
#include "isa/npu_config.h"
#include "util/error.h"
#include "util/plant.h"

namespace npuforge::regress {
namespace {

// The loader's own message names the file, line and key; a list entry's origin says which
// entry named the file (a --profile job has none: the option names it).
[[noreturn]] void rethrow_for(const Job& job, std::string_view what, const Error& e) {
  if (job.origin.empty()) throw e;
  throw Error(fmt::format("{}: its {} does not load: {}", job.origin, what, e.what()));
}

}  // namespace

void check_job_inputs(const std::vector<Job>& jobs) {
  std::set<std::string> profiles, npus;
  for (const Job& job : jobs) {
    if (profiles.insert(job.profile).second) {
      try {
        (void)gen::Profile::load_file(job.profile);
      } catch (const Error& e) {
        rethrow_for(job, "profile", e);
      }
    }
    if (npus.insert(job.npu).second) {
      try {
        (void)isa::load_npu_config(job.npu);
      } catch (const Error& e) {
        rethrow_for(job, "NPU config", e);
      }
    }
    if (!job.plant.empty() && plant_needs_rtl(parse_plant(job.plant)) && !job.rtl) {
      throw Error(fmt::format("{}: plant {} lives in RTL, but the run is not an RTL run (add {})",
                              job.origin.empty() ? job.id() : job.origin, job.plant,
                              job.origin.empty() ? "--rtl" : "rtl: true"));
    }
  }
}

}  // namespace npuforge::regress
