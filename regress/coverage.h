#pragma once
// Functional coverage of generated programs, defined here and nowhere else. Groups and bins:
//   opcode      every instruction of the ISA (mnemonic)
//   size        buffer sizes: unit (one alignment unit), small (<= 16 units), medium
//               (<= SRAM/16), large (< whole SRAM), whole_sram, needs_padding (written
//               bytes not a multiple of the alignment)
//   alloc       allocator events: exact_fit, split, skip, merge_prev, merge_next, merge_both,
//               free_no_merge, oom, and oom_retire / oom_compact / oom_spill (an out-of-memory
//               handled by that generator policy)
//   tokens      <waiter>_waits_<signaller> for each ordered pair of the three queues
//   reuse       <queue>_after_<queue>: a buffer's bytes taken by a buffer first used in another
//               queue than the released buffer's last use, with no other owner in between
//               (the hazard-prone case the token insertion must order)
//   occupancy   SRAM peak: le_50, 50_90, gt_90, full (100%)
// A per-seed Coverage holds hit counts; merge() adds them and records after how many seeds
// each group first reached 100% (exact when merging one seed at a time, in seed order).
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "bundle/memmap.h"
#include "gen/generator.h"
#include "isa/isa.h"

namespace npuforge::regress {

class Coverage {
 public:
  struct Group {
    std::string name;
    std::vector<std::pair<std::string, uint64_t>> bins;  // model order
    uint64_t complete_after = 0;  // seeds merged when it first reached 100%; 0: not yet
    size_t covered() const;
    bool complete() const { return covered() == bins.size(); }
  };

  Coverage() = default;
  // The model for `isa`: every group and bin, all at zero, zero seeds.
  explicit Coverage(const isa::Isa& isa);

  // Throws npuforge::Error for a group or bin the model does not have.
  void hit(std::string_view group, std::string_view bin, uint64_t n = 1);
  uint64_t count(std::string_view group, std::string_view bin) const;
  // Adds other's counts (bins it has that this lacks are appended) and seeds.
  void merge(const Coverage& other);

  uint64_t seeds() const { return seeds_; }
  void set_seeds(uint64_t n);  // a sampled program counts as one seed
  const std::vector<Group>& groups() const { return groups_; }

  std::string to_json() const;
  // Throws npuforge::Error naming `source` on malformed input.
  static Coverage from_json(std::string_view text, std::string_view source);
  // "group  covered/total  pct  [complete after N seeds]" per group, then the holes.
  std::string report(bool list_holes = true) const;

 private:
  Group* find(std::string_view name);
  const Group* find(std::string_view name) const;
  std::vector<Group> groups_;
  uint64_t seeds_ = 0;
};

// The coverage of one generated program (one seed). `map` is program.memmap().
// For each buffer of a memory map, the `last` of its previous owner: the latest-dying buffer
// that overlaps its bytes and died before it became live; -1 when none (the "reuse" group).
std::vector<int64_t> previous_owner_last(const std::vector<bundle::MemBuffer>& buffers);

Coverage sample(const isa::Isa& isa, const gen::GeneratedProgram& program,
                const bundle::MemMap& map, gen::OomPolicy oom_policy);

}  // namespace npuforge::regress
