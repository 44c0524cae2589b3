// One NPU config: configs/npu/default.yaml embedded in the binary is the only source of the
// defaults. NpuConfig{} is that file, field by field; a config file may leave fields out.
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include "isa/npu_config.h"
#include "util/error.h"

namespace npuforge::isa {
namespace {

const std::string kDefaultPath = std::string(NPUFORGE_SOURCE_DIR) + "/configs/npu/default.yaml";

std::string file_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(NpuConfigDefault, EmbeddedTextIsTheFile) {
  EXPECT_EQ(builtin_npu_yaml(), file_text(kDefaultPath)) << "rebuild: the embedded copy is stale";
}

// Read with yaml-cpp directly, not through the loader under test.
TEST(NpuConfigDefault, EqualsTheFileFieldByField) {
  const YAML::Node file = YAML::LoadFile(kDefaultPath);
  const NpuConfig builtin;
  std::set<std::string> table_keys;
  for (const NpuField& f : npu_config_fields()) {
    table_keys.emplace(f.key);
    const YAML::Node v = file[std::string(f.key)];
    ASSERT_TRUE(v) << "configs/npu/default.yaml has no '" << f.key << "'";
    EXPECT_EQ(f.get(builtin), v.as<uint64_t>()) << f.key;
  }
  std::set<std::string> file_keys;
  for (const auto& kv : file) file_keys.insert(kv.first.as<std::string>());
  EXPECT_EQ(file_keys, table_keys);
  EXPECT_EQ(table_keys.size(), 13u);  // every member of NpuConfig (npu_config.cc checks at compile time)
  EXPECT_EQ(NpuConfig::load_file(kDefaultPath), builtin);
}

// Each table row reads and writes its own member: changing one field through the table
// changes that field only, and operator== sees it.
TEST(NpuConfigDefault, EveryTableRowIsADistinctMember) {
  const NpuConfig base;
  const auto fields = npu_config_fields();
  for (size_t i = 0; i < fields.size(); ++i) {
    NpuConfig c = base;
    const uint64_t v = fields[i].get(c);
    fields[i].set(c, v == static_cast<uint64_t>(fields[i].min) ? v + 1 : v - 1);
    EXPECT_NE(c, base) << fields[i].key;
    for (size_t j = 0; j < fields.size(); ++j) {
      if (j == i) continue;
      EXPECT_EQ(fields[j].get(c), fields[j].get(base)) << fields[i].key << " changed " << fields[j].key;
    }
  }
}

TEST(NpuConfigFile, OmittedFieldsKeepTheBuiltinValues) {
  const NpuConfig builtin;
  EXPECT_EQ(NpuConfig::load_string("", "empty.yaml"), builtin);
  EXPECT_EQ(NpuConfig::load_string("# nothing\n", "comment.yaml"), builtin);
  const NpuConfig c = NpuConfig::load_string("sram_bytes: 1048576\nmac_rows: 32\n", "big.yaml");
  EXPECT_EQ(c.sram_bytes, Bytes{1048576});
  EXPECT_EQ(c.mac_rows, 32u);
  for (const NpuField& f : npu_config_fields()) {
    if (f.key == "sram_bytes" || f.key == "mac_rows") continue;
    EXPECT_EQ(f.get(c), f.get(builtin)) << f.key;
  }
}

TEST(NpuConfigFile, LoadNpuConfigUsesTheFileOrTheBuiltin) {
  const NpuConfigSource b = load_npu_config("");
  EXPECT_EQ(b.config, NpuConfig{});
  EXPECT_EQ(b.source, "configs/npu/default.yaml");
  EXPECT_EQ(b.text, builtin_npu_yaml());
  const NpuConfigSource f = load_npu_config(kDefaultPath);
  EXPECT_EQ(f.config, NpuConfig{});
  EXPECT_EQ(f.source, kDefaultPath);
  EXPECT_EQ(f.text, file_text(kDefaultPath));
  try {
    load_npu_config("/nonexistent/npu.yaml");
    ADD_FAILURE() << "no error for a missing file";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/npu.yaml"), std::string::npos) << e.what();
  }
}

TEST(NpuConfigFile, NotAMapIsAnError) {
  try {
    NpuConfig::load_string("- 1\n- 2\n", "list.yaml");
    ADD_FAILURE() << "no error for a list";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("list.yaml:1"), std::string::npos) << e.what();
  }
}


// The deadlock watchdog's window is validated like every field: too small (the watchdog would
// fire between two retirements of a healthy program) is an error naming the key and range.
TEST(NpuConfigFile, DeadlockCyclesIsLoadedAndValidated) {
  EXPECT_EQ(NpuConfig{}.deadlock_cycles, 100000u);
  EXPECT_EQ(NpuConfig::load_string("deadlock_cycles: 5000\n", "wd.yaml").deadlock_cycles, 5000u);
  for (const char* bad : {"deadlock_cycles: 3\n", "deadlock_cycles: 2000000000\n", "deadlock_cycles: -1\n"}) {
    try {
      NpuConfig::load_string(bad, "wd.yaml");
      ADD_FAILURE() << "no error for " << bad;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("deadlock_cycles"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("wd.yaml"), std::string::npos) << e.what();
    }
  }
}

// Bad bank geometries are errors naming the file, line and field, and the rule.
std::string geometry_error(const std::string& yaml) {
  try {
    NpuConfig::load_string(yaml, "geo.yaml");
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "no error for " << yaml;
  return {};
}

#define EXPECT_HAS(text, part) EXPECT_NE((text).find(part), std::string::npos) << (text)

TEST(NpuConfigGeometry, BanksAndBankWidthArePowersOfTwo) {
  EXPECT_HAS(geometry_error("sram_banks: 6\n"), "geo.yaml:1: 'sram_banks' = 6 must be a power of two");
  EXPECT_HAS(geometry_error("alignment: 64\nbank_width_bytes: 24\n"),
             "geo.yaml:2: 'bank_width_bytes' = 24 must be a power of two");
}

TEST(NpuConfigGeometry, SramIsWholeRowsAcrossAllBanks) {
  // 8 banks x 16 bytes from the built-in file: 1088 = 17 x 64 is aligned but 8.5 rows of 128.
  EXPECT_HAS(geometry_error("sram_bytes: 1088\n"),
             "geo.yaml:1: 'sram_bytes' = 1088 must be a multiple of sram_banks x bank_width_bytes (8 x 16 = 128)");
  // The rule holds across fields: more banks make the built-in 512 KiB too small a multiple.
  EXPECT_HAS(geometry_error("sram_bytes: 1024\nsram_banks: 64\nbank_width_bytes: 32\n"),
             "'sram_bytes' = 1024 must be a multiple of sram_banks x bank_width_bytes (64 x 32 = 2048)");
}

TEST(NpuConfigGeometry, GoodGeometriesOtherThanTheDefaultLoad) {
  const NpuConfig c = NpuConfig::load_string("sram_bytes: 65536\nsram_banks: 4\nbank_width_bytes: 64\n", "g.yaml");
  EXPECT_EQ(c.sram_banks, 4u);
  EXPECT_EQ(c.bank_width_bytes, 64u);
  EXPECT_EQ(NpuConfig::load_string("sram_banks: 1\nbank_width_bytes: 1\n", "g.yaml").sram_banks, 1u);
}

}  // namespace
}  // namespace npuforge::isa
