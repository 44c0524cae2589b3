#pragma once
// Writing a generated program's bundle (bundle/files.h): <prefix>.s (assembly, symbol names
// as comments), .bin (instructions only), .hex ($readmemh), .memmap.yaml, .ddr.bin (DDR input
// image from address 0), and the one-line summary. Text outputs carry the seed and profile hash.
#include <filesystem>
#include <string>

#include "bundle/files.h"
#include "bundle/words.h"
#include "gen/generator.h"
#include "gen/output_writers.h"
#include "gen/stream.h"

namespace npuforge::gen {

// Assembly that `npuforge asm` turns back into the same .bin.
std::string to_assembly(const GeneratedProgram& program);

// "gen: seed=.. instructions=.. buffers=.. peak_sram=.. events: exact_fit=.. split=.. ..."
std::string summary_line(const GeneratedProgram& program);

// Writes the five files; throws npuforge::Error naming a file that cannot be written.
void write_outputs(const isa::Isa& isa, const GeneratedProgram& program, const std::filesystem::path& prefix);

// write_outputs in two steps, so that the .s, .bin and .hex files are written while the
// program is being generated: the files are created first (bundle::BundleWriter: under
// temporary names), stream() goes to GenOptions::stream, finish() writes the rest and renames
// them into place. A run that does not reach finish() (an error) leaves no files.
class OutputFiles {
 public:
  // Creates the five temporary files; throws npuforge::Error naming the first that cannot be.
  OutputFiles(const isa::Isa& isa, const std::filesystem::path& prefix);
  ~OutputFiles() { stream_.stop(); }  // before the files close
  OutputFiles(const OutputFiles&) = delete;
  OutputFiles& operator=(const OutputFiles&) = delete;

  ProgramStream& stream() { return stream_; }
  // The finished program (the one generated with stream(), or any); throws npuforge::Error
  // naming a file that cannot be written. Once generation fed stream(), call it (the stream's
  // thread reads the program until it returns).
  void finish(const GeneratedProgram& program);

 private:
  void stream_files(const StreamView& view, StreamProgress done);

  const isa::Isa& isa_;
  bundle::BundleWriter files_;
  AssemblyEmitter assembly_;
  bundle::WordsEmitter words_;
  ProgramStream stream_;  // last: its thread stops before the rest is destroyed
};

}  // namespace npuforge::gen
