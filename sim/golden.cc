#include "sim/golden.h"

#include <fmt/core.h>

namespace npuforge::sim {

Finding out_of_range_finding(size_t index, const isa::Instruction& instr, const AccessError& e) {
  Finding f;
  f.kind = FindingKind::OutOfRange;
  f.instr = static_cast<int64_t>(index);
  f.mnemonic = instr.spec->mnemonic;
  f.space = e.space;
  f.addr = e.addr;
  f.bytes = e.bytes;
  f.detail = fmt::format("operand outside the {} bytes of {}; instruction skipped", e.size,
                         e.space == isa::Space::Sram ? "SRAM" : "DDR");
  return f;
}

namespace {

// Executes `program` on `memory` (loaded by the caller) in program order; returns the
// instructions executed, out-of-range operands into `errors`.
uint64_t execute_all(const bundle::Program& program, const Semantics& sem, Checkers* checkers, Memory& memory,
                     std::vector<Finding>& errors) {
  uint64_t executed = 0;
  for (size_t i = 0; i < program.instrs.size(); ++i) {
    const auto& instr = program.instrs[i];
    if (checkers) {
      checkers->on_start(i, i);
      checkers->on_accesses(i);
    }
    try {
      sem.execute(instr, memory);
    } catch (const AccessError& e) {
      errors.push_back(out_of_range_finding(i, instr, e));
      if (checkers) checkers->report(errors.back());
    }
    if (checkers) checkers->on_finish(i, i);
    ++executed;
    if (sem.op(instr) == Op::Halt) break;
  }
  if (checkers) checkers->on_end();
  return executed;
}

// Reports `diff` (non-empty) as a DdrMismatch; `expected_at`/`actual_at` give a side's byte.
template <typename ExpectedAt, typename ActualAt>
void report_mismatch(const bundle::Program& program, const Semantics& sem, const bundle::DdrDiff& diff,
                     ExpectedAt expected_at, ActualAt actual_at, std::string_view expected_name,
                     Checkers& checkers) {
  Finding f;
  f.kind = FindingKind::DdrMismatch;
  f.space = isa::Space::Ddr;
  f.addr = diff.addr;
  f.bytes = diff.bytes;
  // The culprit is most likely the last STORE that wrote the first differing byte.
  for (size_t i = program.instrs.size(); i-- > 0;) {
    const auto& in = program.instrs[i];
    if (sem.op(in) != Op::Store) continue;
    bool covers = false;
    for (const auto& e : isa::extents(in)) {
      covers |= e.space == isa::Space::Ddr && e.access == isa::Access::Write &&
                e.addr <= diff.addr && diff.addr < e.addr + e.bytes;
    }
    if (covers) {
      f.instr = static_cast<int64_t>(i);
      f.mnemonic = in.spec->mnemonic;
      break;
    }
  }
  f.detail = fmt::format("final DDR differs from {} in {} byte(s); first at {:#x}: expected {:#04x}, got {:#04x}",
                         expected_name, diff.total_differing, diff.addr, unsigned{expected_at(diff.addr)},
                         unsigned{actual_at(diff.addr)});
  checkers.report(std::move(f));
}

uint8_t byte_at(std::span<const uint8_t> v, uint64_t a) { return a < v.size() ? v[a] : 0; }

}  // namespace

GoldenResult run_golden(const bundle::Program& program, const Semantics& sem, Checkers* checkers) {
  GoldenResult result;
  Memory memory(program.config);
  memory.ddr.load_image(program.ddr_init);
  result.instructions = execute_all(program, sem, checkers, memory, result.errors);
  result.ddr = memory.ddr.image();
  const auto sram = memory.sram.contents();
  result.sram.assign(sram.begin(), sram.end());
  return result;
}

GoldenMemory run_golden_memory(const bundle::Program& program, const Semantics& sem) {
  GoldenMemory result(program.config);
  result.memory.ddr.load_image(program.ddr_init);
  result.instructions = execute_all(program, sem, nullptr, result.memory, result.errors);
  return result;
}

bool check_ddr(const bundle::Program& program, const Semantics& sem, const std::vector<uint8_t>& expected,
               const std::vector<uint8_t>& actual, std::string_view expected_name,
               Checkers& checkers) {
  const bundle::DdrDiff diff = bundle::compare_images(expected, actual);
  if (diff.total_differing == 0) return true;
  report_mismatch(
      program, sem, diff, [&](uint64_t a) { return byte_at(expected, a); }, [&](uint64_t a) { return byte_at(actual, a); },
      expected_name, checkers);
  return false;
}

bool check_ddr(const bundle::Program& program, const Semantics& sem, const Ddr& expected,
               std::span<const uint8_t> actual, std::string_view expected_name, Checkers& checkers) {
  const bundle::DdrDiff diff = compare_images(expected, actual);
  if (diff.total_differing == 0) return true;
  report_mismatch(
      program, sem, diff, [&](uint64_t a) { return expected.at(a); }, [&](uint64_t a) { return byte_at(actual, a); },
      expected_name, checkers);
  return false;
}

bool check_ddr(const bundle::Program& program, const Semantics& sem, const Ddr& expected, const Ddr& actual,
               std::string_view expected_name, Checkers& checkers) {
  if (expected.same_as(actual)) return true;
  // A failing seed: the images, and the same finding as from the images.
  return check_ddr(program, sem, expected.image(), actual.image(), expected_name, checkers);
}

}  // namespace npuforge::sim
