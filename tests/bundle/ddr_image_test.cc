// The DDR image format (bundle/ddr_image.h): raw bytes from address 0 through a file, images
// compared as memories (a missing tail is zeros), and the bytes a memory map says the image
// must hold (its memory map's DDR tensors, and what the program reads before it writes it).
#include "bundle/ddr_image.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "isa/assembler.h"
#include "isa/isa.h"
#include "util/error.h"

namespace npuforge::bundle {
namespace {

namespace fs = std::filesystem;

TEST(DdrImage, FileRoundTripAndErrorsNameTheFile) {
  const fs::path path = fs::temp_directory_path() / ("npuforge_ddr_image_" + std::to_string(::getpid()) + ".bin");
  const std::vector<uint8_t> image = {0, 1, 2, 0xff, 0, 0};
  write_ddr_image(path, image);
  EXPECT_EQ(fs::file_size(path), image.size());  // header-less, trailing zeros kept
  EXPECT_EQ(read_ddr_image(path), image);
  fs::remove(path);
  try {
    read_ddr_image(path);
    ADD_FAILURE() << "a missing image read";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(path.string()), std::string::npos) << e.what();
  }
}

TEST(DdrImage, CompareTreatsAMissingTailAsZero) {
  const std::vector<uint8_t> a = {1, 2, 3, 0, 0};
  const std::vector<uint8_t> b = {1, 2, 3};
  EXPECT_EQ(compare_images(a, b).total_differing, 0u);
  const std::vector<uint8_t> c = {1, 9, 9, 3, 0, 7};
  const DdrDiff d = compare_images(a, c);
  EXPECT_EQ(d.addr, 1u);
  EXPECT_EQ(d.bytes, 3u);  // bytes 1..3 differ in a row
  EXPECT_EQ(d.total_differing, 4u);
  // Equal common part, a non-zero byte in the longer one's tail (either side).
  const std::vector<uint8_t> e = {1, 2, 3, 0, 5};
  for (const DdrDiff t : {compare_images(b, e), compare_images(e, b)}) {
    EXPECT_EQ(t.addr, 4u);
    EXPECT_EQ(t.total_differing, 1u);
  }
  EXPECT_EQ(compare_images({}, {}).total_differing, 0u);
}

MemDdrBuffer tensor(std::string name, uint64_t offset, uint64_t size, int64_t first, std::vector<int64_t> writers,
                    std::vector<int64_t> readers) {
  MemDdrBuffer b;
  b.name = std::move(name);
  b.region = "arena";
  b.offset = DdrAddr{offset};
  b.size = Bytes{size};
  b.first = first;
  b.last = 9;
  b.writers = std::move(writers);
  b.readers = std::move(readers);
  return b;
}

// Only tensors whose bytes are there when the program starts count (as for the DDR ownership
// checker): read before written, or live from 0 and never written; not one the program makes
// first, nor one that starts later.
TEST(DdrImage, TheMapNeedsTheTensorsHeldAtTheStart) {
  MemMap map;
  EXPECT_FALSE(ddr_image_need(map)) << "a generated program's map lists no DDR tensor";
  map.ddr_buffers = {tensor("made", 0x9000, 64, 0, {2}, {5}), tensor("later", 0x8000, 64, 3, {}, {4})};
  EXPECT_FALSE(ddr_image_need(map));
  map.ddr_buffers.push_back(tensor("earlier", 0x100, 0x40, 0, {6}, {1}));
  map.ddr_buffers.push_back(tensor("kept", 0x2000, 0x80, 0, {}, {}));
  map.ddr_buffers.push_back(tensor("read", 0x1000, 0x20, 0, {}, {3}));
  const std::optional<DdrNeed> need = ddr_image_need(map);
  ASSERT_TRUE(need);
  EXPECT_EQ(need->bytes, 0x2080u);
  EXPECT_EQ(need->tensor->name, "kept");
  EXPECT_EQ(describe(*need), "arena tensor 'kept' [0x2000, 0x2080): 8320 bytes");
}

// Any program, with a memory map or without: the image holds every DDR byte an instruction
// reads before an earlier one wrote it. A load of bytes a store wrote first needs none; a load
// that a store covers only in part needs up to the last unwritten byte.
TEST(DdrImage, TheProgramNeedsWhatItReadsBeforeItWritesIt) {
  const isa::Isa& isa = isa::builtin_isa();
  const auto need_of = [&](const std::string& text) {
    return ddr_image_need(isa::assemble(isa, text + "halt\n", "p.s").instrs);
  };
  EXPECT_FALSE(need_of("store ddr:0x1000, 0x0, rows=1, row_bytes=64, stride=64\n"));
  const std::string store_then_load =
      "store ddr:0x1000, 0x0, rows=1, row_bytes=64, stride=64, signal=load\n"
      "load 0x100, ddr:0x1000, rows=1, row_bytes=64, stride=64, wait=store\n";
  EXPECT_FALSE(need_of(store_then_load)) << "the program reads only what it wrote";
  const std::string strided = "load 0x0, ddr:0x200, rows=3, row_bytes=16, stride=100\n";
  std::optional<DdrNeed> need = need_of(strided);
  ASSERT_TRUE(need);
  EXPECT_EQ(need->bytes, 0x200u + 2 * 100 + 16) << "the last row's end";
  EXPECT_EQ(need->instruction, 0u);
  const std::string partly = "store ddr:0x1020, 0x0, rows=1, row_bytes=32, stride=32, signal=load\n"
                             "load 0x100, ddr:0x1000, rows=1, row_bytes=64, stride=64, wait=store\n";
  need = need_of(partly);
  ASSERT_TRUE(need);
  EXPECT_EQ(need->bytes, 0x1020u) << "bytes [0x1020, 0x1040) were written first";
  EXPECT_EQ(need->read_begin, 0x1000u);
  const std::vector<isa::Instruction> p = isa::assemble(isa, partly + "halt\n", "p.s").instrs;
  EXPECT_EQ(describe(*need, p), "instruction 1 (load) reads DDR [0x1000, 0x1020) before the program writes it");
  // With a memory map the larger need wins.
  MemMap map;
  map.ddr_buffers.push_back(tensor("x", 0x3000, 0x40, 0, {}, {1}));
  EXPECT_EQ(ddr_image_need(&map, p)->bytes, 0x3040u);
  EXPECT_EQ(ddr_image_need(nullptr, p)->bytes, 0x1020u);
}

}  // namespace
}  // namespace npuforge::bundle
