#pragma once
// Places the symbols of a hand-written (or any) assembly program with the SRAM allocator,
// in program order, as the symbol table does for the generator (docs/architecture.md): a symbol is defined at its
// first use (size = the largest extent any use needs), its reference count is the number
// of later uses, each use consumes it and the last one frees and merges its node; then the
// fix-up pass writes the placed addresses into every field that names it.
#include "allocator/allocator.h"
#include "bundle/memmap.h"
#include "isa/assembler.h"
#include "isa/npu_config.h"

namespace npuforge::allocator {

struct PlaceOptions {
  Policy policy = Policy::FirstFit;
  std::string header;  // written into the memory map's header comment
};

// Resolves every entry of program.symbol_refs and returns the memory map of the placed
// buffers. Throws npuforge::Error naming the symbol and instruction when a symbol is read
// before any instruction writes it, or when the SRAM cannot hold it (with the live map).
bundle::MemMap place_symbols(isa::AsmProgram& program, const isa::NpuConfig& npu, const PlaceOptions& options = {});

}  // namespace npuforge::allocator
