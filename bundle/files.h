#pragma once
// A program bundle on disk, five files beside each other:
//   PREFIX.s            assembly with the buffers its SRAM operands name (bundle/listing.h)
//   PREFIX.bin, .hex    the instruction words, raw and for $readmemh (bundle/words.h)
//   PREFIX.memmap.yaml  the memory map (bundle/memmap.h)
//   PREFIX.ddr.bin      DDR before the program runs (bundle/ddr_image.h)
// BundleWriter is the one writer of the five (`npuforge gen`, the compiler's NPU segments,
// `npuforge shrink`, a failing regression seed), read_program the one reader (`npuforge sim`,
// `npuforge shrink`, the regression runner).
#include <array>
#include <cstddef>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "bundle/program.h"
#include "isa/assembler.h"
#include "util/buffered_writer.h"

namespace npuforge::bundle {

enum class BundleFile : size_t { kAssembly, kBinary, kReadmemh, kMemmap, kDdr };
inline constexpr size_t kBundleFiles = 5;

struct BundlePaths {
  // Each initialised: a designated initializer may name only the ones it reads.
  std::filesystem::path assembly{}, binary{}, readmemh{}, memmap{}, ddr{};
  static BundlePaths at(const std::filesystem::path& prefix);  // PREFIX.s, PREFIX.bin, ...
};

// The five files, each written under a temporary name beside it (PATH.tmp) and renamed into
// place by commit() once all five are written: a write error (a full disk, a directory in the
// way) leaves no half-written output and no mix of this run's files with an earlier run's.
// Destroyed without commit() (an error), it removes its temporaries.
class BundleWriter {
 public:
  // Creates the five temporaries; throws npuforge::Error naming the first that cannot be.
  explicit BundleWriter(const std::filesystem::path& prefix);
  ~BundleWriter();
  BundleWriter(const BundleWriter&) = delete;
  BundleWriter& operator=(const BundleWriter&) = delete;

  // Each file may be written on a thread of its own.
  util::BufferedWriter& file(BundleFile f) { return *files_[index(f)]; }
  // Empties a file to write it again from its start.
  void restart(BundleFile f);
  // Writes out what is buffered; throws npuforge::Error naming the file when it cannot be.
  void close(BundleFile f) { files_[index(f)]->close(); }
  // Closes every file and renames all five into place; when one cannot be, removes those
  // already renamed and throws npuforge::Error naming it.
  void commit();

 private:
  static size_t index(BundleFile f) { return static_cast<size_t>(f); }
  void remove_temporaries();

  std::array<std::string, kBundleFiles> path_, temp_;
  std::array<std::unique_ptr<util::BufferedWriter>, kBundleFiles> files_;
  size_t created_ = 0;  // files_ opened, in order
  bool committed_ = false;
};

// What PREFIX.s says besides the instructions (bundle/listing.h).
struct Listing {
  std::string header;  // one line; also the .hex file's header comment
  std::string note;    // what the comments name, e.g. "SRAM operands name their buffers in the comments"
  std::span<const isa::SymbolRef> operands;  // the buffer each SRAM operand names, in instruction order
};

// Writes a whole program's five files (the generator streams its own through BundleWriter,
// gen/output.h); throws npuforge::Error naming a file that cannot be written.
void write_bundle(const isa::Isa& isa, const std::filesystem::path& prefix, std::span<const isa::Instruction> instrs,
                  const MemMap& memmap, std::span<const uint8_t> ddr_image, const Listing& listing);
// The same from a Program, which must have a memory map.
void write_bundle(const std::filesystem::path& prefix, const Program& program, const Listing& listing);

// Loads PREFIX.bin with the memory map and the DDR image at paths.memmap and paths.ddr (empty:
// none, no memory map / all-zero DDR; .s and .hex are not read) for the NPU `config`, named
// after the .bin file's stem. Throws npuforge::Error naming the file on bad input: a .bin that
// is not whole instructions, a memory map that does not parse (with the line), a DDR image
// shorter than the DDR tensors the map needs, pieces that disagree (Program::validate).
Program read_program(const isa::Isa& isa, const BundlePaths& paths, const isa::NpuConfig& config);
// The same with the DDR image already in memory (paths.ddr unread), named `image_name` in
// messages: `run-model` hands each NPU segment the image the previous segments left.
Program read_program(const isa::Isa& isa, const BundlePaths& paths, const isa::NpuConfig& config,
                     std::vector<uint8_t> ddr_image, const std::string& image_name);

}  // namespace npuforge::bundle
