// `npuforge sim` end to end: files in, PASS/FAIL and the exit code out.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "bundle/ddr_image.h"
#include "bundle/files.h"
#include "sim/golden.h"
#include "sim_test_util.h"

namespace npuforge::sim {
namespace {

namespace fs = std::filesystem;
using testing::gemm_buffers;
using testing::gemm_program;
using testing::make_program;

struct CliRun {
  int code = -1;
  std::string out;
};

CliRun run_cli(const std::string& args) {
  const std::string cmd = std::string(NPUFORGE_CLI) + " " + args + " 2>&1";
  CliRun r;
  FILE* pipe = ::popen(cmd.c_str(), "r");
  if (!pipe) return r;
  char buf[4096];
  while (size_t n = std::fread(buf, 1, sizeof buf, pipe)) r.out.append(buf, n);
  const int status = ::pclose(pipe);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

struct Files {
  Files() : dir(fs::temp_directory_path() / ("npuforge_cli_sim_" + std::to_string(::getpid()))) {
    fs::create_directories(dir);
  }
  ~Files() { fs::remove_all(dir); }
  // Writes the program's bundle (<name>.bin, .memmap.yaml, .ddr.bin, ...); returns the sim arguments.
  std::string write(const std::string& name, const bundle::Program& p) const {
    bundle::write_bundle(dir / name, p, {});
    const std::string base = (dir / name).string();
    return "sim " + base + ".bin --memmap " + base + ".memmap.yaml --ddr " + base + ".ddr.bin --backend sequential";
  }
  // The same, for the default (SystemC) backend.
  std::string write_systemc(const std::string& name, const bundle::Program& p) const {
    const std::string args = write(name, p);
    return args.substr(0, args.rfind(" --backend"));
  }
  fs::path dir;
};

TEST(CliSim, CleanProgramPassesAndWritesDdr) {
  Files files;
  const bundle::Program p = make_program(gemm_program(), gemm_buffers());
  const std::string out_ddr = (files.dir / "out.ddr.bin").string();
  const CliRun r = run_cli(files.write("clean", p) + " --out-ddr " + out_ddr);
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(r.out.rfind("PASS clean: 5 of 5 instructions, 186 cycles", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("load     busy        108 cycles   58.1%"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("no findings"), std::string::npos) << r.out;
  const Semantics sem(*p.isa);
  EXPECT_EQ(bundle::compare_images(run_golden(p, sem).ddr, bundle::read_ddr_image(out_ddr)).total_differing, 0u);
  // The same program against its own output as --expect-ddr still passes.
  EXPECT_EQ(run_cli(files.write("clean", p) + " --expect-ddr " + out_ddr).code, 0);
}

TEST(CliSim, FindingsFailWithExitOneAndMaxErrors) {
  Files files;
  auto buffers = gemm_buffers();
  buffers[1].offset = SramAddr{0x40};  // overlaps a by one alignment unit
  const bundle::Program p = make_program(gemm_program(0, 0x40, 0x100, "wait=load", "wait=none"), buffers);
  const CliRun r = run_cli(files.write("bad", p) + " --max-errors 1");
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_EQ(r.out.rfind("FAIL bad:", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("live-overlap 1"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("raise --max-errors"), std::string::npos) << r.out;
}

TEST(CliSim, BadInputIsAnErrorNamingTheFile) {
  Files files;
  std::ofstream(files.dir / "odd.bin", std::ios::binary) << "abc";
  const CliRun r = run_cli("sim " + (files.dir / "odd.bin").string() + " --backend sequential");
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("odd.bin"), std::string::npos) << r.out;
  EXPECT_EQ(run_cli("sim").code, 2);  // usage error
}

// A DDR image shorter than the DDR tensors the memory map says the program finds there (here
// its input, the 256 bytes both loads read) would run on zeros, which the golden model agrees
// with: a PASS that checked nothing. Empty or cut, it is bad input naming the file, its size
// and what the map needs; whole, the same program passes.
TEST(CliSim, ADdrImageShorterThanTheMapsInputsIsBadInput) {
  Files files;
  bundle::Program p = make_program(gemm_program(), gemm_buffers());
  bundle::MemDdrBuffer input;
  input.name = "x";
  input.region = "input";
  input.offset = DdrAddr{0};
  input.size = Bytes{0x100};
  input.last = 1;
  input.readers = {0, 1};
  p.memmap->ddr_buffers.push_back(input);
  const std::string args = files.write("in", p);
  EXPECT_EQ(run_cli(args).code, 0) << run_cli(args).out;
  const fs::path image = files.dir / "in.ddr.bin";
  for (const uint64_t size : {uint64_t{0}, uint64_t{0xff}}) {
    fs::resize_file(image, size);
    const CliRun r = run_cli(args);
    EXPECT_EQ(r.code, 1) << r.out;
    EXPECT_NE(r.out.find(fmt::format("{}: DDR image of {} bytes is shorter than the memory map {} needs: input tensor "
                                     "'x' [0x0, 0x100): 256 bytes",
                                     image.string(), size, (files.dir / "in.memmap.yaml").string())),
              std::string::npos)
        << r.out;
    EXPECT_EQ(r.out.find("PASS"), std::string::npos) << r.out;
  }
  // Without --ddr there is no image at all: the same error, naming the program.
  const CliRun none = run_cli(args.substr(0, args.find(" --ddr")) + " --backend sequential");
  EXPECT_EQ(none.code, 1) << none.out;
  EXPECT_NE(none.out.find("in.bin: no DDR image given, but the memory map"), std::string::npos) << none.out;
}


// A queue waiting for a token nobody sends, with the RTL clock running: the model's watchdog
// (deadlock_cycles of the NPU config) ends the run with a `deadlock` finding and exit 1.

// A queue waiting for a token nobody sends, with the RTL clock running: the model's watchdog
// (deadlock_cycles of the NPU config) ends the run with a `deadlock` finding and exit 1.
TEST(CliSim, RtlDeadlockIsAFindingAndExitsOne) {
  Files files;
  const bundle::Program p =
      make_program(gemm_program(0x000, 0x080, 0x100, "wait=load, signal=store", "wait=compute", "signal=none"),
                   gemm_buffers());
  const CliRun r = run_cli(files.write_systemc("stuck", p) + " --rtl");
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_EQ(r.out.rfind("FAIL stuck:", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("run stopped early (deadlock)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("watchdog: no instruction retired for 100000 cycles"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("#2 gemm waits for a token from load"), std::string::npos) << r.out;
}

// The Verilated scratchpad's geometry is fixed when rtl_stubs/ is built (8 banks of 16
// bytes, at most 512 KiB). `sim --rtl` on an NPU config with another geometry is an error
// naming both geometries, never a run on the wrong banks; the same config runs in TLM.
// --rtl takes the NPU config's bank geometry (the Verilated scratchpad loads it into its
// configuration register at reset), not only the default 8 x 16 B.
TEST(CliSim, RtlRunsANonDefaultNpuGeometryAndRefusesABadOne) {
  Files files;
  const bundle::Program p = make_program(gemm_program(), gemm_buffers());
  const std::string args = files.write_systemc("geo", p);
  const fs::path npu = files.dir / "four_banks.yaml";
  std::ofstream(npu) << "sram_banks: 4\nbank_width_bytes: 32\n";
  const CliRun tlm = run_cli(args + " --npu " + npu.string());
  EXPECT_EQ(tlm.code, 0) << tlm.out;
  const CliRun rtl = run_cli(args + " --rtl --npu " + npu.string());
  EXPECT_EQ(rtl.code, 0) << rtl.out;
  EXPECT_NE(rtl.out.find("PASS"), std::string::npos) << rtl.out;
  // A geometry no NPU has is refused when the config loads, naming the file and field.
  const fs::path bad = files.dir / "six_banks.yaml";
  std::ofstream(bad) << "sram_banks: 6\n";
  const CliRun b = run_cli(args + " --rtl --npu " + bad.string());
  EXPECT_EQ(b.code, 1) << b.out;
  EXPECT_NE(b.out.find("six_banks.yaml:1: 'sram_banks' = 6 must be a power of two"), std::string::npos) << b.out;
}

// --rtl-variant names an RTL plant of the catalogue (util/plant.h) and implies --rtl: the
// planted MAC runs (the GEMM's result differs from the golden model's), anything but an RTL
// plant's name is refused listing them, and it does not combine with --plant.
TEST(CliSim, RtlVariantIsAnRtlPlantOfTheCatalogue) {
  Files files;
  const bundle::Program p = make_program(gemm_program(), gemm_buffers());
  const std::string args = files.write_systemc("variant", p);
  const CliRun planted = run_cli(args + " --rtl-variant rtl-mac-sign");
  EXPECT_EQ(planted.code, 1) << planted.out;
  EXPECT_EQ(planted.out.rfind("FAIL variant:", 0), 0u) << planted.out;
  EXPECT_NE(planted.out.find("ddr-mismatch"), std::string::npos) << planted.out;
  const CliRun old = run_cli(args + " --rtl-variant rtl_mac_sign");
  EXPECT_EQ(old.code, 1) << old.out;
  EXPECT_NE(old.out.find("'rtl_mac_sign' is not an RTL plant (valid: none, rtl-decoder-field-bit"), std::string::npos)
      << old.out;
  const CliRun model = run_cli(args + " --rtl-variant model-store-short");
  EXPECT_EQ(model.code, 1) << model.out;
  EXPECT_NE(model.out.find("is not an RTL plant"), std::string::npos) << model.out;
  const CliRun both = run_cli(args + " --rtl-variant rtl-mac-sign --plant model-store-short");
  EXPECT_EQ(both.code, 1) << both.out;
  EXPECT_NE(both.out.find("--rtl-variant and --plant"), std::string::npos) << both.out;
}

}  // namespace
}  // namespace npuforge::sim
