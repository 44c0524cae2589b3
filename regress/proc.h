#pragma once
// Child processes for the runner: spawn (fork/exec, or fork and run a function, output to
// files), a pool that keeps N of them running, and a synchronous run-and-wait.
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <sys/types.h>

namespace npuforge::regress {

using Clock = std::chrono::steady_clock;

// Seconds from `t` to now.
double seconds_since(Clock::time_point t);

// In a freshly forked child: the kernel SIGKILLs it when `parent` dies, so a killed runner leaves no
// workers behind (a hung one would hold its CPU for ever). A parent that died before this call is
// caught by a getppid check.
void die_with_parent(pid_t parent);

// Runs a forked child's function: its return value, or 2 after printing "error: <what>" to stderr
// when it throws; stdio is flushed either way (the child leaves with _exit).
int run_child_function(const std::function<int()>& fn);

// The running executable (/proc/self/exe), so workers run the same build as the runner.
std::string self_exe();

struct ProcResult {
  int exit_code = -1;  // -1 when killed by a signal or timed out
  int signal = 0;
  bool timed_out = false;
  double seconds = 0;
};

// Runs argv[0] with argv, stdout and stderr to the given files ("" = /dev/null; the same
// path twice = both into one file). Waits; kills it after `timeout_s` (0 = never).
ProcResult run_process(const std::vector<std::string>& argv, const std::string& out_path,
                       const std::string& err_path, double timeout_s = 0);

struct Task {
  std::vector<std::string> argv;  // exec'd in the child (ignored when `in_child` is set)
  std::string out_path, err_path;
  // Run in a forked child of this process instead of exec'ing argv: the child inherits what
  // the parent already loaded (ISA, profiles) and its return value is the exit code. The
  // parent must be single-threaded (fork copies only the calling thread).
  std::function<int()> in_child;
};

// Runs tasks with at most `workers` at a time. `on_done(index, result)` is called in the
// parent as each finishes; `on_tick()` about every 200 ms and after each completion. When
// `*stop` turns true (set by on_done, e.g. when a result cannot be saved) no further task
// starts and the running ones are killed and reaped without on_done.
// Every child (and what it execs) is SIGKILLed by the kernel when its parent dies, so a
// killed runner leaves no workers behind.
void run_pool(const std::vector<Task>& tasks, unsigned workers, double timeout_s,
              const std::function<void(size_t, const ProcResult&)>& on_done,
              const std::function<void()>& on_tick, const bool* stop = nullptr);

}  // namespace npuforge::regress
