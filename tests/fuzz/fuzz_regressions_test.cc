// Every input a fuzzer once crashed on (tests/data/fuzz_regressions/<target>/) goes through
// the same entry point again: it must be accepted or rejected with an npuforge::Error, never
// crash, throw anything else, or break a round trip. Under the ASan/UBSan CI job this also
// catches memory errors the fix removed.
#include <algorithm>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "fuzz/fuzz_targets.h"
#include "util/error.h"
#include "util/file_io.h"

namespace npuforge::fuzz {
namespace {

namespace fs = std::filesystem;

fs::path regressions_dir() { return fs::path(NPUFORGE_SOURCE_DIR) / "tests" / "data" / "fuzz_regressions"; }

std::vector<fs::path> inputs_of(std::string_view target) {
  std::vector<fs::path> files;
  const fs::path dir = regressions_dir() / std::string(target);
  if (!fs::is_directory(dir)) return files;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_regular_file()) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  return files;
}

TEST(FuzzRegressions, EveryFolderNamesATarget) {
  for (const auto& e : fs::directory_iterator(regressions_dir())) {
    if (!e.is_directory()) continue;
    EXPECT_NE(find_target(e.path().filename().string()), nullptr)
        << e.path() << " is not the name of a fuzz target; its inputs would never be replayed";
  }
}

TEST(FuzzRegressions, SavedInputsNeitherCrashNorThrowOtherThanError) {
  size_t replayed = 0;
  for (const Target& target : targets()) {
    for (const fs::path& file : inputs_of(target.name)) {
      const auto bytes = util::read_binary_file(file, "fuzz regression input");
      SCOPED_TRACE(file.string());
      try {
        run_input(target, bytes);
      } catch (const std::exception& e) {
        ADD_FAILURE() << target.name << ": " << file.filename() << " threw " << e.what();
      }
      ++replayed;
    }
  }
  RecordProperty("replayed", static_cast<int>(replayed));
  EXPECT_GT(replayed, 0u) << "no regression inputs found under " << regressions_dir();
}

// Inputs that once crashed or were silently mangled must now be rejected with an Error that
// names the file (not just "not crash").
TEST(FuzzRegressions, FixedInputsAreRejectedWithAnError) {
  const std::vector<std::pair<std::string, std::string>> rejected = {
      {"asm", "equ-plus-offset-overflows.s"},          // was: signed overflow (UBSan)
      {"asm", "equ-wider-than-field.s"},               // was: address silently cut to 24 bits
      {"npu_config", "list-as-key.yaml"},              // was: YAML::TypedBadConversion escaped
      {"gen_profile", "map-as-key.yaml"},              // same, through util::reject_unknown_keys
      {"model_yaml", "attribute-key-is-a-list.yaml"},  // same, attribute names
      {"regress_list", "list-as-key.yaml"},            // same, list entry keys
      {"regress_list", "seeds-is-a-map.yaml"},         // same, 'seeds' value
      {"regress_list", "seeds-100M-out-of-memory.yaml"},  // was: 100 M jobs, out of memory
      {"plan_csv", "end-int64-max-overflows.csv"},     // was: signed overflow of end + 1 (UBSan)
      {"model_yaml", "constant-of-shape-40GB.yaml"},   // was: out of memory while folding
      {"model_yaml", "random-constant-40GB.yaml"},     // was: out of memory while importing
  };
  for (const auto& [target, name] : rejected) {
    const auto bytes = util::read_binary_file(regressions_dir() / target / name);
    try {
      find_target(target)->run(bytes);
      ADD_FAILURE() << target << "/" << name << " was accepted";
    } catch (const Error& e) {
      SCOPED_TRACE(e.what());
      EXPECT_TRUE(std::string_view(e.what()).find("fuzz") != std::string_view::npos)
          << target << "/" << name << ": the message does not name the file: " << e.what();
    }
  }
}

// The harness itself: an npuforge::Error is a rejection, every other exception escapes (so
// libFuzzer reports it and the test above fails on it).
void throws_error(std::span<const uint8_t>) { throw Error("bad input"); }
void throws_logic(std::span<const uint8_t>) { throw InvariantBroken("round trip differs"); }
void throws_std(std::span<const uint8_t>) { throw std::out_of_range("stoi"); }
void accepts(std::span<const uint8_t>) {}

TEST(FuzzHarness, OnlyNpuforgeErrorIsARejection) {
  EXPECT_TRUE(run_input(Target{"t", accepts}, {}));
  EXPECT_FALSE(run_input(Target{"t", throws_error}, {}));
  EXPECT_THROW(run_input(Target{"t", throws_logic}, {}), InvariantBroken);
  EXPECT_THROW(run_input(Target{"t", throws_std}, {}), std::out_of_range);
}

TEST(FuzzHarness, EveryTargetHasAUniqueName) {
  std::set<std::string_view> names;
  for (const Target& t : targets()) EXPECT_TRUE(names.insert(t.name).second) << t.name;
  EXPECT_EQ(names.size(), 13u);
}

// The entries reach the real parsers: a well-formed input of each kind is accepted and a
// truncated one rejected with an npuforge::Error.
TEST(FuzzHarness, EntriesAcceptGoodInputAndRejectBadInput) {
  const auto text = [](std::string_view s) {
    return std::vector<uint8_t>(s.begin(), s.end());
  };
  const fs::path src(NPUFORGE_SOURCE_DIR);
  EXPECT_TRUE(run_input(*find_target("asm"), util::read_binary_file(src / "configs/samples/conv_block.s")));
  EXPECT_FALSE(run_input(*find_target("asm"), text("gemm %out,")));
  EXPECT_TRUE(run_input(*find_target("disasm"), std::vector<uint8_t>(32, 0)));  // one nop
  EXPECT_FALSE(run_input(*find_target("disasm"), std::vector<uint8_t>(31, 0)));
  EXPECT_TRUE(run_input(*find_target("npu_config"), util::read_binary_file(src / "configs/npu/default.yaml")));
  EXPECT_FALSE(run_input(*find_target("npu_config"), text("sram_bytes: 1")));
  EXPECT_TRUE(run_input(*find_target("gen_profile"), util::read_binary_file(src / "configs/gen/default.yaml")));
  EXPECT_TRUE(run_input(*find_target("plan_csv"), text("id,lower,upper,size\nb0,0,2,8\nb1,1,3,8\n")));
  EXPECT_FALSE(run_input(*find_target("plan_csv"), text("id,lower\n")));
  EXPECT_TRUE(run_input(*find_target("regress_list"), util::read_binary_file(src / "configs/regress/smoke.yaml")));
  EXPECT_FALSE(run_input(*find_target("npy"), text("\x93NUMPY")));
  EXPECT_TRUE(run_input(*find_target("model_yaml"), util::read_binary_file(src / "configs/models/small_convnet.yaml")));
}

}  // namespace
}  // namespace npuforge::fuzz
