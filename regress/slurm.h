#pragma once
// Running a regression's shards on a Slurm cluster: an sbatch script with one array task per
// shard (task K runs `npuforge regress ... --shard K/N --out DIR/shard-K`), submission,
// progress from squeue and the shards' progress files, the final state of every task, and the
// merge (regress/merge.h) once the array has ended. A task that failed or was killed by the
// scheduler is reported by name and its shard is missing from the merge, which then fails.
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

namespace npuforge::regress {

struct SlurmOptions {
  std::string out;                      // DIR: DIR/shard-K per task, merged reports in DIR
  unsigned shards = 8;                  // N (array tasks 1..N)
  std::string partition;                // empty: the cluster's default
  unsigned cpus_per_task = 1;           // also each shard's -j
  std::vector<std::string> shard_args;  // regress arguments every shard gets (lists, options)
  std::vector<std::string> sbatch_args; // extra #SBATCH options, e.g. "--time=30"
  std::string exe;                      // the npuforge binary the tasks run (absolute)
  std::string workdir;                  // the tasks' working directory (absolute)
  double poll_s = 0.5;                  // squeue interval
  double unreachable_s = 120;           // give up when squeue fails this long in a row
};

// The sbatch script (bash, #SBATCH header, one exec line).
std::string sbatch_script(const SlurmOptions& options);
// DIR/slurm/regress.sbatch
std::string script_path(const SlurmOptions& options);
// The command that merges the shards by hand: "npuforge merge DIR/shard-* --out DIR --shards N".
std::string merge_command(const SlurmOptions& options);

// The state of one array task.
struct TaskState {
  unsigned task = 0;      // SLURM_ARRAY_TASK_ID, = shard number
  std::string state;      // PENDING, RUNNING, COMPLETED, FAILED, CANCELLED, TIMEOUT, ...
  std::string reason;     // why pending, or why it ended ("None" when nothing to say)
  int exit_code = -1;     // from scontrol's ExitCode=code:signal; -1 unknown
  int signal = 0;
};
// `squeue -h -r -t all -j JOB -o '%K %T %r'` output: one task per line.
std::vector<TaskState> parse_squeue(std::string_view text);
// `scontrol -o show job JOB` output: one record per line (ArrayTaskId=, JobState=,
// Reason=, ExitCode=). Records of a range ("ArrayTaskId=3-8") expand to every task in it.
std::vector<TaskState> parse_scontrol(std::string_view text);
// True for states a task does not leave (COMPLETED, FAILED, CANCELLED, TIMEOUT, ...).
bool is_terminal(std::string_view state);
// "1-3,7" or "5" (Slurm's array ranges, a "%limit" suffix ignored) to task numbers.
std::vector<unsigned> parse_task_ranges(std::string_view spec);

// Writes the script, submits it, waits for the array to end (progress to `log`), reports
// every task that did not complete, and merges. Returns the merge's exit code: 0 when every
// shard finished and every seed passed, 1 otherwise. Throws npuforge::Error when sbatch
// fails or the cluster stops answering.
int run_on_slurm(const SlurmOptions& options, std::FILE* log);

}  // namespace npuforge::regress
