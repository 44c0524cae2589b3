// Byte-identical outputs: for seeds 1-100 of every shipped profile, the five files
// `npuforge gen` writes (.s .bin .hex .memmap.yaml .ddr.bin) hash to the digests in
// tests/data/gen_golden/<profile>.sha256, which `npuforge gen` + `sha256sum` produced
// (see the README there), both as strings and as the files write_outputs writes. A
// refactoring of the generator or of its writer must keep every byte.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "gen/generator.h"
#include "gen/output.h"
#include "isa/instruction.h"
#include "util/file_io.h"
#include "tests/gen/sha256.h"

namespace npuforge::gen {
namespace {

using npuforge::testing::sha256_hex;

const std::string kGoldenDir = std::string(NPUFORGE_SOURCE_DIR) + "/tests/data/gen_golden/";
constexpr uint64_t kSeeds = 100;

// The NPU the digests were made with: configs/npu/default.yaml when they were made, spelled
// out here so that later edits of that file or of NpuConfig's defaults leave the test valid.
// The outputs depend on the scratchpad size, the alignment, the DDR size and the header.
isa::NpuConfig golden_npu() {
  isa::NpuConfig npu;
  npu.sram_bytes = Bytes{524288};
  npu.alignment = Bytes{64};
  npu.ddr_bytes = Bytes{67108864};
  return npu;
}
constexpr const char* kNpuName = "default.yaml";
constexpr uint64_t kNpuHash = 0x399d97d1e3faeaecull;  // fnv1a64 of that file's text

// name -> digest, from `sha256sum` lines "<hex>  <name>".
std::map<std::string, std::string> load_digests(const std::string& path) {
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << "cannot read " << path;
  std::map<std::string, std::string> out;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream s(line);
    std::string hex, name;
    s >> hex >> name;
    if (!name.empty() && name[0] == '*') name.erase(0, 1);  // sha256sum's binary marker
    out[name] = hex;
  }
  return out;
}

// NPUFORGE_GOLDEN_DUMP=DIR keeps each differing output, to diff against `npuforge gen`'s.
void dump_for_diff(const std::string& name, const std::string& bytes) {
  const char* dir = std::getenv("NPUFORGE_GOLDEN_DUMP");
  if (dir == nullptr || *dir == '\0') return;
  std::ofstream(std::string(dir) + "/" + name, std::ios::binary) << bytes;
}

std::string as_text(const std::vector<uint8_t>& bytes) { return std::string(bytes.begin(), bytes.end()); }

TEST(GenGolden, Sha256KnownAnswers) {
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(sha256_hex(std::string(1000000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

class GoldenProfile : public ::testing::TestWithParam<const char*> {};

TEST_P(GoldenProfile, HundredSeedsByteIdentical) {
  const std::string name = GetParam();
  const Profile profile = Profile::load_file(std::string(NPUFORGE_SOURCE_DIR) + "/configs/gen/" + name + ".yaml");
  const std::map<std::string, std::string> golden = load_digests(kGoldenDir + name + ".sha256");
  ASSERT_EQ(golden.size(), 5 * kSeeds) << "digests in " << name << ".sha256";
  const isa::Isa& isa = isa::builtin_isa();
  size_t mismatches = 0;
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("npuforge_gen_golden_" + name + "_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  for (uint64_t seed = 1; seed <= kSeeds; ++seed) {
    GenOptions o;
    o.seed = seed;
    o.npu_source = kNpuName;
    o.npu_hash = kNpuHash;
    const GeneratedProgram g = generate(isa, golden_npu(), profile, o);
    const std::string prefix = name + "-" + std::to_string(seed);
    const std::pair<std::string, std::string> outputs[] = {
        {".s", to_assembly(g)},
        {".bin", as_text(isa::encode_program(isa, g.bundle.instrs))},
        {".hex", isa::to_readmemh(isa, g.bundle.instrs, g.header)},
        {".memmap.yaml", g.memmap().to_yaml()},
        {".ddr.bin", as_text(g.bundle.ddr_init)},
    };
    // And the files write_outputs (`npuforge gen`) writes through its buffered writer.
    write_outputs(isa, g, dir / prefix);
    for (const auto& [ext, bytes] : outputs) {
      const auto it = golden.find(prefix + ext);
      ASSERT_NE(it, golden.end()) << "no digest for " << prefix + ext;
      if (sha256_hex(bytes) != it->second) {
        if (++mismatches <= 10)
          ADD_FAILURE() << prefix + ext << " differs from the golden output (" << g.bundle.instrs.size()
                        << " instructions)";
        dump_for_diff(prefix + ext, bytes);
      }
      const std::string file = util::read_file(dir / (prefix + ext));
      if (sha256_hex(file) != it->second && ++mismatches <= 10)
        ADD_FAILURE() << "written " << prefix + ext << " differs from the golden output";
    }
  }
  std::filesystem::remove_all(dir);
  EXPECT_EQ(mismatches, 0u);
}

INSTANTIATE_TEST_SUITE_P(Gen, GoldenProfile,
                         ::testing::Values("default", "stress-fragment", "near-full", "tiny-buffers"),
                         [](const auto& info) {
                           std::string n = info.param;
                           for (char& c : n)
                             if (c == '-') c = '_';
                           return n;
                         });

}  // namespace
}  // namespace npuforge::gen
