// An NPU testbench of its own, checked by npuforge: a SystemC top with this testbench's
// scratchpad (a TLM-2.0 target, optionally with a write-address bit stuck at 0: a planted RTL
// bug) and a simple in-order executor that runs a generated program through it. npuforge
// supplies the program (gen), the reference semantics of each instruction, the checkers
// (shadow memory, live-buffer overlap, token hazards) and the golden model's DDR image.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include "bundle/program.h"
#include "gen/generator.h"
#include "gen/profile.h"
#include "sim/checkers.h"
#include "sim/golden.h"
#include "sim/memory.h"
#include "sim/semantics.h"

namespace {

using namespace npuforge;

// The testbench's own scratchpad: a byte array behind a blocking TLM target.
struct Scratchpad : sc_core::sc_module {
  tlm_utils::simple_target_socket<Scratchpad> socket{"socket"};
  std::vector<uint8_t> bytes;
  int stuck_bit;  // write-address bit forced to 0 (-1: none)

  Scratchpad(sc_core::sc_module_name name, uint64_t size, int stuck)
      : sc_module(name), bytes(size, 0), stuck_bit(stuck) {
    socket.register_b_transport(this, &Scratchpad::b_transport);
  }
  void b_transport(tlm::tlm_generic_payload& p, sc_core::sc_time& delay) {
    const uint64_t addr = p.get_address(), n = p.get_data_length();
    if (addr + n > bytes.size()) {
      p.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
      return;
    }
    for (uint64_t i = 0; i < n; ++i) {
      uint64_t a = addr + i;
      if (p.is_write()) {
        if (stuck_bit >= 0) a &= ~(uint64_t{1} << stuck_bit);
        bytes[a] = p.get_data_ptr()[i];
      } else {
        p.get_data_ptr()[i] = bytes[a];
      }
    }
    delay += sc_core::sc_time(static_cast<double>((n + 63) / 64), sc_core::SC_NS);
    p.set_response_status(tlm::TLM_OK_RESPONSE);
  }
};

// Runs the program in order: operands fetched over TLM (SRAM) or from DDR, computed with
// npuforge's reference semantics, written back; the checkers see every access.
struct Executor : sc_core::sc_module {
  tlm_utils::simple_initiator_socket<Executor> sram{"sram"};
  const bundle::Program& program;
  const sim::Semantics& sem;
  sim::Checkers& checkers;
  sim::Ddr ddr;
  SC_HAS_PROCESS(Executor);
  Executor(sc_core::sc_module_name name, const bundle::Program& p, const sim::Semantics& s, sim::Checkers& c)
      : sc_module(name), program(p), sem(s), checkers(c), ddr(p.config.ddr_bytes) {
    ddr.load_image(p.ddr_init);
    SC_THREAD(run);
  }

  void transfer(tlm::tlm_command cmd, uint64_t addr, std::vector<uint8_t>& data) {
    tlm::tlm_generic_payload p;
    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
    p.set_command(cmd);
    p.set_address(addr);
    p.set_data_ptr(data.data());
    p.set_data_length(static_cast<unsigned>(data.size()));
    p.set_streaming_width(static_cast<unsigned>(data.size()));
    sram->b_transport(p, delay);
    if (p.is_response_error()) SC_REPORT_ERROR("executor", "scratchpad access out of range");
    wait(delay);
  }
  std::vector<uint8_t> fetch(const isa::Extent& e) {
    std::vector<uint8_t> data(e.bytes);
    if (e.space == isa::Space::Sram) transfer(tlm::TLM_READ_COMMAND, e.addr, data);
    else ddr.read(e.addr, data);
    return data;
  }

  void run() {
    for (size_t i = 0; i < program.instrs.size(); ++i) {
      const isa::Instruction& instr = program.instrs[i];
      const uint64_t now = static_cast<uint64_t>(sc_core::sc_time_stamp().to_seconds() * 1e9);
      checkers.on_start(i, now);
      const isa::ExtentList ext = isa::extents(instr);
      std::vector<std::vector<uint8_t>> inputs(ext.count);
      sim::OperandBuffers buffers;
      std::vector<uint8_t> out;
      const auto w = sem.write_operand(instr);
      for (unsigned k = 0; k < ext.count; ++k) {
        const isa::Extent& e = ext.items[k];
        if (e.bytes == 0) continue;
        if (w && *w == k) {
          out = fetch(e);  // pre-filled: a strided STORE leaves the gaps as they were
        } else {
          inputs[k] = fetch(e);
          buffers.in[k] = inputs[k];
        }
      }
      buffers.out = out;
      sem.compute(instr, buffers);
      if (w && ext.items[*w].bytes > 0) {
        const isa::Extent& e = ext.items[*w];
        if (e.space == isa::Space::Sram) transfer(tlm::TLM_WRITE_COMMAND, e.addr, out);
        else ddr.write(e.addr, out);
      }
      checkers.on_accesses(i);
      wait(sc_core::sc_time(1, sc_core::SC_NS));
      checkers.on_finish(i, now + 1);
      if (instr.spec->mnemonic == "halt") break;
    }
    checkers.on_end();
  }
};

}  // namespace

int sc_main(int argc, char* argv[]) {
  uint64_t seed = 1;
  int stuck_bit = -1;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--seed")) seed = std::strtoull(argv[i + 1], nullptr, 10);
    else if (!std::strcmp(argv[i], "--stuck-bit")) stuck_bit = std::atoi(argv[i + 1]);
    else {
      std::fprintf(stderr, "usage: %s [--seed N] [--stuck-bit B]\n", argv[0]);
      return 2;
    }
  }
  try {
    const isa::Isa& isa = isa::builtin_isa();
    const isa::NpuConfig npu;
    gen::GenOptions opt;
    opt.seed = seed;
    opt.length = 300;
    gen::GeneratedProgram g = gen::generate(isa, npu, gen::Profile::load_file(NPUFORGE_PROFILE), opt);
    g.bundle.name = "seed " + std::to_string(seed);
    const bundle::Program& program = g.with_memmap();  // what npuforge's simulator takes
    const sim::Semantics sem(isa);
    sim::Checkers checkers(program, sem);

    Scratchpad spad("scratchpad", npu.sram_bytes.value, stuck_bit);
    Executor exec("executor", program, sem, checkers);
    exec.sram.bind(spad.socket);
    sc_core::sc_start();

    // The run's final DDR against npuforge's golden model.
    const sim::GoldenResult golden = sim::run_golden(program, sem);
    sim::check_ddr(program, sem, golden.ddr, exec.ddr.image(), "golden", checkers);
    std::printf("external testbench: seed %llu, %zu instructions, %zu buffers, scratchpad %s\n",
                static_cast<unsigned long long>(seed), program.instrs.size(), program.memmap->buffers.size(),
                stuck_bit < 0 ? "clean" : ("write-address bit " + std::to_string(stuck_bit) + " stuck at 0").c_str());
    std::printf("%s", checkers.summary().c_str());
    std::printf("%s\n", checkers.clean() ? "PASS" : "FAIL");
    return checkers.clean() ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "external testbench: %s\n", e.what());
    return 2;
  }
}
