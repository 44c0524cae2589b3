#pragma once
// Hand-written test programs: assembled with .equ addresses, plus a hand-built memory map, so
// the simulator tests do not depend on the generator.
#include <string>
#include <string_view>
#include <vector>

#include "bundle/program.h"
#include "isa/assembler.h"
#include "util/rng.h"

namespace npuforge::sim::testing {

inline bundle::MemBuffer buf(std::string symbol, uint32_t offset, uint64_t size, int64_t first,
                             int64_t last) {
  bundle::MemBuffer b;
  b.symbol = std::move(symbol);
  b.offset = SramAddr{offset};
  b.size = Bytes{size};
  b.first = first;
  b.last = last;
  b.producer = first;
  return b;
}

inline bundle::Program make_program(std::string_view text, std::vector<bundle::MemBuffer> buffers,
                                    uint64_t ddr_bytes = 0x100, uint64_t seed = 1) {
  bundle::Program p;
  p.name = "test";
  p.isa = &isa::builtin_isa();
  auto prog = isa::assemble(*p.isa, text, "test.s");
  p.instrs = prog.instrs;
  bundle::MemMap map;
  map.sram_bytes = p.config.sram_bytes;
  map.alignment = p.config.alignment;
  map.instructions = static_cast<int64_t>(p.instrs.size());
  map.buffers = std::move(buffers);
  p.memmap = std::move(map);
  Rng rng(seed);
  p.ddr_init.resize(ddr_bytes);
  for (auto& b : p.ddr_init) b = static_cast<uint8_t>(rng.next());
  return p;
}

// Loads a (128 B) and b (128 B), multiplies them into c (8x8), stores c to DDR 0x1000.
// Tokens: load b -> gemm, gemm -> store. The {A}, {B}, {C} placeholders are the addresses.
inline std::string gemm_program(uint32_t a = 0x000, uint32_t b = 0x080, uint32_t c = 0x100,
                                std::string_view gemm_tokens = "wait=load, signal=store",
                                std::string_view store_tokens = "wait=compute",
                                std::string_view load_b_tokens = "signal=compute", int m = 8) {
  return ".equ %a, " + std::to_string(a) + "\n.equ %b, " + std::to_string(b) + "\n.equ %c, " +
         std::to_string(c) +
         "\n"
         "load %a, ddr:0x0, rows=1, row_bytes=128, stride=128            ; 0\n"
         "load %b, ddr:0x80, rows=2, row_bytes=64, stride=64, " + std::string(load_b_tokens) + " ; 1\n"
         "gemm %c, %a, %b, m=" + std::to_string(m) + ", n=8, k=16, scale=3, shift=4, " +
         std::string(gemm_tokens) + " ; 2\n"
         "store ddr:0x1000, %c, rows=1, row_bytes=64, stride=64, " + std::string(store_tokens) + " ; 3\n"
         "halt                                                              ; 4\n";
}

inline std::vector<bundle::MemBuffer> gemm_buffers() {
  return {buf("a", 0x000, 128, 0, 2), buf("b", 0x080, 128, 1, 2), buf("c", 0x100, 64, 2, 3)};
}

}  // namespace npuforge::sim::testing
