#pragma once
// Everything a regression's jobs name, checked before any seed runs: a profile, NPU config or
// list entry that cannot run is one error naming the file, line and key (and the list entry
// that names it), not the same error once per seed.
#include <vector>

#include "regress/jobs.h"

namespace npuforge::regress {

// Loads every distinct profile and NPU config of `jobs` and checks each job's plant against
// its mode (an RTL plant needs an RTL run); throws npuforge::Error on the first problem.
void check_job_inputs(const std::vector<Job>& jobs);

}  // namespace npuforge::regress
