// Limits and a full disk, met by the command line as a user meets them: a clear error and exit 1
// before any work (memory) or at the failing write (disk), never a crash or a short file.
#include <gtest/gtest.h>

#include "tests/cli/cli_util.h"

namespace npuforge::cli_testing {
namespace {

const std::string kProfile = std::string(NPUFORGE_SOURCE_DIR) + "/configs/gen/default.yaml";

TEST(CliLimits, GenRefusesAProgramOverTheMemoryLimitBeforeStarting) {
  const ScratchDir d("limits_mem");
  const CliRun r = run_cli("gen --profile " + kProfile + " --seed 1 --length 100000000 --max-memory 2GB -o " +
                           d.path("p"));
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("100000000 instructions need about"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("limit of 2048 MiB"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(d.path("p.s"))) << "nothing is written when the limit refuses";
  const CliRun ok = run_cli("gen --profile " + kProfile + " --seed 1 --length 500 --max-memory 2GB -o " + d.path("p"));
  EXPECT_EQ(ok.code, 0) << ok.out;
}

TEST(CliLimits, GenOnAFullDiskExitsOneNamingTheFile) {
  if (!fs::exists("/dev/full")) GTEST_SKIP() << "no /dev/full on this system";
  const ScratchDir d("limits_disk");
  // gen writes p.s as p.s.tmp and renames it: every write to the temporary fails with ENOSPC.
  fs::create_symlink("/dev/full", d.path("p.s.tmp"));
  const CliRun r = run_cli("gen --profile " + kProfile + " --seed 1 --length 50 -o " + d.path("p"));
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find(d.path("p.s.tmp") + ": cannot write"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("No space left on device"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(fs::symlink_status(d.path("p.s.tmp")))) << "a temporary left behind";
  EXPECT_FALSE(fs::exists(d.path("p.s"))) << "a partial output left behind";
}

}  // namespace
}  // namespace npuforge::cli_testing
