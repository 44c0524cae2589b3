#pragma once
// A generated program handed to the simulator inside the regression worker, without files.
// The worker judges it with sim::verify::run, as `npuforge sim --json` judges the files, so a
// seed passes or fails identically on the in-process and the file-based path
// (tests/regress/inproc_test.cc compares both).
#include <string>

#include "gen/generator.h"
#include "sim/program.h"

namespace npuforge::regress {

// The bundle `npuforge sim` would load from the files `npuforge gen` writes for `program`
// (named `name`, the files' stem); throws npuforge::Error when the pieces disagree.
sim::Program to_sim_program(const isa::Isa& isa, const gen::GeneratedProgram& program, const std::string& name);

// The same bundle with the instructions and the DDR image moved in from `program` and moved
// back when this goes out of scope (also on an exception), for a worker that writes the
// program's files after a failing simulation: a copy cost a page fault per 4 KiB of the
// image, every seed. `map` is program.memmap() (the worker has built it for coverage).
class LentProgram {
 public:
  LentProgram(const isa::Isa& isa, gen::GeneratedProgram& program, allocator::MemMap map, const std::string& name);
  ~LentProgram() { give_back(); }
  LentProgram(const LentProgram&) = delete;
  LentProgram& operator=(const LentProgram&) = delete;
  const sim::Program& program() const { return sim_; }

 private:
  void give_back();
  gen::GeneratedProgram& gen_;
  sim::Program sim_;
};

}  // namespace npuforge::regress
