#pragma once
// The instructions of one lowered QOp before placement: what the lowering passes produce and
// the segment emitter (emitter.h) places, orders and fixes up.
//
// SRAM operands name op-local buffers (an index into OpCode::bufs) plus a byte offset inside
// the buffer; DDR addresses are final. A buffer is placed when its first writer is emitted and
// freed after its last reader (its reference count is the number of read operands naming it),
// so every buffer of an op is dead at the op's end and each op starts on an empty SRAM: the
// fit of an op can be checked alone (sram_fit) before it is emitted.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "allocator/allocator.h"
#include "isa/instruction.h"
#include "isa/npu_config.h"

namespace npuforge::compiler {

inline constexpr int32_t kNoDdrBuffer = -1;

struct OpBuffer {
  std::string name;   // "<tensor>.<role>@t<tile>", e.g. "conv1_out.out@t3", for the memory map
  uint64_t bytes = 0;
};

struct OperandRef {
  uint32_t buf = 0;     // index into OpCode::bufs
  uint8_t field = 0;    // slot of the SRAM address field
  bool write = false;
  uint32_t offset = 0;  // bytes from the buffer's start
};

struct OpInstr {
  isa::Instruction in;  // every non-SRAM-address field final
  std::array<OperandRef, isa::kMaxOperands> refs{};
  uint8_t nrefs = 0;
  // The DDR buffer (segment-level index, see SegmentEmitter) a LOAD reads or a STORE writes.
  int32_t ddr_buf = kNoDdrBuffer;
};

struct OpCode {
  std::vector<OpBuffer> bufs;
  std::vector<OpInstr> instrs;

  uint32_t buffer(std::string name, uint64_t bytes);
  // Appends an instruction; operands are added to it with read()/write().
  OpInstr& add(const isa::Instruction& in, int32_t ddr_buf = kNoDdrBuffer);
  OpCode& read(uint32_t buf, unsigned field, uint32_t offset = 0);
  OpCode& write(uint32_t buf, unsigned field, uint32_t offset = 0);
  // Read operands naming each buffer (its reference count).
  std::vector<uint32_t> readers() const;
};

// Replays the op's allocations (define at the first write, free after the last read) on an
// empty allocator of the NPU's SRAM: whether every buffer gets placed, and the peak of used
// (padded) bytes.
struct SramFit {
  bool fits = true;
  uint64_t peak = 0;
  std::string failure;  // the buffer that found no room and the allocator's state
};
SramFit sram_fit(const OpCode& code, const isa::NpuConfig& npu, allocator::Policy policy);

}  // namespace npuforge::compiler
