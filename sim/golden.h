#pragma once
// The golden model: executes the program one instruction at a time in program order with the
// reference semantics, ignoring timing and tokens. Its final DDR image is what every backend
// must reproduce.
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "sim/checkers.h"
#include "bundle/program.h"
#include "sim/semantics.h"

namespace npuforge::sim {

struct GoldenResult {
  std::vector<uint8_t> ddr;   // final DDR image from address 0
  std::vector<uint8_t> sram;  // final scratchpad
  uint64_t instructions = 0;  // instructions executed up to and including HALT
  // Out-of-range operands met (those instructions were skipped). Empty for a sane program.
  std::vector<Finding> errors;
};

// Runs `program`. With `checkers`, feeds them in program order (time = instruction index) and
// reports out-of-range operands to them as well. Stops after the first HALT.
GoldenResult run_golden(const bundle::Program& program, const Semantics& sem, Checkers* checkers = nullptr);

// The golden run with its final memory kept as it is (sparse DDR over the program's image,
// which must outlive it): comparing that with a backend's image costs the pages the program
// wrote, not two DDR images (a regression seed, regress/worker.cc).
struct GoldenMemory {
  explicit GoldenMemory(const isa::NpuConfig& config) : memory(config) {}
  Memory memory;
  uint64_t instructions = 0;
  std::vector<Finding> errors;
};
GoldenMemory run_golden_memory(const bundle::Program& program, const Semantics& sem);

// The finding an executor reports when an operand is out of range (AccessError).
Finding out_of_range_finding(size_t index, const isa::Instruction& instr, const AccessError& e);

// Compares a final DDR image with the expected one and reports the first differing range to
// `checkers` as a DdrMismatch, naming the last STORE whose DDR extent covers it (the other
// party says which side: "golden" or the file). Returns true when equal.
bool check_ddr(const bundle::Program& program, const Semantics& sem, const std::vector<uint8_t>& expected,
               const std::vector<uint8_t>& actual, std::string_view expected_name,
               Checkers& checkers);
// The same with the expected side as memory (GoldenMemory::memory.ddr): identical findings.
bool check_ddr(const bundle::Program& program, const Semantics& sem, const Ddr& expected,
               std::span<const uint8_t> actual, std::string_view expected_name, Checkers& checkers);
// And with both sides as memories (ScOptions::images off): only written pages are compared.
bool check_ddr(const bundle::Program& program, const Semantics& sem, const Ddr& expected, const Ddr& actual,
               std::string_view expected_name, Checkers& checkers);

}  // namespace npuforge::sim
