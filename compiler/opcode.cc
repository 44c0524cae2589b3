#include "compiler/opcode.h"

#include <fmt/core.h>

#include "util/error.h"

namespace npuforge::compiler {

uint32_t OpCode::buffer(std::string name, uint64_t bytes) {
  if (bytes == 0) throw Error(fmt::format("internal: SRAM buffer '{}' of 0 bytes", name));
  bufs.push_back({std::move(name), bytes});
  return static_cast<uint32_t>(bufs.size() - 1);
}

OpInstr& OpCode::add(const isa::Instruction& in, int32_t ddr_buf) {
  OpInstr& i = instrs.emplace_back();
  i.in = in;
  i.ddr_buf = ddr_buf;
  return i;
}

static OpCode& add_ref(OpCode& code, OperandRef ref) {
  if (code.instrs.empty() || ref.buf >= code.bufs.size())
    throw Error("internal: operand before an instruction or of an unknown buffer");
  OpInstr& i = code.instrs.back();
  if (i.nrefs == i.refs.size()) throw Error(fmt::format("internal: too many operands on {}", i.in.spec->mnemonic));
  i.refs[i.nrefs++] = ref;
  return code;
}

OpCode& OpCode::read(uint32_t buf, unsigned field, uint32_t offset) {
  return add_ref(*this, {buf, static_cast<uint8_t>(field), false, offset});
}

OpCode& OpCode::write(uint32_t buf, unsigned field, uint32_t offset) {
  return add_ref(*this, {buf, static_cast<uint8_t>(field), true, offset});
}

std::vector<uint32_t> OpCode::readers() const {
  std::vector<uint32_t> n(bufs.size(), 0);
  for (const OpInstr& i : instrs)
    for (uint8_t r = 0; r < i.nrefs; ++r)
      if (!i.refs[r].write) ++n[i.refs[r].buf];
  return n;
}

SramFit sram_fit(const OpCode& code, const isa::NpuConfig& npu, allocator::Policy policy) {
  allocator::Allocator alloc(SramAddr{0}, npu.sram_bytes, npu.alignment, policy);
  std::vector<uint32_t> pending = code.readers();
  std::vector<allocator::NodeId> node(code.bufs.size());
  SramFit fit;
  for (const OpInstr& i : code.instrs) {
    for (uint8_t r = 0; r < i.nrefs; ++r) {
      const OperandRef& ref = i.refs[r];
      if (!ref.write || node[ref.buf].valid()) continue;
      const allocator::AllocResult a = alloc.alloc(Bytes{code.bufs[ref.buf].bytes});
      if (!a.ok()) {
        fit.fits = false;
        fit.failure = fmt::format("SRAM buffer '{}': {}", code.bufs[ref.buf].name, a.oom.message());
        return fit;
      }
      node[ref.buf] = a.node;
    }
    fit.peak = std::max(fit.peak, alloc.stats().used.value);
    for (uint8_t r = 0; r < i.nrefs; ++r) {
      const OperandRef& ref = i.refs[r];
      if (ref.write || !node[ref.buf].valid()) continue;
      if (--pending[ref.buf] == 0) {
        alloc.free(node[ref.buf]);
        node[ref.buf] = {};
      }
    }
    for (uint8_t r = 0; r < i.nrefs; ++r) {  // written and never read: dies at once
      const OperandRef& ref = i.refs[r];
      if (ref.write && node[ref.buf].valid() && pending[ref.buf] == 0) {
        alloc.free(node[ref.buf]);
        node[ref.buf] = {};
      }
    }
  }
  return fit;
}

}  // namespace npuforge::compiler
