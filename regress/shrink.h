#pragma once
// Shrinking a failing program: ddmin over its buffers, then over its instructions, keeping
// the program legal at every step:
//   - tokens stay paired: the k-th signal from queue p to q matches the k-th wait of q on p;
//     dropping one side clears the bit on the other, so no wait is left unsatisfied;
//   - the memory map follows: instruction indices are renumbered, a buffer's [first, last]
//     shrinks to its remaining uses, a buffer with none left is dropped, and dropping a
//     buffer drops every instruction that names it while it is live;
//   - the final HALT is always kept.
// A candidate "still fails" when the oracle gives the same kind (regress/seed_kind.h: the kind
// of its first finding) as the original's.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "bundle/memmap.h"
#include "isa/instruction.h"
#include "isa/npu_config.h"
#include "regress/seed_kind.h"
#include "sim/verify/verify.h"

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

// How a run of `p` fails: the kind of its first finding, Cause::None when it passes.
using Oracle = std::function<SeedKind(const ShrinkProgram& p)>;

struct ShrinkResult {
  ShrinkProgram program;
  SeedKind kind;     // the kind preserved
  size_t tests = 0;  // oracle calls
  size_t from_instrs = 0, from_buffers = 0;
};

// Throws npuforge::Error when `p` does not fail to begin with.
ShrinkResult shrink(const ShrinkProgram& p, const Oracle& oracle, size_t max_tests = 4000);

// Writes its program bundle (bundle/files.h): PREFIX.s, .bin, .hex, .memmap.yaml and .ddr.bin.
void write_program(const isa::Isa& isa, const ShrinkProgram& p, const std::filesystem::path& prefix);

// The oracle that judges each candidate in this process (sim::verify::run, on a fresh SystemC
// kernel each time) on `npu` with `options`: the backend, --rtl and the plant of the failing
// run, so that a simulator-side plant fails the candidates as it failed the seed. A candidate
// the simulator refuses (its memory map no longer fits, ...) fails as Cause::Simulator, never
// "the same". `isa` must outlive the oracle.
Oracle verify_oracle(const isa::Isa& isa, const isa::NpuConfig& npu, const sim::verify::Options& options);

}  // namespace npuforge::regress
