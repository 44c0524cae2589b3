#pragma once
// A byte store (sim::Sram, sim::Ddr or the instruction ROM) as a TLM-2.0 loosely-timed target.
// Several initiators (the engines of the three queues) bind to one multi-socket; accesses are
// zero-time because the engines model the timing of the whole instruction.
#include <algorithm>
#include <array>
#include <cassert>
#include <cstdint>
#include <span>
#include <type_traits>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/multi_passthrough_target_socket.h>

#include "isa/instruction.h"
#include "sim/memory.h"

namespace npuforge::sim::sc_model {

// The encoded program as a read-only store. Its bytes are a function of the program (word i is
// isa::encode of instruction i), so they are encoded when read, word by word: the dispatcher
// fetches only the words it must look at (NpuTop::dispatch), and an image of every word was
// 3.2 MB to allocate, zero and encode per 100k instructions (4% of a TLM run) for bytes that
// are mostly never read.
class Rom {
 public:
  // `program` must outlive the store.
  Rom(const isa::Isa& isa, std::span<const isa::Instruction> program)
      : width_(isa.width_bytes()), program_(program) {}
  uint64_t size() const { return program_.size() * width_; }
  // Word i as encoded into `out` (width bytes).
  void word(size_t i, std::span<uint8_t> out) const { isa::encode(program_[i], out); }
  void read(uint64_t addr, std::span<uint8_t> out) const {
    if (addr > size() || out.size() > size() - addr) throw AccessError(isa::Space::Ddr, addr, out.size(), size());
    std::array<uint8_t, isa::kMaxWordBytes> buffer;
    const std::span<uint8_t> w(buffer.data(), width_);
    while (!out.empty()) {  // any range: a word's tail, whole words, a word's head
      const uint64_t offset = addr % width_;
      const size_t n = static_cast<size_t>(std::min<uint64_t>(out.size(), width_ - offset));
      word(static_cast<size_t>(addr / width_), w);
      std::copy_n(w.begin() + static_cast<std::ptrdiff_t>(offset), n, out.begin());
      out = out.subspan(n);
      addr += n;
    }
  }
  void write(uint64_t addr, std::span<const uint8_t> in) {
    throw AccessError(isa::Space::Ddr, addr, in.size(), 0);  // read-only
  }

 private:
  size_t width_;
  std::span<const isa::Instruction> program_;
};

// Contract (the engines rely on it): a read that succeeds fills every byte of the payload's
// data, whatever it held before; a read that fails throws (an address error) and its buffer is
// not used. So Engine::execute hands DDR, ROM and TLM-scratchpad reads an uncleared buffer
// (clearing one per operand was a memset per transaction, 10% of a TLM run). Debug builds
// check it on each target's first kReadsChecked reads: the read is repeated into buffers
// poisoned with other bytes and must agree (every read would triple the memory traffic of
// the sanitizer job, whose time CI counts).
// (The RTL scratchpad is not a MemTarget: a planted bug may leave bytes unwritten, so its
// reads are cleared first.)
template <class Store>
class MemTarget : public sc_core::sc_module {
 public:
  tlm_utils::multi_passthrough_target_socket<MemTarget> socket;

  MemTarget(sc_core::sc_module_name name, Store& store)
      : sc_core::sc_module(name), socket("socket"), store_(&store) {
    socket.register_b_transport(this, &MemTarget::b_transport);
    socket.register_get_direct_mem_ptr(this, &MemTarget::get_direct_mem_ptr);
  }

 private:
  // TLM-2.0 DMI: the scratchpad grants its whole byte array for reads and writes at zero
  // latency (the engines time whole instructions, as with b_transport). The array is fixed for
  // the target's lifetime, so a grant never needs invalidating. DDR (pages allocated on first
  // write over a shared image) and the ROM (encoded when read) grant none: the initiator falls
  // back to b_transport.
  bool get_direct_mem_ptr(int /*initiator*/, tlm::tlm_generic_payload& /*p*/, tlm::tlm_dmi& dmi) {
    dmi.set_start_address(0);
    if constexpr (std::is_same_v<Store, Sram>) {
      if (store_->size() > 0) {
        dmi.set_end_address(store_->size() - 1);
        dmi.set_read_latency(sc_core::SC_ZERO_TIME);
        dmi.set_write_latency(sc_core::SC_ZERO_TIME);
        dmi.set_dmi_ptr(store_->view(0, store_->size()).data());
        dmi.allow_read_write();
        return true;
      }
    }
    dmi.set_end_address(~sc_dt::uint64{0});  // no DMI anywhere (TLM-2.0: the whole range denied)
    dmi.allow_none();
    return false;
  }

  void b_transport(int /*initiator*/, tlm::tlm_generic_payload& p, sc_core::sc_time& /*delay*/) {
    std::span<uint8_t> data(p.get_data_ptr(), p.get_data_length());
    try {
      if (p.is_read()) {
        store_->read(p.get_address(), data);
#ifndef NDEBUG
        if (reads_checked_ < kReadsChecked) {
          ++reads_checked_;
          assert(fills_every_byte(p.get_address(), data));
        }
#endif
      } else
        store_->write(p.get_address(), data);
      p.set_response_status(tlm::TLM_OK_RESPONSE);
    } catch (const AccessError&) {
      p.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
    }
  }

#ifndef NDEBUG
  static constexpr uint64_t kReadsChecked = 4096;
  uint64_t reads_checked_ = 0;
  // Debug builds: the read again, into buffers poisoned with 0xa5 and 0x5a, gives `got`.
  bool fills_every_byte(uint64_t addr, std::span<const uint8_t> got) const {
    for (const uint8_t poison : {uint8_t{0xa5}, uint8_t{0x5a}}) {
      std::vector<uint8_t> again(got.size(), poison);
      store_->read(addr, again);
      if (!std::equal(again.begin(), again.end(), got.begin())) return false;
    }
    return true;
  }
#endif

  Store* store_;
};

}  // namespace npuforge::sim::sc_model
