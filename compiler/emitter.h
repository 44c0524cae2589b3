#pragma once
// The segment emitter: turns the OpCodes of one NPU segment into a program bundle's content
// (instructions with their tokens and fixed-up addresses, the memory map with SRAM and DDR
// buffers). Built on the pieces the generator uses: allocator::SymbolTable places every SRAM
// buffer (define at the first write, consume per read, freed after the last), isa::
// TokenOrderBuilder decides the tokens, allocator::fixup writes and checks the addresses.
//
// Tokens come from the exact happens-before of byte accesses. Per SRAM alignment unit and per
// DDR granule (the alignment) the emitter keeps, per queue, the latest instruction that wrote
// and the latest that accessed it. An instruction of queue q reading bytes waits for their
// last writers in the other queues (a GEMM for the LOAD of its weights; a LOAD of a tensor for
// the STORE that wrote it); writing bytes, it waits for their last readers and writers (the
// next tile's LOAD into bytes an IM2COL still reads; a STORE into arena bytes a LOAD of the
// previous tenant reads). A wait for instruction X of queue p is needed only when X does not
// already happen before (vector clocks), so double-buffered tiles on different bytes overlap
// freely. DDR extents of 2-D DMAs are taken whole (first to last byte): conservative.
//
// Why not the generator's Builder::emit: it is fused with the generator's random policies
// (token density draws, due heap, live list, OOM retire/compact/spill) and keeps per-symbol
// accesses (one writer, offset-0 operands) on its benchmarked hot path; the compiler needs
// named buffers with several writers, operands at offsets inside a buffer, and DDR ordering
// by byte range across queues. The shared core is isa::TokenOrderBuilder's pairing rule,
// used here the same way.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "allocator/allocator.h"
#include "bundle/memmap.h"
#include "allocator/symbol_table.h"
#include "compiler/opcode.h"
#include "isa/assembler.h"
#include "isa/instruction.h"
#include "isa/npu_config.h"
#include "isa/token_order.h"

namespace npuforge::compiler {

// A DDR buffer the segment may touch: a tensor, a weight blob of an op, a model input.
struct DdrBufferSpec {
  std::string name;
  std::string region;  // "weights", "input", "arena", "output"
  uint64_t addr = 0;
  uint64_t bytes = 0;  // padded to the alignment
  bool live_in = false;   // holds its value when the segment starts
  bool live_out = false;  // read after the segment ends (a later segment, the model output)
};

// The finished program of one segment.
struct SegmentProgram {
  std::vector<isa::Instruction> instrs;  // fixed up; ends with halt
  std::vector<isa::SymbolRef> refs;      // every SRAM operand by buffer name, in instruction order
  bundle::MemMap memmap;              // SRAM buffers and DDR buffers
  uint64_t sram_peak = 0;                // allocator high water (padded bytes)
  uint64_t tokens = 0;                   // wait/signal pairs
};

class SegmentEmitter {
 public:
  // DDR bytes in [ddr_lo, ddr_hi) are tracked for ordering: the regions any instruction
  // writes (arena, outputs). Reads elsewhere (weights, inputs) need no order.
  SegmentEmitter(const isa::Isa& isa, const isa::NpuConfig& npu, allocator::Policy policy,
                 std::vector<DdrBufferSpec> ddr_buffers, uint64_t ddr_lo, uint64_t ddr_hi);
  SegmentEmitter(const SegmentEmitter&) = delete;
  SegmentEmitter& operator=(const SegmentEmitter&) = delete;

  // Appends one op's instructions. Throws npuforge::Error naming the buffer when the SRAM
  // has no room for it (the caller checked sram_fit, so this means an internal error).
  void emit(const OpCode& code);
  size_t size() const { return instrs_.size(); }

  // Appends the halt, fixes up every SRAM operand and builds the memory map. `header` heads
  // the memory map (no comment marker).
  SegmentProgram finish(const std::string& header);

 private:
  using Clock = std::array<uint32_t, isa::kNumQueues>;
  struct Tracked {            // one SRAM unit or DDR granule
    Clock write{}, access{};  // per queue: position of the latest writer / accessor (0: none)
  };
  struct BufInfo {            // per placed SRAM buffer (symbol), for the memory map
    std::string name;
    int64_t producer = -1;
    std::vector<int64_t> consumers;
  };
  struct DdrUse {
    std::vector<int64_t> writers, readers;
  };
  Tracked* tracked(const isa::Extent& e, uint64_t& first, uint64_t& count);
  void order(isa::Instruction& in, unsigned q);
  void record(size_t idx, unsigned q, uint32_t seq, const isa::Instruction& in);

  const isa::Isa& isa_;
  isa::NpuConfig npu_;
  uint64_t align_;
  allocator::Allocator alloc_;
  allocator::SymbolTable table_;
  isa::TokenOrderBuilder order_;
  std::vector<isa::Instruction> instrs_;
  std::vector<isa::SymbolRef> refs_;
  std::vector<BufInfo> bufs_;  // by SymbolId
  std::vector<Tracked> sram_;
  std::vector<Tracked> ddr_;
  uint64_t ddr_lo_, ddr_hi_;
  std::vector<DdrBufferSpec> ddr_specs_;
  std::vector<DdrUse> ddr_uses_;
  uint64_t tokens_ = 0;
};

}  // namespace npuforge::compiler
