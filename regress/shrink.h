#pragma once
// Shrinking a failing program: ddmin over its buffers, then over its instructions, keeping
// the program legal at every step:
//   - tokens stay paired: the k-th signal from queue p to q matches the k-th wait of q on p;
//     dropping one side clears the bit on the other, so no wait is left unsatisfied;
//   - the memory map follows: instruction indices are renumbered, a buffer's [first, last]
//     shrinks to its remaining uses, a buffer with none left is dropped, and dropping a
//     buffer drops every instruction that names it while it is live;
//   - the final HALT is always kept.
// A candidate "still fails" when the oracle's first finding has the same kind
// ("checker/Kind") as the original's.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "bundle/memmap.h"
#include "isa/instruction.h"

namespace npuforge::regress {

struct ShrinkProgram {
  std::vector<isa::Instruction> instrs;
  bundle::MemMap map;
  std::vector<uint8_t> ddr;
};

// The program restricted to the instructions `keep` (ascending indices; the last
// instruction is added when missing), with tokens and the memory map fixed as above.
ShrinkProgram restrict_to(const ShrinkProgram& p, const std::vector<size_t>& keep);
// The program without the buffers `drop` (indices into p.map.buffers) and their uses.
ShrinkProgram drop_buffers(const ShrinkProgram& p, const std::vector<size_t>& drop);

// "checker/Kind" of the first finding of a run of `p`, empty when it passes.
using Oracle = std::function<std::string(const ShrinkProgram& p)>;

struct ShrinkResult {
  ShrinkProgram program;
  std::string kind;  // the finding kind preserved
  size_t tests = 0;  // oracle calls
  size_t from_instrs = 0, from_buffers = 0;
};

// Throws npuforge::Error when `p` does not fail to begin with.
ShrinkResult shrink(const ShrinkProgram& p, const Oracle& oracle, size_t max_tests = 4000);

// Writes its program bundle (bundle/files.h): PREFIX.s, .bin, .hex, .memmap.yaml and .ddr.bin.
void write_program(const isa::Isa& isa, const ShrinkProgram& p, const std::filesystem::path& prefix);

// The first finding line of `npuforge sim` output ("[checker/Kind] ..."), empty if none.
std::string first_finding(std::string_view sim_output);
// "checker/Kind" of a finding line, empty if it is not one.
std::string finding_kind(std::string_view line);

// An oracle running `exe sim` on files written under `workdir` (--rtl when asked).
Oracle sim_oracle(const std::string& exe, const isa::Isa& isa, const std::filesystem::path& workdir,
                  bool rtl, const std::string& npu);

}  // namespace npuforge::regress
