#pragma once
// The constrained-random program generator: a profile, an NPU config and a seed
// in; a race-free NPU program, its memory map and its DDR input image out.
//
// Generation works on symbols, in allocator::SymbolTable. A producer (LOAD, GEMM, ...)
// defines a fresh symbol whose size follows from its fields (a GEMM's dst is m*n bytes) and
// the table places it; consumers read live symbols, and the table's reference count frees
// its node after the last consumer. Operands naming symbols are recorded as SymRefs, and
// allocator::fixup writes their placed addresses as each instruction is emitted, checking
// each operand's extent against its buffer. Dependency tokens are added as each
// instruction is emitted (see builder.cc, isa::TokenOrderBuilder): a consumer waits for its
// producer in another queue, and a writer waits for the last access of every byte it
// reuses in another queue. Which instructions each template emits, their field slots, enum
// values and operand sizes come from the ISA's tables (gen/roles.h).
#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "allocator/fixup.h"
#include "allocator/placer.h"
#include "bundle/program.h"
#include "gen/profile.h"
#include "isa/instruction.h"
#include "isa/npu_config.h"
#include "util/plant.h"

namespace npuforge::gen {

// One address field naming a symbol: instrs[instr] field `field` = address of `symbol`.
using SymRef = allocator::SymbolField;

// A symbol after generation: where it was placed and how to name it.
struct SymbolInfo {
  uint32_t addr = 0;
  uint32_t padded = 0;   // bytes reserved
  uint32_t written = 0;  // bytes its producer wrote
  uint32_t origin = 0;   // first symbol of its chain (MOVE / spill reload make new versions)
  uint16_t version = 0;  // 0 for the original, k for the k-th move or reload: name@k
  OpKind kind = OpKind::Load;  // what produced the original
};

// DDR layout: inputs/weights the LOADs read | outputs the STOREs write | spill slots.
struct DdrLayout {
  uint64_t input_base = 0, input_bytes = 0;
  uint64_t output_base = 0, output_bytes = 0;
  uint64_t spill_base = 0, spill_slot_bytes = 0;
  uint32_t spill_slots = 0;
};

struct GenSummary {
  uint64_t instructions = 0;
  uint64_t buffers = 0;
  uint64_t peak_sram = 0;  // high water of bytes in use (padded)
  std::array<uint64_t, 8> alloc_events{};  // by allocator::AllocEventKind
  uint64_t oom = 0;           // allocations that needed the OOM policy
  uint64_t retired = 0;       // buffers retired by emitting their pending consumers
  uint64_t compact_moves = 0; // MOVEs emitted by compaction
  uint64_t spills = 0, reloads = 0;
  uint64_t skipped = 0;       // operations dropped because nothing could make room
  uint64_t directed = 0;      // directed sequences run
  uint64_t tokens = 0;        // wait/signal pairs
};

struct GeneratedProgram {
  // The program as the simulator takes it: the instructions (ending with halt, addresses fixed
  // up), the DDR input image (from address 0, the initialised part), the NPU config and the
  // ISA. Its name is empty (the caller's: the files' stem) and its memory map absent until
  // with_memmap() builds it (`npuforge gen` writes the map from refs and symbols instead,
  // gen/output_writers.h).
  bundle::Program bundle;
  uint64_t seed = 0;
  std::string header;  // one line: seed, profile and its hash, npu, isa (no comment marker)
  DdrLayout ddr;
  std::vector<SymRef> refs;              // in instruction order
  std::vector<SymbolInfo> symbols;
  GenSummary summary;
  // allocator::Allocator::check_invariants() at the end of generation: empty when the
  // allocator's state is consistent (a regression reports anything else as a finding).
  std::string allocator_check;

  std::string symbol_name(uint32_t symbol) const;  // e.g. "g12", "ld3@1" (gen::symbol_name)
  bundle::MemMap memmap() const;  // every produced symbol with its lifetime
  // The bundle with bundle.memmap = memmap() (built once): ready to simulate, no copy made.
  const bundle::Program& with_memmap();
};

class ProgramStream;  // gen/stream.h

struct GenOptions {
  uint64_t seed = 1;
  int64_t length = 0;            // 0: the profile's length
  std::string npu_source = "<default>";
  uint64_t npu_hash = 0;
  allocator::Placer* placer = nullptr;  // tests only: a different allocator front end
  Bytes max_memory{0};           // 0: no limit; else generate() refuses a longer program up front
  Plant plant;  // a planted allocator or generator bug (util/plant.h); None by default
  // Given: the program's final part is published to it while generating (gen/stream.h);
  // when generate() returns, the whole program is (or the stream was stopped early).
  ProgramStream* stream = nullptr;
};

// What generating `length` instructions costs in memory at its peak, from above: the program,
// its symbols and the DDR image are all held until the addresses are fixed up; the files are
// then written a line at a time (gen/output.cc), so the peak is the generator's own state.
// Measured 172-219 bytes per instruction (max RSS of `npuforge gen --length 1000000`, process
// overhead included) over the shipped profiles; 300 leaves a third of margin.
constexpr uint64_t kPeakBytesPerInstruction = 300;
Bytes estimated_peak_memory(int64_t length, const isa::NpuConfig& npu);

// A symbol's name: what produced its chain's origin, the origin's id, "@version" after a
// move or reload: "g12", "ld3@1".
std::string symbol_name(OpKind origin_kind, uint32_t origin, uint32_t version);

// Throws Error before any work when the estimate exceeds options.max_memory.
GeneratedProgram generate(const isa::Isa& isa, const isa::NpuConfig& npu, const Profile& profile,
                          const GenOptions& options);

}  // namespace npuforge::gen
