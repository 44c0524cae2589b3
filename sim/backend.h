#pragma once
// The one interface every simulation backend implements (sequential timing model here, the
// SystemC/TLM model and the --rtl variant in sim/sc_model/), so `npuforge sim` and the tests
// run the same program on any of them.
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "sim/checkers.h"
#include "bundle/program.h"
#include "sim/semantics.h"

namespace npuforge::sim {

struct RunResult {
  std::vector<uint8_t> ddr;   // final DDR image from address 0 (bundle/ddr_image.h gives the format)
  std::vector<uint8_t> sram;  // final scratchpad contents
  uint64_t instructions = 0;  // instructions completed
  uint64_t cycles = 0;        // simulated cycles until HALT/the last instruction completed
  std::array<uint64_t, isa::kNumQueues> busy_cycles{};  // per queue (load, compute, store)
  bool completed = true;      // false when the run stopped early (deadlock)
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string_view name() const = 0;
  // Runs `program`, feeding `checkers` (on_start/on_access/on_finish per instruction and
  // on_end once). Out-of-range operands are reported to `checkers` (FindingKind::OutOfRange)
  // and the instruction is skipped.
  virtual RunResult run(const bundle::Program& program, Checkers& checkers) = 0;
};

// A simple timing model without SystemC: dispatch in program order (dispatch latency per
// instruction), each queue runs its instructions in order for instruction_cycles() each,
// starting when its waits' signals have arrived; SYNC/HALT wait for all queues to drain.
// Instructions execute (Semantics::execute) in start-time order, which is the order the
// checkers see.
class SequentialBackend : public Backend {
 public:
  explicit SequentialBackend(const Semantics& sem) : sem_(&sem) {}
  std::string_view name() const override { return "sequential"; }
  RunResult run(const bundle::Program& program, Checkers& checkers) override;

 private:
  const Semantics* sem_;
};

}  // namespace npuforge::sim
