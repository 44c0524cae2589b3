// gen::write_outputs' writers against the whole-program paths: symbol names against their
// fmt spelling, the five
// files of programs longer than a writer buffer (and of the profile the golden digests do not
// cover) against to_assembly / encode_program / to_readmemh / memmap().to_yaml(), the
// assembly streamed during generation (OutputFiles) against them, and write errors on any
// thread reported with the file's name.
#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "gen/generator.h"
#include "gen/output.h"
#include "gen/output_writers.h"
#include "gen/stream.h"
#include "isa/instruction.h"
#include "util/error.h"
#include "util/file_io.h"
#include "util/plant.h"
#include "util/rng.h"

namespace npuforge::gen {
namespace {

namespace fs = std::filesystem;

TEST(GenOutput, SymbolNamesAsFmtSpellsThem) {
  EXPECT_EQ(symbol_name(OpKind::Load, 0, 0), "ld0");
  EXPECT_EQ(symbol_name(OpKind::Gemm, 12, 1), "g12@1");
  EXPECT_EQ(symbol_name(OpKind::Sync, UINT32_MAX, UINT32_MAX), fmt::format("sync{}@{}", UINT32_MAX, UINT32_MAX));
  EXPECT_EQ(symbol_name(OpKind::Lut, 99, 100), "lut99@100");
  EXPECT_EQ(symbol_name(OpKind::Im2col, 1000000, 0), "ic1000000");
}

struct ScratchDir {
  fs::path path = fs::temp_directory_path() / ("npuforge_gen_output_" + std::to_string(::getpid()));
  ScratchDir() { fs::create_directories(path); }
  ~ScratchDir() { fs::remove_all(path); }
};

GeneratedProgram program(const std::string& profile, uint64_t seed, int64_t length, ProgramStream* stream = nullptr,
                         Plant plant = {}) {
  GenOptions o;
  o.seed = seed;
  o.length = length;
  o.stream = stream;
  o.plant = plant;
  return generate(isa::builtin_isa(), isa::NpuConfig{},
                  Profile::load_file(std::string(NPUFORGE_SOURCE_DIR) + "/configs/gen/" + profile + ".yaml"), o);
}

std::string text_of(const std::vector<uint8_t>& bytes) { return std::string(bytes.begin(), bytes.end()); }

// Longer than a writer buffer (util::BufferedWriter::kBufferBytes) in every text file.
TEST(GenOutput, FilesEqualTheGeneralPathsPastOneBuffer) {
  const ScratchDir dir;
  const isa::Isa& isa = isa::builtin_isa();
  for (const char* profile : {"default", "extremes", "stress-fragment"}) {
    const GeneratedProgram g = program(profile, 7, 12000);
    write_outputs(isa, g, dir.path / "p");
    const std::string s = util::read_file(dir.path / "p.s");
    EXPECT_GT(s.size(), util::BufferedWriter::kBufferBytes) << profile;
    EXPECT_TRUE(s == to_assembly(g)) << profile << ": .s";
    EXPECT_TRUE(util::read_file(dir.path / "p.bin") == text_of(isa::encode_program(isa, g.bundle.instrs))) << profile;
    EXPECT_TRUE(util::read_file(dir.path / "p.hex") == isa::to_readmemh(isa, g.bundle.instrs, g.header)) << profile;
    EXPECT_TRUE(util::read_file(dir.path / "p.memmap.yaml") == g.memmap().to_yaml()) << profile;
    EXPECT_TRUE(util::read_file(dir.path / "p.ddr.bin") == text_of(g.bundle.ddr_init)) << profile;
  }
}

std::string error_of(const isa::Isa& isa, const GeneratedProgram& g, const fs::path& prefix) {
  try {
    write_outputs(isa, g, prefix);
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

// No file of this run is left behind, neither an output nor its temporary.
void expect_no_output(const fs::path& dir, const std::string& stem) {
  for (const char* suffix : {".s", ".bin", ".hex", ".memmap.yaml", ".ddr.bin"}) {
    EXPECT_FALSE(fs::exists(fs::symlink_status(dir / (stem + suffix)))) << stem << suffix;
    EXPECT_FALSE(fs::exists(fs::symlink_status(dir / (stem + suffix + ".tmp")))) << stem << suffix << ".tmp";
  }
}

// The .bin and .hex files are written on a second thread, the others on the caller's: a
// failure on either reaches the caller, and when both fail the .s file's is reported (as when
// they were written one after the other). Files are written under "<name>.tmp" and renamed when all five are:
// /dev/full in a temporary's place is a full disk.
TEST(GenOutput, WriteErrorsOnEitherThreadNameTheFile) {
  if (!fs::exists("/dev/full")) GTEST_SKIP() << "no /dev/full on this system";
  const ScratchDir dir;
  const GeneratedProgram g = program("default", 3, 3000);
  const isa::Isa& isa = isa::builtin_isa();
  fs::create_symlink("/dev/full", dir.path / "a.memmap.yaml.tmp");
  std::string what = error_of(isa, g, dir.path / "a");
  EXPECT_NE(what.find("a.memmap.yaml.tmp: cannot write memory map: No space left on device"), std::string::npos)
      << what;
  expect_no_output(dir.path, "a");
  fs::create_symlink("/dev/full", dir.path / "b.s.tmp");
  what = error_of(isa, g, dir.path / "b");
  EXPECT_NE(what.find("b.s.tmp: cannot write assembly: No space left on device"), std::string::npos) << what;
  expect_no_output(dir.path, "b");
  fs::create_symlink("/dev/full", dir.path / "c.s.tmp");
  fs::create_symlink("/dev/full", dir.path / "c.hex.tmp");
  what = error_of(isa, g, dir.path / "c");
  EXPECT_NE(what.find("c.s.tmp: cannot write assembly"), std::string::npos) << what;
  expect_no_output(dir.path, "c");
  what = error_of(isa, g, dir.path / "missing" / "p");
  EXPECT_NE(what.find("p.s.tmp: cannot create assembly"), std::string::npos) << what;
}

// A directory where an output should go: the four files renamed before it are taken back.
TEST(GenOutput, AnOutputThatCannotBeReplacedLeavesNoFileOfTheRun) {
  const ScratchDir dir;
  const GeneratedProgram g = program("default", 3, 3000);
  fs::create_directories(dir.path / "d.memmap.yaml" / "inside");
  const std::string what = error_of(isa::builtin_isa(), g, dir.path / "d");
  EXPECT_NE(what.find("d.memmap.yaml: cannot write memory map"), std::string::npos) << what;
  for (const char* suffix : {".s", ".bin", ".hex", ".ddr.bin"}) {
    EXPECT_FALSE(fs::exists(dir.path / (std::string("d") + suffix))) << suffix;
    EXPECT_FALSE(fs::exists(dir.path / (std::string("d") + suffix + ".tmp"))) << suffix;
  }
  EXPECT_FALSE(fs::exists(dir.path / "d.memmap.yaml.tmp"));
  EXPECT_TRUE(fs::exists(dir.path / "d.memmap.yaml" / "inside"));  // the directory is not ours: untouched
}

// A successful run leaves the five files and no temporary.
TEST(GenOutput, ASuccessfulRunLeavesNoTemporary) {
  const ScratchDir dir;
  write_outputs(isa::builtin_isa(), program("default", 3, 3000), dir.path / "e");
  size_t files = 0;
  for (const auto& entry : fs::directory_iterator(dir.path)) {
    EXPECT_EQ(entry.path().string().find(".tmp"), std::string::npos) << entry.path();
    ++files;
  }
  EXPECT_EQ(files, 5u);
}

const char* const kSuffixes[] = {".s", ".bin", ".hex", ".memmap.yaml", ".ddr.bin"};

// `npuforge gen`'s way: the files created first and the assembly written while the program
// is generated. The same five files as write_outputs of the finished program, and the same
// program as without a stream.
TEST(GenOutput, AssemblyStreamedDuringGenerationIsTheSameFile) {
  const ScratchDir dir;
  const isa::Isa& isa = isa::builtin_isa();
  for (const char* profile : {"default", "tiny-buffers", "extremes"}) {
    OutputFiles files(isa, dir.path / "s");
    const GeneratedProgram g = program(profile, 5, 40000, &files.stream());
    files.finish(g);
    write_outputs(isa, program(profile, 5, 40000), dir.path / "w");
    for (const char* suffix : kSuffixes)
      EXPECT_TRUE(util::read_file(dir.path / (std::string("s") + suffix)) ==
                  util::read_file(dir.path / (std::string("w") + suffix)))
          << profile << suffix;
  }
}

// A planted allocator bug ends generation early, after the stream wrote a header announcing
// the requested length: the .s file is written again, with the right count.
TEST(GenOutput, AProgramCutShortAfterStreamingStartedGetsTheRightHeader) {
  const ScratchDir dir;
  const isa::Isa& isa = isa::builtin_isa();
  OutputFiles files(isa, dir.path / "s");
  const GeneratedProgram g = program("near-full", 3, 200000, &files.stream(), parse_plant("alloc-exact-fit-split"));
  ASSERT_FALSE(g.allocator_check.empty());
  ASSERT_GT(g.bundle.instrs.size(), 1024u);  // past the first publications (every 512 instructions)
  ASSERT_LT(g.bundle.instrs.size(), 200000u);
  files.finish(g);
  EXPECT_TRUE(util::read_file(dir.path / "s.s") == to_assembly(g));
  write_outputs(isa, g, dir.path / "w");
  for (const char* suffix : kSuffixes)
    EXPECT_TRUE(util::read_file(dir.path / (std::string("s") + suffix)) ==
                util::read_file(dir.path / (std::string("w") + suffix)))
        << suffix;
}

// The generator stops the stream when an array it feeds would move (Builder::stop_stream):
// finish() then writes the rest of the .s, .bin and .hex files from the finished program,
// wherever the stream's thread stopped (nowhere, within the published part, or at its end).
TEST(GenOutput, AStreamStoppedHalfwayIsFinishedFromTheProgram) {
  const ScratchDir dir;
  const isa::Isa& isa = isa::builtin_isa();
  const GeneratedProgram g = program("default", 11, 20000);
  write_outputs(isa, g, dir.path / "w");
  const uint64_t half = g.bundle.instrs.size() / 2;
  uint64_t half_refs = 0;
  while (half_refs < g.refs.size() && g.refs[half_refs].instr < half) ++half_refs;
  ASSERT_GT(half_refs, 0u);
  for (const int wait_ms : {0, 1, 30}) {
    OutputFiles files(isa, dir.path / "s");
    files.stream().start({g.header, g.bundle.instrs.size(), g.bundle.instrs.data(), g.refs.data(), g.symbols.data()});
    files.stream().publish({half, half_refs});
    std::this_thread::sleep_for(std::chrono::milliseconds(wait_ms));
    files.stream().stop();
    files.finish(g);
    for (const char* suffix : kSuffixes)
      EXPECT_TRUE(util::read_file(dir.path / (std::string("s") + suffix)) ==
                  util::read_file(dir.path / (std::string("w") + suffix)))
          << "stopped after " << wait_ms << " ms: " << suffix;
  }
}

std::string streamed_error_of(const fs::path& prefix) {
  try {
    OutputFiles files(isa::builtin_isa(), prefix);
    files.finish(program("default", 3, 30000, &files.stream()));
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

// A full disk under a streamed file (.s, .bin, .hex) is reported by finish(), naming it; no
// file is left.
TEST(GenOutput, AStreamedWriteErrorNamesTheFile) {
  if (!fs::exists("/dev/full")) GTEST_SKIP() << "no /dev/full on this system";
  const ScratchDir dir;
  fs::create_symlink("/dev/full", dir.path / "f.s.tmp");
  std::string what = streamed_error_of(dir.path / "f");
  EXPECT_NE(what.find("f.s.tmp: cannot write assembly: No space left on device"), std::string::npos) << what;
  expect_no_output(dir.path, "f");
  fs::create_symlink("/dev/full", dir.path / "h.hex.tmp");
  what = streamed_error_of(dir.path / "h");
  EXPECT_NE(what.find("h.hex.tmp: cannot write $readmemh image: No space left on device"), std::string::npos) << what;
  expect_no_output(dir.path, "h");
}

// Generation that fails (here: the memory limit) with files created for streaming leaves none.
TEST(GenOutput, AFailedGenerationLeavesNoFile) {
  const ScratchDir dir;
  try {
    OutputFiles files(isa::builtin_isa(), dir.path / "g");
    GenOptions o;
    o.length = 1000000;
    o.max_memory = Bytes{1 << 20};
    o.stream = &files.stream();
    (void)generate(isa::builtin_isa(), isa::NpuConfig{},
                   Profile::load_file(std::string(NPUFORGE_SOURCE_DIR) + "/configs/gen/default.yaml"), o);
    ADD_FAILURE() << "no error";
  } catch (const Error&) {
  }
  expect_no_output(dir.path, "g");
}

}  // namespace
}  // namespace npuforge::gen
