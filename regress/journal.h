#pragma once
// What lets a regression survive its own death: a results journal appended and flushed
// (write(2), no user-space buffer) as each seed finishes, the run's options in run.json,
// and a lock so that two runners never share one results directory.
//   DIR/run.json       the jobs and per-run options, written before the first seed starts;
//                      `npuforge regress --resume DIR` runs from it alone
//   DIR/journal.jsonl  one results.jsonl line per finished seed, in finishing order
//   DIR/.lock          held (fcntl record lock) while a runner works in DIR, removed when it ends
// A run is finished when shard.json records its end; a directory with run.json and no
// such record holds an interrupted run (the runner was killed, or a disk filled up).
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "regress/report.h"
#include "regress/runner.h"

namespace npuforge::regress {

// run.json: the jobs (profile and NPU paths made absolute, so a resume works from any
// directory) and what else decides their results. Test hooks (--plant-kill/--plant-hang)
// and the worker count are left out: a resume takes those from its own command line.
std::string run_json(const RegressOptions& options);
// Throws npuforge::Error naming `source` and the field on malformed input.
RegressOptions parse_run_json(std::string_view text, std::string_view source);

// The journal's complete lines. A last line without its newline is a write cut short by
// a kill: it is dropped (`torn` says so) and that seed runs again. A malformed complete
// line is an error naming the file and line.
struct JournalContents {
  std::vector<SeedResult> results;
  uint64_t valid_bytes = 0;  // the length of the complete lines
  bool torn = false;
};
JournalContents read_journal(const std::filesystem::path& path);

// Appends one line per result with a single write(2), so a killed runner loses at most the
// line being written and the kernel has every finished one.
class Journal {
 public:
  // `keep_bytes`: the length to keep (0 starts a new journal; else cuts off a torn line).
  Journal(const std::filesystem::path& path, uint64_t keep_bytes);
  ~Journal();
  Journal(const Journal&) = delete;
  Journal& operator=(const Journal&) = delete;
  // Throws npuforge::Error naming the file and errno (ENOSPC on a full disk, EFBIG past
  // `ulimit -f`); a short write is cut back off so the journal stays whole lines.
  void append(const SeedResult& result);
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
  int fd_ = -1;
  uint64_t size_ = 0;
};

// Holds DIR/.lock until destroyed; throws npuforge::Error naming the holder's pid when
// another runner works in DIR. A record lock: the kernel drops it when its runner dies, and
// forked workers do not inherit it.
class RunLock {
 public:
  explicit RunLock(const std::filesystem::path& dir);
  ~RunLock();
  RunLock(const RunLock&) = delete;
  RunLock& operator=(const RunLock&) = delete;

 private:
  bool try_lock(const std::filesystem::path& dir);
  std::filesystem::path path_;
  int fd_ = -1;
};

// True when DIR holds a run that started (run.json) and never recorded its end.
bool interrupted_run(const std::filesystem::path& dir);

}  // namespace npuforge::regress
