#pragma once
// A byte store (sim::Sram, sim::Ddr or the instruction ROM) as a TLM-2.0 loosely-timed target.
// Several initiators (the engines of the three queues) bind to one multi-socket; accesses are
// zero-time because the engines model the timing of the whole instruction.
#include <algorithm>
#include <cassert>
#include <cstdint>
#include <span>
#include <type_traits>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/multi_passthrough_target_socket.h>

#include "sim/memory.h"

namespace npuforge::sim::sc_model {

// The encoded program as a read-only store.
class Rom {
 public:
  explicit Rom(std::vector<uint8_t> bytes) : bytes_(std::move(bytes)) {}
  uint64_t size() const { return bytes_.size(); }
  std::span<const uint8_t> bytes() const { return bytes_; }
  void read(uint64_t addr, std::span<uint8_t> out) const {
    if (addr > bytes_.size() || out.size() > bytes_.size() - addr)
      throw AccessError(isa::Space::Ddr, addr, out.size(), bytes_.size());
    std::copy_n(bytes_.begin() + static_cast<std::ptrdiff_t>(addr), out.size(), out.begin());
  }
  void write(uint64_t addr, std::span<const uint8_t> in) {
    throw AccessError(isa::Space::Ddr, addr, in.size(), 0);  // read-only
  }

 private:
  std::vector<uint8_t> bytes_;
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
  // latency (the engines time whole instructions, as with b_transport), the ROM its bytes for
  // reads (the dispatcher still compares every fetched word with its own image of the
  // program, and the fetch-bit-flip plant flips the fetched copy). Both arrays are fixed for
  // the target's lifetime, so a grant never needs invalidating. DDR (pages allocated on first
  // write over a shared image) grants none: the initiator falls back to b_transport.
  bool get_direct_mem_ptr(int /*initiator*/, tlm::tlm_generic_payload& /*p*/, tlm::tlm_dmi& dmi) {
    dmi.set_start_address(0);
    if constexpr (std::is_same_v<Store, Sram> || std::is_same_v<Store, Rom>) {
      if (store_->size() > 0) {
        dmi.set_end_address(store_->size() - 1);
        dmi.set_read_latency(sc_core::SC_ZERO_TIME);
        dmi.set_write_latency(sc_core::SC_ZERO_TIME);
        if constexpr (std::is_same_v<Store, Sram>) {
          dmi.set_dmi_ptr(store_->view(0, store_->size()).data());
          dmi.allow_read_write();
        } else {
          // tlm_dmi holds a mutable pointer; reads only are allowed, and the initiator
          // (NpuTop::rom_direct) takes it as const.
          dmi.set_dmi_ptr(const_cast<uint8_t*>(store_->bytes().data()));
          dmi.allow_read();
        }
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
