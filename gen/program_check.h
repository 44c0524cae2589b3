#pragma once
// Static checks of a program against its memory map (the plan check itself, "no two
// buffers with intersecting lifetimes share a byte", is planner::check_memmap):
//   - every instruction is valid for the ISA (field ranges, tokens, constraints);
//   - every SRAM read/write extent lies inside a buffer the memory map says the
//     instruction consumes (reads) or produces (writes); DDR extents lie inside DDR;
//   - tokens pair up: the k-th wait on channel p->q takes the k-th signal on p->q, which
//     must come earlier in the program; no signal is left untaken at the end;
//   - no race: with each queue in order, tokens as above and sync as a full barrier,
//     every pair of conflicting accesses in different queues is ordered (a consumer after
//     its producer; a buffer's producer after every access of the buffers that held its
//     bytes before; DDR reads and writes of the same 64-byte granule).
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "bundle/memmap.h"
#include "isa/instruction.h"

namespace npuforge::gen {

enum class ProgramOutcome {
  kGood,               // nothing wrong (the value of an empty result)
  kInvalidInstruction, // isa::validate rejected it
  kUnnamedAccess,      // an SRAM extent is not inside any buffer the instruction names
  kDdrOutOfRange,      // a DDR extent leaves [0, ddr_bytes)
  kWaitWithoutSignal,  // a wait on p->q with no earlier untaken signal on p->q
  kUnmatchedSignal,    // a signal no wait ever takes
  kRace,               // conflicting accesses in different queues with no happens-before
  kNoHalt,             // the last instruction is not halt
};
const char* to_string(ProgramOutcome outcome);

struct ProgramFinding {
  ProgramOutcome outcome = ProgramOutcome::kGood;
  int64_t instr = -1;
  std::string message;  // names the instruction index, mnemonic, field/symbol and ranges
};

struct ProgramCheckResult {
  std::vector<ProgramFinding> findings;  // at most max_findings
  size_t total_findings = 0;
  bool ok() const { return total_findings == 0; }
  ProgramOutcome outcome() const { return findings.empty() ? ProgramOutcome::kGood : findings[0].outcome; }
  std::string report() const;  // one line per stored finding, then a count
};

struct ProgramCheckOptions {
  size_t max_findings = 100;
};

ProgramCheckResult check_program(std::span<const isa::Instruction> program, const bundle::MemMap& map,
                                 uint64_t ddr_bytes, ProgramCheckOptions options = {});

}  // namespace npuforge::gen
