#pragma once
// Internal to the checkers: DDR ownership for programs whose memory map lists DDR buffers
// (compiled models: arena tensors, model inputs/outputs, weight blobs; bundle/memmap.h).
// Like the SRAM shadow memory, but for the tensors a memory plan placed in DDR:
//  - a STORE writes bytes of a tensor other than the one it produces while that tensor is
//    live (an outside plan that overlaps two live tensors; a STORE running past its tensor):
//    FindingKind::DdrClobber, naming both tensors;
//  - a LOAD reads bytes that were last written for a tensor other than the one it reads:
//    FindingKind::DdrStaleRead, naming both tensors and the STORE that wrote them.
// The tensor an instruction means is the one whose `writers` (STORE) or `readers` (LOAD)
// list it; failing that, the live tensor holding its first byte. Bytes a tensor holds when the
// program starts (first == 0 and nothing in the program writes it before it is read) start
// owned by it. Every finding carries the instruction's start cycle.
#include <cstdint>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "bundle/memmap.h"
#include "sim/checkers.h"

namespace npuforge::sim {

class DdrOwnership {
 public:
  explicit DdrOwnership(const bundle::MemMap& map);

  // Instruction `instr` (started at `cycle`) reads or writes DDR [addr, addr + bytes).
  // Findings go to `out` (the caller counts and keeps them).
  void access(int64_t instr, const std::string& mnemonic, uint64_t cycle, bool write, uint64_t addr, uint64_t bytes,
              std::vector<Finding>& out);

 private:
  struct Owner {
    int32_t tensor = -1;   // index into the map's ddr_buffers, -1: nobody
    int64_t writer = -1;   // the STORE that wrote the bytes, -1: before the program
    uint64_t cycle = 0;
    bool operator==(const Owner&) const = default;
  };
  int32_t meant(int64_t instr, bool write, uint64_t addr) const;
  std::map<uint64_t, Owner>::iterator split(uint64_t at);
  const bundle::MemDdrBuffer& buf(int32_t id) const { return map_->ddr_buffers[static_cast<size_t>(id)]; }

  const bundle::MemMap* map_;
  std::map<int64_t, int32_t> writer_of_, reader_of_;  // instruction -> tensor it writes / reads
  std::map<uint64_t, Owner> owner_;  // segment [key, next key) -> who last wrote it
  std::set<std::pair<int64_t, int32_t>> reported_;  // (instruction, other tensor)
};

}  // namespace npuforge::sim
