#pragma once
// The fix-up's per-instruction checks (allocator/fixup.h) worked out once per ISA: for each
// instruction spec, each field's range and width mask, and the extents of the operands it
// addresses, grouped by field in one flat table. Why: the generator fixes up every
// instruction it emits, and going from a field to its operands' expressions through the
// spec (its vectors, each operand's Expr) cost more than evaluating them. An extent that
// is a product of fields ("m * k", "len", "256": most of them) is copied into the table and
// evaluated inline; any other form keeps a pointer to its expression and evaluates that,
// so every operand is still checked. The table points into the Isa, which must outlive it.
#include <array>
#include <cstdint>
#include <vector>

#include "isa/instruction.h"

namespace npuforge::isa {

class ExtentChecks {
 public:
  // One operand's extent: constant * the fields at slot[0 .. count) (each sign-extended
  // through its bias, as Expr reads it), or `expr` when the extent is not a product.
  struct Check {
    int64_t constant = 1;
    const Expr* expr = nullptr;
    uint8_t count = 0;
    uint8_t field = 0;  // the address field of its operand
    std::array<uint8_t, 3> slot{};
    std::array<uint32_t, 3> bias{};
    // Out of line: inlined, an Expr's evaluation crowded the registers of every loop over
    // the checks (the fix-up's spilled its state to the stack).
    [[gnu::noinline]] static int64_t eval_expr(const Expr& e, const uint32_t* raw);
    static int64_t load(const uint32_t* raw, uint8_t slot, uint32_t bias) {
      return static_cast<int64_t>(raw[slot] ^ bias) - static_cast<int64_t>(bias);
    }
    // The same value as the operand's Expr::eval (tested over random fields).
    int64_t eval(const uint32_t* raw) const {
      if (expr != nullptr) [[unlikely]]
        return eval_expr(*expr, raw);
      auto v = static_cast<uint64_t>(constant);
      switch (count) {
        case 3: v *= static_cast<uint64_t>(load(raw, slot[2], bias[2])); [[fallthrough]];
        case 2: v *= static_cast<uint64_t>(load(raw, slot[1], bias[1])); [[fallthrough]];
        case 1: v *= static_cast<uint64_t>(load(raw, slot[0], bias[0])); break;
        default: break;
      }
      return static_cast<int64_t>(v);
    }
  };
  struct Field {
    int64_t min = 0, max = 0;  // the field's value range
    uint32_t mask = 0;         // its width's bits
    uint8_t first = 0;         // checks [first, first + count) of its spec: the operands
    uint8_t count = 0;         // it addresses, in operand order
  };

  struct Spec {
    const InstrSpec* spec = nullptr;
    uint32_t fields = 0;  // spec->fields.size()
    // The fields any of its extents reads (bit per slot): when none of them is an address
    // being fixed up, every extent has its final value before the addresses are written.
    uint32_t reads = 0;
    uint32_t checks = 0;  // check[0 .. checks): every operand, grouped by field
    std::array<Field, kMaxFields> field{};
    std::array<Check, kMaxOperands> check{};
  };

  explicit ExtentChecks(const Isa& isa);

  // The table of `in`'s spec; null when `in` is not an instruction of this ISA (its
  // opcode slot does not lead to its own spec).
  const Spec* find(const Instruction& in) const {
    const uint32_t op = in.raw[kOpcodeSlot];
    if (op >= by_opcode_.size()) [[unlikely]]
      return nullptr;
    const Spec* s = by_opcode_[op];
    return s != nullptr && s->spec == in.spec ? s : nullptr;
  }

 private:
  std::vector<Spec> specs_;
  std::vector<const Spec*> by_opcode_;  // opcode -> table (null: no such opcode)
};

}  // namespace npuforge::isa
