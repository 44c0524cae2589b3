#pragma once
// What a regression runs: one Job per (profile, seed, mode), built from the command line or
// from a regression list file, and split across machines with --shard K/N.
//
// Regression list (configs/regress/*.yaml):
//   defaults: {npu: configs/npu/default.yaml, length: 0, rtl: false}
//   runs:
//     - {name: default, profile: configs/gen/default.yaml, seeds: 1-500}
//     - {name: default-rtl, profile: configs/gen/default.yaml, seeds: "1-20,99", rtl: true}
//     - {name: planted, profile: configs/gen/default.yaml, seeds: 7, plant: gen-overlap-live}
// Relative paths are taken from the current directory, else from the repository root the
// list lives in (the list's folder's grandparent), so lists work from the repo and its
// build directories alike.
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace npuforge::regress {

struct Job {
  std::string run;      // name of the run (list entry or the profile's stem)
  std::string profile;  // generator profile path
  std::string npu;      // NPU config path; empty: the built-in default
  uint64_t seed = 0;
  int64_t length = 0;   // 0: the profile's length
  bool rtl = false;     // simulate with the Verilated RTL scratchpad
  std::string plant{};         // a planted bug by name (util/plant.h; `npuforge plants`)
  uint64_t index = 0;          // position in the whole list before --shard (merge order)
  std::string origin{};        // the list entry it comes from ("list.yaml:12: runs[3]"), for errors
  std::string id() const;      // "run:seed" (unique within a regression)
  std::string name() const;    // "run-seed": the stem of its files
};

// "1-1000", "7", "1-10,20,30-32" (inclusive ranges). Throws npuforge::Error naming the
// bad part. Duplicates are kept out; order as written.
std::vector<uint64_t> parse_seeds(std::string_view spec);

struct Shard {
  unsigned k = 1;  // 1-based slice
  unsigned n = 1;  // slices
};
// "K/N" with 1 <= K <= N; throws npuforge::Error otherwise.
Shard parse_shard(std::string_view spec);
// The K-th slice: jobs whose position i satisfies i % N == K - 1, so slices interleave
// (each gets a share of every run) and together hold each job exactly once.
std::vector<Job> select_shard(const std::vector<Job>& jobs, Shard shard);

// Loads a regression list; throws npuforge::Error naming the file, entry and key.
std::vector<Job> load_list(const std::filesystem::path& path);

// Numbers the jobs 0, 1, ... (Job::index): call on the whole list, before select_shard.
void number_jobs(std::vector<Job>& jobs);

}  // namespace npuforge::regress
