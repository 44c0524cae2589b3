#pragma once
// The memory map of a generated or compiled program: every scratchpad buffer with its
// placement and lifetime. PREFIX.memmap.yaml of a program bundle (bundle/files.h), written by
// the generator, the model compiler and `npuforge shrink`, read by the simulator's checkers and
// by `npuforge check-plan`.
//
// File format (YAML):
//   # npuforge memory map; seed: 42; profile: configs/gen/default.yaml (fnv1a64 0123...)
//   sram_bytes: 524288
//   alignment: 64
//   instructions: 1000          # program length
//   buffers:
//     - {symbol: act0, offset: 0x400, size: 256, first: 3, last: 17, producer: 3, consumers: [5, 17]}
// `size` is the padded size actually reserved. [first, last] is inclusive, in instruction
// indices: the buffer owns its bytes from instruction `first` (its producer, or the first
// instruction that names it) to `last` (its last consumer). A buffer moved by compaction or
// spilled and reloaded appears again under a new symbol (e.g. act0@1), produced by the MOVE
// or LOAD that recreated it.
//
// A compiled program (npuforge compile) also lists the DDR tensors it reads and writes, so
// that a checker can tell which tensor owns each DDR byte at each instruction (an outside
// memory plan that overlaps two live tensors shows up there):
//   ddr_buffers:
//     - {name: conv1_out, region: arena, offset: 0x12000, size: 4096, first: 0, last: 17,
//        writers: [3, 9], readers: [15, 17]}
// `offset` is the absolute DDR address, `size` the bytes the tensor owns (padded to the
// alignment), [first, last] (inclusive instruction indices) when it owns them in this
// program: a tensor written before the program (an input) is live from 0, one read after it
// (an output) until the last instruction. `writers` are the STOREs that write it and
// `readers` the LOADs that read it. `region` says what it is: weights, input, arena, output.
// Without ddr_buffers (every generated program) the map is as before.
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "util/types.h"

namespace npuforge::bundle {

inline constexpr int64_t kNoProducer = -1;

struct MemBuffer {
  std::string symbol;
  SramAddr offset;
  Bytes size;
  int64_t first = 0;  // inclusive instruction index
  int64_t last = 0;   // inclusive instruction index
  int64_t producer = kNoProducer;
  std::vector<int64_t> consumers;

  bool live_at(int64_t instr) const { return first <= instr && instr <= last; }
};

struct MemDdrBuffer {
  std::string name;
  std::string region;  // "weights", "input", "arena", "output" (free text for other producers)
  DdrAddr offset;
  Bytes size;
  int64_t first = 0;  // inclusive instruction index
  int64_t last = 0;   // inclusive instruction index
  std::vector<int64_t> writers;  // instructions writing it, ascending
  std::vector<int64_t> readers;  // instructions reading it, ascending

  bool live_at(int64_t instr) const { return first <= instr && instr <= last; }
  // Whether its bytes are there before the program runs: live from the first instruction and
  // read before anything writes it (or never written). The DDR image must hold them
  // (bundle/ddr_image.h), and the DDR ownership checker starts them owned by it.
  bool held_at_start() const {
    return first == 0 && (writers.empty() || (!readers.empty() && readers.front() < writers.front()));
  }
};

struct MemMap {
  std::string header;  // comment line(s) written at the top (seed, profile hash), without '#'
  Bytes sram_bytes;
  Bytes alignment{1};
  int64_t instructions = 0;
  std::vector<MemBuffer> buffers;
  std::vector<MemDdrBuffer> ddr_buffers;  // empty for generated programs

  // Throws npuforge::Error naming the file, the buffer index and the field on bad input.
  static MemMap load_file(const std::filesystem::path& path);
  // Maps in the exact form to_yaml() writes for generated programs take a fast reader
  // (bundle/memmap_fast.h); any other text goes through yaml-cpp (load_yaml_string).
  static MemMap load_string(std::string_view yaml_text, std::string_view source_name);
  static MemMap load_yaml_string(std::string_view yaml_text, std::string_view source_name);
  std::string to_yaml() const;
  void save_file(const std::filesystem::path& path) const;
};

}  // namespace npuforge::bundle
