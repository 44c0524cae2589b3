#pragma once
// A byte store (sim::Sram, sim::Ddr or the instruction ROM) as a TLM-2.0 loosely-timed target.
// Several initiators (the engines of the three queues) bind to one multi-socket; accesses are
// zero-time because the engines model the timing of the whole instruction.
#include <cstdint>
#include <span>
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

template <class Store>
class MemTarget : public sc_core::sc_module {
 public:
  tlm_utils::multi_passthrough_target_socket<MemTarget> socket;

  MemTarget(sc_core::sc_module_name name, Store& store)
      : sc_core::sc_module(name), socket("socket"), store_(&store) {
    socket.register_b_transport(this, &MemTarget::b_transport);
  }

 private:
  void b_transport(int /*initiator*/, tlm::tlm_generic_payload& p, sc_core::sc_time& /*delay*/) {
    std::span<uint8_t> data(p.get_data_ptr(), p.get_data_length());
    try {
      if (p.is_read())
        store_->read(p.get_address(), data);
      else
        store_->write(p.get_address(), data);
      p.set_response_status(tlm::TLM_OK_RESPONSE);
    } catch (const AccessError&) {
      p.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
    }
  }

  Store* store_;
};

}  // namespace npuforge::sim::sc_model
