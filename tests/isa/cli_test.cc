// The npuforge binary: exit codes (0 ok, 1 finding or bad input, 2 usage) and messages.
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include <sys/wait.h>

#include <gtest/gtest.h>

namespace {

struct Result {
  int code;
  std::string output;
};

// Runs npuforge with `args`, in `cwd` when given.
Result run(const std::string& args, const std::filesystem::path& cwd = {}) {
  const std::string cd = cwd.empty() ? "" : "cd '" + cwd.string() + "' && ";
  const std::string cmd = cd + std::string(NPUFORGE_CLI) + " " + args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  std::string out;
  std::array<char, 4096> buf;
  while (size_t n = fread(buf.data(), 1, buf.size(), p)) out.append(buf.data(), n);
  const int status = pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

std::filesystem::path temp_file(const std::string& name, const std::string& content) {
  const auto dir = std::filesystem::temp_directory_path() / ("npuforge_cli_test_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const auto p = dir / name;
  std::ofstream(p, std::ios::binary) << content;
  return p;
}

TEST(Cli, AsmDisasmRoundTripThroughFiles) {
  const auto src = temp_file("ok.s", "start: load 0x40, ddr:0x1000, rows=4, row_bytes=256, stride=256\nhalt\n");
  const auto bin = src.parent_path() / "ok.bin";
  const auto hex = src.parent_path() / "ok.hex";
  auto r = run("asm " + src.string() + " -o " + bin.string() + " --hex " + hex.string());
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_EQ(std::filesystem::file_size(bin), 64u);
  r = run("disasm " + bin.string());
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_EQ(r.output, "load 0x40, ddr:0x1000, rows=4, row_bytes=256, stride=256\nhalt\n");
}

TEST(Cli, AsmPlacesSymbolsWithTheAllocator) {
  const auto src = temp_file("syms.s",
                             "load %x, ddr:0x0, rows=1, row_bytes=100, signal=compute\n"
                             "eltwise %y, %x, len=100, op=relu, wait=load\n"
                             "move %z, %y, len=100\n"
                             "halt\n");
  const auto bin = src.parent_path() / "syms.bin";
  const auto map = src.parent_path() / "syms.memmap.yaml";
  auto r = run("asm " + src.string() + " -o " + bin.string() + " --memmap " + map.string() + " --npu " +
               NPUFORGE_SOURCE_DIR + "/configs/npu/default.yaml");
  ASSERT_EQ(r.code, 0) << r.output;
  r = run("disasm " + bin.string());
  // x dies after the eltwise, so z reuses its bytes (first-fit, 64-byte units: x 0x0, y 0x80).
  EXPECT_EQ(r.output,
            "load 0x0, ddr:0x0, rows=1, row_bytes=100, signal=compute\n"
            "eltwise 0x80, 0x0, len=100, op=relu, wait=load\n"
            "move 0x0, 0x80, len=100\n"
            "halt\n");
  EXPECT_TRUE(std::filesystem::exists(map));
}

TEST(Cli, BadInputExitsOne) {
  auto r = run("asm " + temp_file("bad.s", "nop\nfoo 1\n").string() + " -o /dev/null");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.output.find("bad.s:2:1: unknown mnemonic 'foo'"), std::string::npos) << r.output;
  r = run("disasm " + temp_file("t.bin", std::string(33, '\0')).string());
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.output.find("truncated binary"), std::string::npos) << r.output;
  r = run("asm " + temp_file("sym.s", "move 0x0, %a, len=4\n").string() + " -o /dev/null --npu " +
          NPUFORGE_SOURCE_DIR + "/configs/npu/default.yaml");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.output.find("instruction 0 (line 1): symbol '%a' is read before any instruction writes it"),
            std::string::npos)
      << r.output;
  r = run("isa --isa " + temp_file("isa.yaml", "name: [\n").string());
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.output.find("isa.yaml:"), std::string::npos) << r.output;
}

TEST(Cli, UsageErrorsExitTwoAndHelpExitsZero) {
  EXPECT_EQ(run("").code, 2);
  EXPECT_EQ(run("no-such-command").code, 2);
  EXPECT_EQ(run("asm").code, 2);  // missing input and -o
  EXPECT_EQ(run("--help").code, 0);
  EXPECT_EQ(run("asm --help").code, 0);
  EXPECT_EQ(run("disasm --help").code, 0);
  EXPECT_EQ(run("isa --help").code, 0);
}

TEST(Cli, IsaMarkdownAndDemo) {
  auto r = run("isa --markdown");
  ASSERT_EQ(r.code, 0);
  EXPECT_NE(r.output.find("## `gemm`"), std::string::npos);
  r = run(std::string("demo --sample ") + NPUFORGE_SOURCE_DIR + "/configs/samples/conv_block.s");
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("round trip exact"), std::string::npos) << r.output;
}

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

const std::string kSrc = NPUFORGE_SOURCE_DIR;

