// The checkers' event log: on_start/on_access/on_finish append an event, flush() checks the
// logged ones in order (see CheckerOptions::batch).
#include <fmt/core.h>

#include "sim/checkers.h"
#include "util/error.h"

namespace npuforge::sim {

void Checkers::on_start(size_t instr, uint64_t time) {
  if (instr >= program_->instrs.size()) {
    throw Error(fmt::format("checkers: instruction index {} beyond the program ({} instructions)",
                            instr, program_->instrs.size()));
  }
  log({kStart, 0, 0, 0, static_cast<uint32_t>(instr), time, 0});
}

void Checkers::on_access(size_t instr, const isa::Extent& e) {
  if (e.bytes == 0 || instr >= program_->instrs.size()) return;
  // An access no checker looks at is not logged (do_access would do nothing).
  if (e.space == isa::Space::Ddr ? !ddr_hazards_ && !ddr_owner_ : !sram_runs_ && !(shadow_ && options_.shadow)) return;
  log({kAccess, static_cast<uint8_t>(e.field), static_cast<uint8_t>(e.access), static_cast<uint8_t>(e.space),
       static_cast<uint32_t>(instr), e.addr, e.bytes});
}

void Checkers::on_accesses(size_t instr) {
  for (const auto& e : isa::extents(program_->instrs.at(instr))) {
    if (e.bytes > 0) on_access(instr, e);
  }
}

void Checkers::flush() {
  // The log is taken first: a check that throws leaves no event to be checked twice.
  std::vector<Event> events;
  events.swap(events_);
  for (const Event& e : events) {
    switch (e.kind) {
      case kStart: do_start(e.instr, e.a); break;
      case kFinish: do_finish(e.instr, e.a); break;
      case kAccess: {
        isa::Extent x;
        x.field = e.field;
        x.access = static_cast<isa::Access>(e.access);
        x.space = static_cast<isa::Space>(e.space);
        x.addr = e.a;
        x.bytes = e.b;
        do_access(e.instr, x);
        break;
      }
    }
  }
  events.clear();
  if (events_.empty()) events_.swap(events);  // keep the reserved capacity
}

}  // namespace npuforge::sim
