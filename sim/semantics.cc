#include "sim/semantics.h"

#include <algorithm>
#include <cstring>
#include <string_view>
#include <utility>

#include <fmt/core.h>

#include "util/error.h"

namespace npuforge::sim {
namespace {

struct OpName {
  std::string_view name;
  Op op;
};
constexpr OpName kOps[] = {
    {"nop", Op::Nop},         {"load", Op::Load},   {"store", Op::Store}, {"gemm", Op::Gemm},
    {"im2col", Op::Im2col},   {"eltwise", Op::Eltwise}, {"pool", Op::Pool}, {"move", Op::Move},
    {"sync", Op::Sync},       {"halt", Op::Halt}, {"lut", Op::Lut},
};

// The names the ISA gives the values the kernels implement (sim/kernels.cc, kernels_pool.cc).
constexpr std::pair<std::string_view, EltwiseOp> kEltwiseOps[] = {
    {"add", EltwiseOp::Add}, {"mul", EltwiseOp::Mul}, {"relu", EltwiseOp::Relu}, {"clip", EltwiseOp::Clip}};
constexpr std::pair<std::string_view, PoolMode> kPoolModes[] = {{"max", PoolMode::Max}, {"avg", PoolMode::Avg}};

template <typename E, size_t N>
std::string_view name_in(const std::pair<std::string_view, E> (&names)[N], E value) {
  for (const auto& [name, v] : names)
    if (v == value) return name;
  return "?";
}

// Binds every named value of `spec`'s field `slot` to what the simulator implements under
// that name; a name it does not implement is an error naming the ISA, field and value.
template <typename E, size_t N>
NamedCodes<E> bind_codes(const isa::Isa& isa, const isa::InstrSpec& spec, unsigned slot,
                         const std::pair<std::string_view, E> (&names)[N]) {
  const isa::FieldSpec& f = spec.fields[slot];
  NamedCodes<E> codes;
  for (const auto& [name, code] : f.enum_values) {
    const auto* known = std::find_if(std::begin(names), std::end(names), [&](const auto& n) { return n.first == name; });
    if (known == std::end(names)) {
      std::string list;
      for (const auto& n : names) list += fmt::format("{}{}", list.empty() ? "" : ", ", n.first);
      throw Error(fmt::format("ISA {}: {}.{} value '{}' has no semantics in the simulator (sim/kernels*.cc "
                              "implements {})",
                              isa.name(), spec.mnemonic, f.name, name, list));
    }
    if (code > 0xfe)
      throw Error(fmt::format("ISA {}: {}.{} value '{}' = {}: the simulator takes codes up to 254", isa.name(),
                              spec.mnemonic, f.name, name, code));
    codes.bind(code, known->second);
  }
  return codes;
}

}  // namespace

std::string_view to_string(EltwiseOp op) { return name_in(kEltwiseOps, op); }
std::string_view to_string(PoolMode mode) { return name_in(kPoolModes, mode); }

void unnamed_code(uint64_t code) {
  throw Error(fmt::format("enum field code {} is none of the values the ISA names", code));
}

std::string_view to_string(Op op) {
  for (const auto& o : kOps) {
    if (o.op == op) return o.name;
  }
  return "?";
}

Semantics::Semantics(const isa::Isa& isa) : isa_(&isa), specs_(isa.instructions().data()) {
  const auto& specs = isa.instructions();
  ops_.resize(specs.size());
  write_operand_.resize(specs.size());
  for (size_t i = 0; i < specs.size(); ++i) {
    const auto& spec = specs[i];
    const auto* found = std::find_if(std::begin(kOps), std::end(kOps),
                                     [&](const OpName& o) { return o.name == spec.mnemonic; });
    if (found == std::end(kOps)) {
      throw Error(fmt::format("ISA {}: instruction '{}' has no semantics in sim/semantics.cc",
                              isa.name(), spec.mnemonic));
    }
    ops_[i] = found->op;
    for (unsigned k = 0; k < spec.operands.size(); ++k) {
      if (spec.operands[k].access == isa::Access::Write) write_operand_[i] = k;
    }
    auto f = [&](std::string_view name) { return spec.require_field(name); };
    switch (found->op) {
      case Op::Load:
        load_ = {f("dst"), f("src"), f("rows"), f("row_bytes"), f("stride")};
        break;
      case Op::Store:
        store_ = {f("dst"), f("src"), f("rows"), f("row_bytes"), f("stride")};
        break;
      case Op::Gemm:
        gemm_ = {f("dst"), f("a"), f("b"), f("bias"), f("m"), f("n"),
                 f("k"), f("scale"), f("shift"), f("relu"), f("has_bias"), f("qp"), f("per_channel")};
        break;
      case Op::Im2col:
        im2col_ = {f("dst"), f("src"), f("h"), f("w"), f("c"), f("kh"), f("kw"), f("stride_h"), f("stride_w"),
                   f("pad_top"), f("pad_left"), f("pad_bottom"), f("pad_right"), f("dil_h"), f("dil_w")};
        break;
      case Op::Eltwise:
        eltwise_ = {f("dst"), f("a"), f("b"), f("len"), f("op"), f("scale"), f("shift"), f("lo"), f("hi"), {}};
        eltwise_.ops = bind_codes(isa, spec, eltwise_.op, kEltwiseOps);
        break;
      case Op::Pool:
        pool_ = {f("dst"), f("src"), f("h"), f("w"), f("c"), f("window_h"), f("window_w"), f("stride_h"), f("stride_w"),
                 f("pad_top"), f("pad_left"), f("pad_bottom"), f("pad_right"), f("mode"), f("count_pad"), {}};
        pool_.modes = bind_codes(isa, spec, pool_.mode, kPoolModes);
        break;
      case Op::Lut:
        lut_ = {f("dst"), f("src"), f("table"), f("len")};
        break;
      case Op::Move:
        move_ = {f("dst"), f("src"), f("len")};
        break;
      default:
        break;
    }
  }
}

void Semantics::foreign_spec() { throw Error("instruction decoded with a different ISA than the simulator's"); }

std::optional<unsigned> Semantics::write_operand(const isa::Instruction& instr) const {
  op(instr);  // validates the spec pointer
  return write_operand_[static_cast<size_t>(instr.spec - isa_->instructions().data())];
}

std::string Semantics::check_bounds(const isa::Instruction& instr, uint64_t sram_bytes,
                                    uint64_t ddr_bytes) const {
  for (const auto& e : isa::extents(instr)) {
    if (e.bytes == 0) continue;
    const uint64_t size = e.space == isa::Space::Sram ? sram_bytes : ddr_bytes;
    if (e.addr > size || e.bytes > size - e.addr) {
      return fmt::format("{} operand '{}': {}", instr.spec->mnemonic,
                         instr.spec->fields[e.field].name,
                         AccessError(e.space, e.addr, e.bytes, size).what());
    }
  }
  return {};
}

void Semantics::execute(const isa::Instruction& instr, Memory& memory) const {
  const Op o = op(instr);
  const auto list = isa::extents(instr);
  for (const auto& e : list) {  // all checks before any change
    if (e.bytes == 0) continue;
    const uint64_t size = e.space == isa::Space::Sram ? memory.sram.size() : memory.ddr.size();
    if (e.addr > size || e.bytes > size - e.addr) throw AccessError(e.space, e.addr, e.bytes, size);
  }
  auto u = [&](unsigned slot) -> uint64_t { return instr.get(slot); };
  switch (o) {
    case Op::Nop:
    case Op::Sync:
    case Op::Halt:
      return;
    case Op::Load: {  // row by row, so a wide DDR stride needs no temporary of its extent
      const auto& s = load_;
      for (uint64_t r = 0; r < u(s.rows); ++r) {
        memory.ddr.read(u(s.src) + r * u(s.stride),
                        memory.sram.view(u(s.dst) + r * u(s.row_bytes), u(s.row_bytes)));
      }
      return;
    }
    case Op::Store: {
      const auto& s = store_;
      for (uint64_t r = 0; r < u(s.rows); ++r) {
        memory.ddr.write(u(s.dst) + r * u(s.stride),
                         memory.sram.view(u(s.src) + r * u(s.row_bytes), u(s.row_bytes)));
      }
      return;
    }
    case Op::Move: {
      const auto& s = move_;
      auto dst = memory.sram.view(u(s.dst), u(s.len));
      auto src = memory.sram.view(u(s.src), u(s.len));
      std::memmove(dst.data(), src.data(), dst.size());
      return;
    }
    default:
      break;
  }
  // Compute instructions: SRAM in, SRAM out. Inputs overlapping the output are copied first
  // so that every input is read as it was before the instruction.
  const auto w = write_operand(instr);
  if (!w) throw Error(fmt::format("{}: no write operand", instr.spec->mnemonic));
  const isa::Extent& we = list.items[*w];
  std::array<std::span<const uint8_t>, isa::kMaxOperands> in{};
  std::array<std::vector<uint8_t>, isa::kMaxOperands> copies;
  for (unsigned i = 0; i < list.count; ++i) {
    const auto& e = list.items[i];
    if (i == *w || e.bytes == 0) continue;
    auto v = memory.sram.view(e.addr, e.bytes);
    if (e.addr < we.addr + we.bytes && we.addr < e.addr + e.bytes) {
      copies[i].assign(v.begin(), v.end());
      in[i] = copies[i];
    } else {
      in[i] = v;
    }
  }
  run(o, instr, in, memory.sram.view(we.addr, we.bytes));
}

void Semantics::compute(const isa::Instruction& instr, const OperandBuffers& buffers) const {
  compute(instr, buffers, isa::extents(instr));
}

void Semantics::compute(const isa::Instruction& instr, const OperandBuffers& buffers,
                        const isa::ExtentList& list) const {
  const Op o = op(instr);
  const auto w = write_operand(instr);
  for (unsigned i = 0; i < list.count; ++i) {
    const uint64_t have = (w && i == *w) ? buffers.out.size() : buffers.in[i].size();
    if (list.items[i].bytes != have) {
      throw Error(fmt::format("{} operand '{}': buffer of {} bytes, expected {}",
                              instr.spec->mnemonic, instr.spec->fields[list.items[i].field].name,
                              have, list.items[i].bytes));
    }
  }
  run(o, instr, buffers.in, buffers.out);
}

}  // namespace npuforge::sim