// Without --npu every subcommand uses the built-in configs/npu/default.yaml, whatever the
// working directory: the same bytes as naming the file.
TEST(Cli, BuiltinNpuConfigIsTheDefaultFromAnyDirectory) {
  const auto src = temp_file("nonpu.s", "load %x, ddr:0x0, rows=1, row_bytes=100\nmove %y, %x, len=100\nhalt\n");
  const auto dir = src.parent_path();
  auto r = run("asm " + src.string() + " -o " + (dir / "a.bin").string() + " --memmap " + (dir / "a.memmap.yaml").string(),
               "/");
  ASSERT_EQ(r.code, 0) << r.output;
  r = run("asm " + src.string() + " -o " + (dir / "b.bin").string() + " --memmap " + (dir / "b.memmap.yaml").string() +
          " --npu " + kSrc + "/configs/npu/default.yaml");
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_EQ(slurp(dir / "a.bin"), slurp(dir / "b.bin"));

  const std::string gen = "gen --profile " + kSrc + "/configs/gen/default.yaml --seed 5 --length 60 -o ";
  r = run(gen + (dir / "g1").string(), "/");
  ASSERT_EQ(r.code, 0) << r.output;
  r = run(gen + (dir / "g2").string() + " --npu " + kSrc + "/configs/npu/default.yaml");
  ASSERT_EQ(r.code, 0) << r.output;
  for (const char* ext : {".bin", ".s", ".memmap.yaml", ".ddr.bin"})
    EXPECT_EQ(slurp(dir / ("g1" + std::string(ext))), slurp(dir / ("g2" + std::string(ext)))) << ext;
  r = run("sim " + (dir / "g1.bin").string() + " --memmap " + (dir / "g1.memmap.yaml").string() + " --ddr " +
              (dir / "g1.ddr.bin").string() + " --backend sequential",
          "/");
  EXPECT_EQ(r.code, 0) << r.output;
}

// The memory map must be for this NPU's allocation unit as well as its SRAM size.
TEST(Cli, SimRefusesAMemoryMapMadeForAnotherAlignment) {
  const auto dir = temp_file("npu128.yaml", "alignment: 128\n").parent_path();
  auto r = run("gen --profile " + kSrc + "/configs/gen/default.yaml --seed 2 --length 60 -o " + (dir / "al").string());
  ASSERT_EQ(r.code, 0) << r.output;
  const std::string sim = "sim " + (dir / "al.bin").string() + " --memmap " + (dir / "al.memmap.yaml").string() +
                          " --ddr " + (dir / "al.ddr.bin").string() + " --backend sequential";
  r = run(sim + " --npu " + (dir / "npu128.yaml").string());
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_NE(r.output.find("memory map is for alignment 64, the NPU config has 128"), std::string::npos) << r.output;
  r = run(sim);
  EXPECT_EQ(r.code, 0) << r.output;
}

// gen --check runs the static checks; a planted allocator bug makes it exit 1 naming it.
TEST(Cli, GenCheckReportsFindingsAndExitsOne) {
  const auto dir = temp_file("unused", "").parent_path();
  const std::string gen = "gen --profile " + kSrc + "/configs/gen/default.yaml --seed 11 --length 200 --check -o ";
  auto r = run(gen + (dir / "clean").string());
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("check: ok (200 instructions"), std::string::npos) << r.output;
  r = run(gen + (dir / "clean128").string() + " --npu " + temp_file("a128.yaml", "alignment: 128\n").string());
  ASSERT_EQ(r.code, 0) << r.output;
  r = run(gen + (dir / "planted").string() + " --plant gen-overlap-live");
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_NE(r.output.find("check: memory map: overlap"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("check: ok"), std::string::npos) << r.output;
  // Without --check the same planted program is written and gen exits 0.
  r = run("gen --profile " + kSrc + "/configs/gen/default.yaml --seed 11 --length 200 --plant gen-overlap-live -o " +
          (dir / "unchecked").string());
  EXPECT_EQ(r.code, 0) << r.output;
}

// The extra-instruction ISA through the command line: asm and disasm with --isa.
TEST(Cli, AsmAndDisasmTheExtraIsa) {
  const std::string isa = " --isa " + kSrc + "/tests/data/isa_extra.yaml";
  const auto src = temp_file("extra.s", "move2 0x100, 0x40, len=64, signal=store\nhalt\n");
  const auto bin = src.parent_path() / "extra.bin";
  auto r = run("asm " + src.string() + " -o " + bin.string() + isa);
  ASSERT_EQ(r.code, 0) << r.output;
  r = run("disasm " + bin.string() + isa);
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_EQ(r.output, "move2 0x100, 0x40, len=64, signal=store\nhalt\n");
  r = run("disasm " + bin.string());
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_NE(r.output.find("unknown opcode 0x16"), std::string::npos) << r.output;
}

}  // namespace
