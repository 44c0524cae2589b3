// The program bundle's five files (bundle/files.h): what write_bundle writes read_program
// reads back, the .s reassembles to the .bin and the .hex is $readmemh's; a failed write
// leaves nothing; bad files are errors naming the file (and the line, the sizes).
#include "bundle/files.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "bundle/ddr_image.h"
#include "isa/assembler.h"
#include "isa/isa.h"
#include "util/error.h"
#include "util/file_io.h"

namespace npuforge::bundle {
namespace {

namespace fs = std::filesystem;

struct ScratchDir {
  fs::path path = fs::temp_directory_path() / ("npuforge_bundle_files_" + std::to_string(::getpid()));
  ScratchDir() { fs::create_directories(path); }
  ~ScratchDir() { fs::remove_all(path); }
};

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

MemBuffer buffer(std::string symbol, uint32_t offset, uint64_t size, int64_t first, int64_t last,
                 std::vector<int64_t> consumers) {
  MemBuffer b;
  b.symbol = std::move(symbol);
  b.offset = SramAddr{offset};
  b.size = Bytes{size};
  b.first = first;
  b.last = last;
  b.producer = first;
  b.consumers = std::move(consumers);
  return b;
}

// Loads x (256 B, the model input in DDR [0, 0x100)) in two halves, adds them into y, stores y
// to DDR 0x1000 (an output written, not read). Operands named for the listing.
struct Sample {
  Program program;
  std::vector<isa::SymbolRef> operands;
};

Sample sample() {
  Sample s;
  Program& p = s.program;
  p.name = "sample";
  p.isa = &isa::builtin_isa();
  p.instrs = isa::assemble(*p.isa,
                           "load 0x0, ddr:0x0, rows=1, row_bytes=128, stride=128\n"
                           "load 0x80, ddr:0x80, rows=1, row_bytes=128, stride=128, signal=compute\n"
                           "eltwise 0x100, 0x0, b=0x80, len=128, op=add, wait=load, signal=store\n"
                           "store ddr:0x1000, 0x100, rows=1, row_bytes=128, stride=128, wait=compute\n"
                           "halt\n",
                           "sample.s")
                 .instrs;
  MemMap map;
  map.header = "a test bundle\nsecond line";
  map.sram_bytes = p.config.sram_bytes;
  map.alignment = p.config.alignment;
  map.instructions = static_cast<int64_t>(p.instrs.size());
  map.buffers = {buffer("lo", 0x0, 128, 0, 2, {2}), buffer("hi", 0x80, 128, 1, 2, {2}),
                 buffer("y", 0x100, 128, 2, 3, {3})};
  MemDdrBuffer x;
  x.name = "x";
  x.region = "input";
  x.offset = DdrAddr{0};
  x.size = Bytes{0x100};
  x.last = 1;
  x.readers = {0, 1};
  MemDdrBuffer out;
  out.name = "out";
  out.region = "output";
  out.offset = DdrAddr{0x1000};
  out.size = Bytes{128};
  out.first = 3;
  out.last = 4;
  out.writers = {3};
  map.ddr_buffers = {x, out};
  p.memmap = std::move(map);
  p.ddr_init.resize(0x100);
  for (size_t i = 0; i < p.ddr_init.size(); ++i) p.ddr_init[i] = static_cast<uint8_t>(i * 7 + 3);
  // Field slots: opcode, wait and signal come first.
  s.operands = {{0, 3, "lo", 0}, {1, 3, "hi", 0}, {2, 3, "y", 0}, {2, 4, "lo", 0}, {2, 5, "hi", 0},
                {3, 4, "y", 64}};
  return s;
}

Listing listing_of(const Sample& s) {
  return {"npuforge test; header", "SRAM operands name their buffers", s.operands};
}

TEST(BundleFiles, WhatIsWrittenReadsBack) {
  ScratchDir dir;
  const Sample s = sample();
  write_bundle(dir.path / "p", s.program, listing_of(s));
  const BundlePaths files = BundlePaths::at(dir.path / "p");
  EXPECT_EQ(files.assembly, dir.path / "p.s");
  EXPECT_EQ(files.ddr, dir.path / "p.ddr.bin");
  const Program back = read_program(isa::builtin_isa(), files, s.program.config);
  EXPECT_EQ(back.name, "p");
  EXPECT_EQ(back.instrs, s.program.instrs);
  EXPECT_EQ(back.ddr_init, s.program.ddr_init);
  ASSERT_TRUE(back.memmap);
  EXPECT_EQ(back.memmap->to_yaml(), s.program.memmap->to_yaml());
  EXPECT_EQ(back.memmap->ddr_buffers.size(), 2u);
  // The derived two: the .s assembles back to the .bin, the .hex is $readmemh's image.
  const std::string assembly = util::read_file(files.assembly);
  EXPECT_EQ(isa::encode_program(isa::builtin_isa(), isa::assemble(isa::builtin_isa(), assembly, "p.s").instrs),
            util::read_binary_file(files.binary));
  EXPECT_EQ(util::read_file(files.readmemh),
            isa::to_readmemh(isa::builtin_isa(), s.program.instrs, "npuforge test; header"));
  EXPECT_EQ(assembly.substr(0, assembly.find('\n', assembly.find('\n') + 1) + 1),
            "; npuforge test; header\n; 5 instructions; SRAM operands name their buffers\n");
  EXPECT_NE(assembly.find("  ; dst=%y a=%lo b=%hi\n"), std::string::npos) << assembly;
  EXPECT_NE(assembly.find("  ; src=%y+64\n"), std::string::npos) << assembly;
  for (const auto& e : fs::directory_iterator(dir.path))
    EXPECT_NE(e.path().extension(), ".tmp") << e.path() << " left behind";
}

// A writer that cannot put one of the five into place (a directory in the way) throws naming
// it and leaves neither this run's other files nor its temporaries.
TEST(BundleFiles, AFailedWriteLeavesNoFileOfTheRun) {
  ScratchDir dir;
  const Sample s = sample();
  fs::create_directories(dir.path / "p.memmap.yaml");
  const std::string err = error_of([&] { write_bundle(dir.path / "p", s.program, listing_of(s)); });
  EXPECT_NE(err.find((dir.path / "p.memmap.yaml").string() + ": cannot write memory map"), std::string::npos) << err;
  std::vector<std::string> left;
  for (const auto& e : fs::directory_iterator(dir.path)) left.push_back(e.path().filename().string());
  EXPECT_EQ(left, std::vector<std::string>{"p.memmap.yaml"});
}

TEST(BundleFiles, ATruncatedBinaryNamesTheFile) {
  ScratchDir dir;
  const Sample s = sample();
  write_bundle(dir.path / "p", s.program, listing_of(s));
  const BundlePaths files = BundlePaths::at(dir.path / "p");
  fs::resize_file(files.binary, fs::file_size(files.binary) - 3);
  const std::string err = error_of([&] { read_program(isa::builtin_isa(), files, s.program.config); });
  EXPECT_NE(err.find(files.binary.string() + ": truncated binary"), std::string::npos) << err;
  const std::string missing = error_of([&] { read_program(isa::builtin_isa(), BundlePaths::at(dir.path / "q"), {}); });
  EXPECT_NE(missing.find((dir.path / "q.bin").string()), std::string::npos) << missing;
}

TEST(BundleFiles, AMalformedMemoryMapLineIsNamed) {
  ScratchDir dir;
  const Sample s = sample();
  write_bundle(dir.path / "p", s.program, listing_of(s));
  const BundlePaths files = BundlePaths::at(dir.path / "p");
  std::string text = util::read_file(files.memmap);
  const size_t at = text.find("size: 128, first: 1");  // buffers[1], line 8 (after two header lines)
  ASSERT_NE(at, std::string::npos) << text;
  text.replace(at, 9, "size: big");
  util::write_file(files.memmap, text);
  const std::string err = error_of([&] { read_program(isa::builtin_isa(), files, s.program.config); });
  EXPECT_NE(err.find(files.memmap.string() + ":8"), std::string::npos) << err;
  EXPECT_NE(err.find("buffers[1].size"), std::string::npos) << err;
}

// The map's input x ends at 0x100: an image of 0xff bytes, or none, is refused naming the
// file, its size and the tensor; 0x100 bytes (the output need not be there) is enough.
TEST(BundleFiles, ADdrImageShorterThanTheMapsInputsIsRefused) {
  ScratchDir dir;
  const Sample s = sample();
  write_bundle(dir.path / "p", s.program, listing_of(s));
  const BundlePaths files = BundlePaths::at(dir.path / "p");
  EXPECT_EQ(read_program(isa::builtin_isa(), files, s.program.config).ddr_init.size(), 0x100u);
  for (const uint64_t size : {uint64_t{0}, uint64_t{0xff}}) {
    fs::resize_file(files.ddr, size);
    const std::string err = error_of([&] { read_program(isa::builtin_isa(), files, s.program.config); });
    EXPECT_EQ(err, fmt::format("{}: DDR image of {} bytes is shorter than the memory map {} needs: input tensor 'x' "
                               "[0x0, 0x100): 256 bytes",
                               files.ddr.string(), size, files.memmap.string()));
  }
  BundlePaths no_image = files;
  no_image.ddr.clear();
  const std::string err = error_of([&] { read_program(isa::builtin_isa(), no_image, s.program.config); });
  EXPECT_NE(err.find(files.binary.string() + ": no DDR image given, but the memory map " + files.memmap.string() +
                     " needs 256 bytes of one: input tensor 'x'"),
            std::string::npos)
      << err;
  // Without a memory map the program's own reads say what the image must hold.
  BundlePaths no_map = no_image;
  no_map.memmap.clear();
  const std::string no_map_err = error_of([&] { read_program(isa::builtin_isa(), no_map, s.program.config); });
  EXPECT_NE(no_map_err.find(files.binary.string() + ": no DDR image given, but the program needs 256 bytes of one"),
            std::string::npos)
      << no_map_err;
  no_map.ddr = files.ddr;
  fs::resize_file(files.ddr, 0x100);
  EXPECT_EQ(read_program(isa::builtin_isa(), no_map, s.program.config).instrs, s.program.instrs);
}

TEST(BundleProgram, ValidateNamesWhatDisagrees) {
  Program p = sample().program;
  EXPECT_EQ(p.validate(), "");
  p.memmap->sram_bytes = Bytes{1024};
  EXPECT_NE(p.validate().find("sram_bytes 1024"), std::string::npos) << p.validate();
  p.memmap->sram_bytes = p.config.sram_bytes;
  p.memmap->instructions = 7;
  EXPECT_NE(p.validate().find("7 instructions"), std::string::npos) << p.validate();
  p.memmap->instructions = 5;
  p.ddr_init.resize(0x80);
  EXPECT_EQ(p.validate(), "sample: DDR image of 128 bytes is shorter than its memory map needs: input tensor 'x' "
                          "[0x0, 0x100): 256 bytes");
  p.ddr_init.resize(p.config.ddr_bytes.value + 1);
  EXPECT_NE(p.validate().find("exceeds ddr_bytes"), std::string::npos) << p.validate();
}

}  // namespace
}  // namespace npuforge::bundle
