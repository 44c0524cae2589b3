#pragma once
// Persistent in-process workers for the regression runner: each worker is a
// forked child of the runner that runs many seeds, one at a time, instead of a fresh child
// per seed. A fork per seed spent about a third of the CPU in the kernel (fork, page
// faults, clearing the pages every fresh child's allocations touch); a worker that lives
// for many seeds reuses its memory. Each seed still simulates on a fresh SystemC kernel
// (sim::sc_model::restart_kernel), so its verdict is the one a fresh process gives.
//
// Protocol: the runner writes a task index to the worker's command pipe; the worker points
// its stdout/stderr at the task's log, runs Task::in_child and writes back {index, exit
// code}. The runner sends a worker its next seed only after the previous answer, so it
// always knows the one seed a worker is on: a worker that dies (a crash, SIGKILL) or is
// killed at the timeout is charged to exactly that seed (as the per-seed child was: a
// ProcResult with the signal / timed_out) and is replaced; every other seed runs.
#include <cstdint>
#include <functional>
#include <vector>

#include "regress/proc.h"

namespace npuforge::regress {

// Seeds one worker runs before it is replaced: unlimited, but 1 in an AddressSanitizer build
// (see worker_pool.cc: SystemC's unannounced stack switches give ASan false positives in the
// next seed).
uint64_t seeds_per_worker();

// run_pool's contract (see regress/proc.h) for tasks that all have `in_child`, run by at
// most `workers` persistent children. ProcResult::seconds is the seed's own time. Returns
// how many workers were started (`workers`, plus one per worker lost to a crash or timeout).
size_t run_worker_pool(const std::vector<Task>& tasks, unsigned workers, double timeout_s,
                     const std::function<void(size_t, const ProcResult&)>& on_done,
                     const std::function<void()>& on_tick, const bool* stop = nullptr);

}  // namespace npuforge::regress
