#pragma once
// Writing a generated program: <prefix>.s (assembly, symbol names as comments), .bin
// (instructions only), .hex ($readmemh), .memmap.yaml, .ddr.bin (DDR input image from
// address 0), and the one-line summary. Text outputs carry the seed and profile hash.
#include <filesystem>
#include <string>

#include "gen/generator.h"

namespace npuforge::gen {

// Assembly that `npuforge asm` turns back into the same .bin.
std::string to_assembly(const GeneratedProgram& program);

// "gen: seed=.. instructions=.. buffers=.. peak_sram=.. events: exact_fit=.. split=.. ..."
std::string summary_line(const GeneratedProgram& program);

// Writes the five files; throws npuforge::Error naming a file that cannot be written.
void write_outputs(const isa::Isa& isa, const GeneratedProgram& program, const std::filesystem::path& prefix);

}  // namespace npuforge::gen
