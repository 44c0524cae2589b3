#include "sim/backend.h"

#include <algorithm>
#include <climits>

#include "sim/golden.h"

namespace npuforge::sim {
namespace {

constexpr uint64_t kUnknown = UINT64_MAX;

struct Schedule {
  std::vector<uint64_t> start, finish;
  size_t length = 0;  // instructions dispatched: up to and including the first HALT
};

// List scheduling of the token structure: dispatch in program order (blocked by SYNC/HALT until
// they finish), each instruction starts when dispatched, its queue is free and its token and
// barrier predecessors have finished. Repeated passes resolve waits on later signals;
// instructions left at kUnknown never start (deadlock).
Schedule schedule(const bundle::Program& program, const Semantics& sem, const TokenOrder& order) {
  const auto& ins = program.instrs;
  Schedule s;
  s.length = ins.size();
  for (size_t i = 0; i < ins.size(); ++i) {
    if (sem.op(ins[i]) == Op::Halt) {
      s.length = i + 1;
      break;
    }
  }
  s.start.assign(s.length, kUnknown);
  s.finish.assign(s.length, kUnknown);
  std::vector<uint64_t> dispatch(s.length, kUnknown);
  std::vector<uint8_t> stuck(ins.size(), 0);  // waits no signal satisfies, or wait cycles
  for (size_t i : order.stuck()) stuck[i] = 1;
  const uint64_t lat = program.config.dispatch_latency_cycles;
  for (bool progress = true; progress;) {
    progress = false;
    uint64_t next_dispatch = 0;  // when the dispatcher may issue instruction i
    for (size_t i = 0; i < s.length; ++i) {
      if (next_dispatch == kUnknown) break;
      dispatch[i] = next_dispatch + lat;
      const bool barrier = ins[i].spec->queue == isa::Queue::Control && sem.op(ins[i]) != Op::Nop;
      if (s.finish[i] == kUnknown && !stuck[i]) {
        uint64_t t = dispatch[i];
        for (size_t p : order.predecessors(i)) t = std::max(t, p < s.length ? s.finish[p] : kUnknown);
        if (t != kUnknown) {
          s.start[i] = t;
          s.finish[i] = t + instruction_cycles(sem, ins[i], program.config);
          progress = true;
        }
      }
      next_dispatch = barrier ? s.finish[i] : dispatch[i];
    }
  }
  return s;
}

}  // namespace

RunResult SequentialBackend::run(const bundle::Program& program, Checkers& checkers) {
  const Schedule s = schedule(program, *sem_, checkers.order());
  std::vector<size_t> order;
  for (size_t i = 0; i < s.length; ++i) {
    if (s.start[i] != kUnknown) order.push_back(i);
  }
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return s.start[a] < s.start[b]; });

  RunResult result;
  result.completed = order.size() == s.length;
  Memory memory(program.config);
  memory.ddr.load_image(program.ddr_init);
  for (size_t i : order) {
    const auto& instr = program.instrs[i];
    checkers.on_start(i, s.start[i]);
    checkers.on_accesses(i);
    try {
      sem_->execute(instr, memory);
    } catch (const AccessError& e) {
      checkers.report(out_of_range_finding(i, instr, e));
    }
    checkers.on_finish(i, s.finish[i]);
    ++result.instructions;
    result.cycles = std::max(result.cycles, s.finish[i]);
    if (instr.spec->queue != isa::Queue::Control) {
      result.busy_cycles[static_cast<size_t>(instr.spec->queue)] += s.finish[i] - s.start[i];
    }
  }
  checkers.on_end();
  result.ddr = memory.ddr.image();
  const auto sram = memory.sram.contents();
  result.sram.assign(sram.begin(), sram.end());
  return result;
}

}  // namespace npuforge::sim
