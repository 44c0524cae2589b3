// Exit codes as the README states them: 0 success, 1 a finding or bad input, 2 a usage error.
// An input file that does not exist or cannot be read is bad input (exit 1, the file and the
// option named) for every subcommand that reads one; an unknown subcommand is a usage error
// that names the word and the subcommands close to it.
#include <gtest/gtest.h>

#include "tests/cli/cli_util.h"

namespace npuforge::cli_testing {
namespace {

const std::string kSource = NPUFORGE_SOURCE_DIR;
const std::string kProfile = kSource + "/configs/gen/default.yaml";

struct MissingInput {
  const char* name;  // the test's name
  std::string args;  // MISSING stands for a path that does not exist
  std::string option;
};

std::vector<MissingInput> missing_inputs() {
  return {
      {"asm", "asm MISSING -o OUT", "input"},
      {"disasm", "disasm MISSING", "input"},
      {"sim_program", "sim MISSING", "program"},
      {"sim_memmap", "sim " + kSource + "/configs/samples/conv_block.s --memmap MISSING", "--memmap"},
      {"gen_profile", "gen --profile MISSING.yaml --seed 1 -o OUT", "--profile"},
      {"gen_npu", "gen --profile " + kProfile + " --npu MISSING.yaml --seed 1 -o OUT", "--npu"},
      {"regress_profile", "regress --profile MISSING.yaml --seeds 1 --out OUT", "--profile"},
      {"regress_list", "regress MISSING.yaml --out OUT", "lists"},
      {"shrink", "shrink MISSING --memmap " + kProfile, "program"},
      {"cover", "cover MISSING", "inputs"},
      {"plan", "plan --algo best MISSING -o OUT", "input"},
      {"check_plan", "check-plan MISSING", "input"},
      {"isa", "isa --isa MISSING", "--isa"},
      {"demo", "demo --sample MISSING", "--sample"},
      {"run_model", "run-model MISSING --input x.npy", "model"},
      {"model_info", "model-info MISSING", "model"},
      {"compile", "compile MISSING -o OUT", "model"},
      {"npy", "npy MISSING -o OUT", "model"},
      {"kill_rate", "kill-rate MISSING.yaml", "list"},
  };
}

// gtest prints a failing case's parameter: the command, not the struct's bytes.
void PrintTo(const MissingInput& m, std::ostream* os) { *os << m.args; }

class MissingInputFile : public testing::TestWithParam<MissingInput> {};

TEST_P(MissingInputFile, ExitsOneNamingTheFileAndTheOption) {
  const ScratchDir d("exit_missing");
  std::string args = GetParam().args;
  const std::string missing = d.path("no_such_file");
  for (size_t at; (at = args.find("MISSING")) != std::string::npos;) args.replace(at, 7, missing);
  for (size_t at; (at = args.find("OUT")) != std::string::npos;) args.replace(at, 3, d.path("out"));
  const CliRun r = run_cli(args);
  EXPECT_EQ(r.code, 1) << args << "\n" << r.out;
  EXPECT_NE(r.out.find(missing), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("no such file"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("(" + GetParam().option + ")"), std::string::npos) << r.out;
}

INSTANTIATE_TEST_SUITE_P(EverySubcommand, MissingInputFile, testing::ValuesIn(missing_inputs()),
                         [](const testing::TestParamInfo<MissingInput>& info) { return std::string(info.param.name); });

TEST(ExitCodes, MergeOfAMissingShardExitsOneNamingIt) {
  const ScratchDir d("exit_merge");
  const CliRun r = run_cli("merge " + d.path("shard-1") + " --out " + d.path("merged"));
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find(d.path("shard-1")), std::string::npos) << r.out;
}

TEST(ExitCodes, ADirectoryForAFileIsBadInput) {
  const ScratchDir d("exit_dir");
  const CliRun r = run_cli("disasm " + d.dir.string());
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("is a directory, not a file"), std::string::npos) << r.out;
}

TEST(ExitCodes, AMissingArgumentIsAUsageError) {
  const CliRun r = run_cli("disasm");
  EXPECT_EQ(r.code, 2) << r.out;
}

TEST(UnknownSubcommand, NamesTheWordAndTheCloseSubcommands) {
  const CliRun r = run_cli("regres --seeds 1");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("'regres' is not a subcommand; did you mean 'regress'?"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("regress-worker"), std::string::npos) << "hidden subcommands are not suggested: " << r.out;
  EXPECT_EQ(r.out.find("A subcommand is required"), std::string::npos) << r.out;
}

TEST(UnknownSubcommand, WithNothingCloseListsThemAll) {
  const CliRun r = run_cli("frobnicate");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("'frobnicate' is not a subcommand; the subcommands are"), std::string::npos) << r.out;
  for (const char* sub : {"gen", "sim", "regress", "cover", "run-model", "npy"})
    EXPECT_NE(r.out.find(std::string(" ") + sub), std::string::npos) << sub << " not listed: " << r.out;
}

}  // namespace
}  // namespace npuforge::cli_testing
