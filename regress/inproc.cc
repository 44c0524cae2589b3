#include "regress/inproc.h"

#include "isa/isa.h"
#include "util/error.h"

namespace npuforge::regress {

sim::Program to_sim_program(const isa::Isa& isa, const gen::GeneratedProgram& g, const std::string& name) {
  sim::Program p;
  p.name = name;
  p.isa = &isa;
  p.instrs = g.instrs;
  p.memmap = g.memmap();
  p.ddr_init = g.ddr_image;
  p.config = g.npu;
  if (const std::string err = p.validate(); !err.empty()) throw Error(err);
  return p;
}

LentProgram::LentProgram(const isa::Isa& isa, gen::GeneratedProgram& g, allocator::MemMap map, const std::string& name)
    : gen_(g) {
  sim_.name = name;
  sim_.isa = &isa;
  sim_.instrs = std::move(g.instrs);
  sim_.memmap = std::move(map);
  sim_.ddr_init = std::move(g.ddr_image);
  sim_.config = g.npu;
  if (const std::string err = sim_.validate(); !err.empty()) {
    give_back();
    throw Error(err);
  }
}

void LentProgram::give_back() {
  gen_.instrs = std::move(sim_.instrs);
  gen_.ddr_image = std::move(sim_.ddr_init);
}

}  // namespace npuforge::regress
