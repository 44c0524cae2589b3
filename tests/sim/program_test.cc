// Program bundles from files run by the simulator, and the memories.
#include <algorithm>
#include <filesystem>
#include <utility>

#include <unistd.h>

#include <gtest/gtest.h>

#include "bundle/files.h"
#include "sim/backend.h"
#include "sim/golden.h"
#include "sim_test_util.h"

namespace npuforge::sim {
namespace {

namespace fs = std::filesystem;
using testing::gemm_buffers;
using testing::gemm_program;
using testing::make_program;

struct TempDir {
  TempDir() : path(fs::temp_directory_path() / ("npuforge_sim_" + std::to_string(::getpid()))) {
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
  fs::path path;
};

// The bundle's writer and reader (bundle/files.h) with a simulation in between: the program
// read back runs clean and its final DDR image survives its file.
TEST(ProgramFiles, RoundTripAndRunFromFiles) {
  TempDir tmp;
  const bundle::Program ref = make_program(gemm_program(), gemm_buffers(), 0x180);
  bundle::write_bundle(tmp.path / "p", ref, {});
  const bundle::Program p = bundle::read_program(*ref.isa, bundle::BundlePaths::at(tmp.path / "p"), ref.config);
  EXPECT_EQ(p.name, "p");
  EXPECT_EQ(p.instrs, ref.instrs);
  EXPECT_EQ(p.ddr_init, ref.ddr_init);
  ASSERT_TRUE(p.memmap);
  ASSERT_EQ(p.memmap->buffers.size(), 3u);
  EXPECT_EQ(p.memmap->buffers[2].offset, SramAddr{0x100});

  const Semantics sem(*p.isa);
  Checkers checks(p, sem);
  const RunResult r = SequentialBackend(sem).run(p, checks);
  EXPECT_TRUE(checks.clean()) << checks.summary();
  bundle::write_ddr_image(tmp.path / "out.bin", r.ddr);
  EXPECT_EQ(bundle::read_ddr_image(tmp.path / "out.bin"), r.ddr);
  const std::vector<uint8_t> written = bundle::read_ddr_image(tmp.path / "out.bin");
  EXPECT_EQ(bundle::compare_images(run_golden(p, sem).ddr, written).total_differing, 0u);
}

TEST(Memory, SparseDdrAcrossPages) {
  Ddr ddr(Bytes{1 << 20});
  std::vector<uint8_t> data(3 * Ddr::kPageBytes + 10);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<uint8_t>(i * 7 + 1);
  ddr.write(Ddr::kPageBytes - 5, data);
  std::vector<uint8_t> back(data.size());
  ddr.read(Ddr::kPageBytes - 5, back);
  EXPECT_EQ(back, data);
  std::vector<uint8_t> zeros(16, 0xff);
  ddr.read(100 * Ddr::kPageBytes, zeros);  // never written: zeros
  EXPECT_EQ(zeros, std::vector<uint8_t>(16, 0));
  EXPECT_EQ(ddr.extent(), Ddr::kPageBytes - 5 + data.size());
  EXPECT_THROW(ddr.read((1 << 20) - 4, zeros), AccessError);
  EXPECT_THROW(ddr.write(UINT64_MAX - 2, zeros), AccessError);  // no wrap-around
}

TEST(Memory, LoadedImageReadsThroughAndCopiesOnWrite) {
  std::vector<uint8_t> image(2 * Ddr::kPageBytes + 100);
  for (size_t i = 0; i < image.size(); ++i) image[i] = static_cast<uint8_t>(i * 13 + 5);
  const std::vector<uint8_t> original = image;
  Ddr ddr(Bytes{1 << 20});
  ddr.load_image(image);
  EXPECT_EQ(ddr.extent(), image.size());
  EXPECT_EQ(ddr.image(), image);
  const std::vector<uint8_t> patch(8, 0xAB);
  ddr.write(Ddr::kPageBytes + 3, patch);  // a page in the middle of the image
  EXPECT_EQ(image, original);             // the loaded image is never written
  std::vector<uint8_t> want = original;
  std::copy(patch.begin(), patch.end(), want.begin() + Ddr::kPageBytes + 3);
  EXPECT_EQ(ddr.image(), want);  // the rest of the written page kept the image's bytes
  EXPECT_EQ(ddr.at(Ddr::kPageBytes + 2), original[Ddr::kPageBytes + 2]);
  EXPECT_EQ(ddr.at(Ddr::kPageBytes + 3), 0xAB);
  EXPECT_EQ(ddr.at(5 * Ddr::kPageBytes), 0);
  EXPECT_THROW(ddr.load_image(std::vector<uint8_t>((1 << 20) + 1)), AccessError);
}

// The sparse comparison (a regression seed's golden DDR) against the image comparison, on
// images that differ in written pages, in unwritten ones, past either end and not at all.
TEST(Memory, SparseCompareMatchesImageCompare) {
  std::vector<uint8_t> init(3 * Ddr::kPageBytes + 17);
  for (size_t i = 0; i < init.size(); ++i) init[i] = static_cast<uint8_t>(i % 251);
  Ddr ddr(Bytes{1 << 20});
  ddr.load_image(init);
  ddr.write(2 * Ddr::kPageBytes - 2, std::vector<uint8_t>(6, 0x11));
  ddr.write(6 * Ddr::kPageBytes, std::vector<uint8_t>(3, 0x22));  // extends past the image
  const std::vector<uint8_t> same = ddr.image();
  std::vector<std::vector<uint8_t>> actuals = {same};
  for (size_t at : {size_t{0}, size_t{2 * Ddr::kPageBytes - 1}, size_t{Ddr::kPageBytes + 9}, same.size() - 1}) {
    actuals.push_back(same);
    actuals.back()[at] ^= 0x40;
  }
  actuals.push_back(same);
  actuals.back().resize(same.size() + 100, 0);  // a zero tail: equal
  actuals.push_back(actuals.back());
  actuals.back().back() = 1;  // a non-zero tail
  actuals.push_back(std::vector<uint8_t>(same.begin(), same.begin() + 100));  // short
  actuals.push_back({});
  for (size_t k = 0; k < actuals.size(); ++k) {
    const bundle::DdrDiff want = bundle::compare_images(same, actuals[k]), got = compare_images(ddr, actuals[k]);
    EXPECT_EQ(got.addr, want.addr) << k;
    EXPECT_EQ(got.bytes, want.bytes) << k;
    EXPECT_EQ(got.total_differing, want.total_differing) << k;
    EXPECT_EQ(ddr.same_as(actuals[k]), want.total_differing == 0) << k;
  }
  EXPECT_GT(compare_images(ddr, actuals[1]).total_differing, 0u);  // the test can fail
}

// Two memories over the same image (a seed's backend and golden DDR) compare like their
// images: written on one side only, on both, past the image, a write that restores the
// image's bytes (equal), and memories over different images (the image path).
TEST(Memory, MemoryCompareMatchesImageCompare) {
  std::vector<uint8_t> init(3 * Ddr::kPageBytes + 17);
  for (size_t i = 0; i < init.size(); ++i) init[i] = static_cast<uint8_t>(i % 251);
  auto fresh = [&] {
    Ddr d(Bytes{1 << 20});
    d.load_image(init);
    return d;
  };
  using Edit = std::pair<uint64_t, std::vector<uint8_t>>;
  const std::vector<std::vector<Edit>> edits = {
      {},
      {{10, {1, 2, 3}}},
      {{2 * Ddr::kPageBytes - 2, {0x11, 0x11, 0x11, 0x11}}},
      {{6 * Ddr::kPageBytes, {0x22}}},                 // past the image
      {{6 * Ddr::kPageBytes, {0}}},                    // a zero past the image: equal
      {{Ddr::kPageBytes + 5, {init[Ddr::kPageBytes + 5]}}},  // rewrites the image's byte: equal
      {{10, {1, 2, 3}}, {3 * Ddr::kPageBytes + 16, {9}}},
  };
  size_t unequal = 0;
  for (size_t x = 0; x < edits.size(); ++x) {
    for (size_t y = 0; y < edits.size(); ++y) {
      Ddr a = fresh(), b = fresh();
      for (const auto& [addr, bytes] : edits[x]) a.write(addr, bytes);
      for (const auto& [addr, bytes] : edits[y]) b.write(addr, bytes);
      const bundle::DdrDiff want = bundle::compare_images(a.image(), b.image()), got = compare_images(a, b);
      EXPECT_EQ(got.addr, want.addr) << x << ' ' << y;
      EXPECT_EQ(got.bytes, want.bytes) << x << ' ' << y;
      EXPECT_EQ(got.total_differing, want.total_differing) << x << ' ' << y;
      EXPECT_EQ(a.same_as(b), want.total_differing == 0) << x << ' ' << y;
      unequal += want.total_differing != 0;
    }
  }
  EXPECT_GT(unequal, 0u);  // the test can fail
  const std::vector<uint8_t> other(init.begin(), init.end() - 1);  // another image: compared as images
  Ddr a = fresh(), c(Bytes{1 << 20});
  c.load_image(other);
  EXPECT_EQ(a.same_as(c), bundle::compare_images(a.image(), c.image()).total_differing == 0);
  EXPECT_FALSE(a.same_as(c));  // the image's last byte is not zero
}

TEST(Memory, ScratchpadStartsZero) {
  const Sram sram(Bytes{1 << 20});
  const auto c = sram.contents();
  ASSERT_EQ(c.size(), size_t{1 << 20});
  EXPECT_TRUE(std::all_of(c.begin(), c.end(), [](uint8_t b) { return b == 0; }));
}

}  // namespace
}  // namespace npuforge::sim
