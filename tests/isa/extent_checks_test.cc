// The fix-up's per-spec tables (isa/extent_checks.h): for every instruction of the ISA,
// each field's range and mask are the spec's, each field lists exactly the operands it
// addresses, and every check gives what the operand's Expr gives, on random field bits.
// Run on the built-in ISA (products of 0 to 3 fields, select and quotient forms) and on a
// copy whose eltwise extents multiply by a signed field (a product with sign extension).
#include "isa/extent_checks.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "isa/isa.h"
#include "util/rng.h"

namespace npuforge::isa {
namespace {

// The built-in ISA with eltwise's a and dst extents made "len * lo" (lo: signed 8 bits).
Isa isa_with_a_signed_product() {
  std::string yaml(builtin_isa_yaml());
  const size_t from = yaml.find("- name: eltwise");
  for (const std::string field : {"a", "dst"}) {
    const std::string old = "{field: " + field + ", access: " + (field == "a" ? "read" : "write") + ", bytes: \"len\"}";
    const size_t at = yaml.find(old, from);
    if (at == std::string::npos) throw std::runtime_error("eltwise's extent not found in the built-in ISA");
    yaml.replace(at, old.size(), "{field: " + field + ", access: " + (field == "a" ? "read" : "write") +
                                     ", bytes: \"len * lo\"}");
  }
  return Isa::load_string(yaml, "signed_product.yaml");
}

// Random bits per field: mostly small values, sometimes all ones or anything.
Instruction random_instruction(const InstrSpec& spec, Rng& rng) {
  Instruction in = Instruction::make(spec);
  for (unsigned f = 3; f < spec.fields.size(); ++f) {
    const unsigned w = spec.fields[f].width;
    const uint32_t mask = w >= 32 ? ~0u : (1u << w) - 1;
    const uint64_t pick = rng.below(4);
    in.raw[f] = static_cast<uint32_t>(pick == 0 ? rng.next() : pick == 1 ? mask : rng.below(64)) & mask;
  }
  return in;
}

// Counts the checks of each form compared.
void check_isa(const Isa& isa, int& products, int& others) {
  const ExtentChecks checks(isa);
  Rng rng(7);
  for (const InstrSpec& spec : isa.instructions()) {
    const ExtentChecks::Spec* s = checks.find(Instruction::make(spec));
    EXPECT_NE(s, nullptr) << spec.mnemonic;
    if (s == nullptr) continue;
    EXPECT_EQ(s->spec, &spec);
    EXPECT_EQ(s->fields, spec.fields.size());
    for (unsigned f = 0; f < spec.fields.size(); ++f) {
      const ExtentChecks::Field& fs = s->field[f];
      EXPECT_EQ(fs.min, spec.fields[f].min) << spec.mnemonic << " " << f;
      EXPECT_EQ(fs.max, spec.fields[f].max) << spec.mnemonic << " " << f;
      const unsigned w = spec.fields[f].width;
      EXPECT_EQ(fs.mask, w >= 32 ? ~0u : (1u << w) - 1) << spec.mnemonic << " " << f;
      // The operands it addresses, in order.
      unsigned c = fs.first;
      for (unsigned o = 0; o < spec.operands.size(); ++o) {
        if (spec.operands[o].field != f) continue;
        ASSERT_LT(c, unsigned{fs.first} + fs.count) << spec.mnemonic << " field " << f << " misses operand " << o;
        const ExtentChecks::Check& check = s->check[c++];
        (check.expr == nullptr ? products : others)++;
        for (int t = 0; t < 2000; ++t) {
          const Instruction in = random_instruction(spec, rng);
          ASSERT_EQ(check.eval(in.raw.data()), spec.operands[o].bytes.eval_general(in.raw.data()))
              << spec.mnemonic << " operand " << o << " '" << spec.operands[o].bytes.text() << "'";
        }
      }
      EXPECT_EQ(c, unsigned{fs.first} + fs.count) << spec.mnemonic << " field " << f << " lists other operands";
    }
  }
}

TEST(ExtentChecks, BuiltinIsaChecksGiveTheOperandsExtents) {
  int products = 0, others = 0;
  check_isa(builtin_isa(), products, others);
  EXPECT_GT(products, 10);  // most extents are products: copied into the table
  EXPECT_GT(others, 2);     // the rest evaluated through their Expr
}

TEST(ExtentChecks, SignedFactorsAreSignExtended) {
  const Isa isa = isa_with_a_signed_product();
  ASSERT_EQ(isa.require("eltwise").operands[0].bytes.form(), "product");
  int products = 0, others = 0;
  check_isa(isa, products, others);
  EXPECT_GT(products, 10);
  // lo = -128 (its default): len * lo is negative, as the Expr says.
  const ExtentChecks checks(isa);
  Instruction in = Instruction::make(isa.require("eltwise"));
  in.raw[isa.require("eltwise").require_field("len")] = 3;
  const ExtentChecks::Spec* s = checks.find(in);
  ASSERT_NE(s, nullptr);
  const ExtentChecks::Field& dst = s->field[isa.require("eltwise").require_field("dst")];
  EXPECT_EQ(s->check[dst.first].eval(in.raw.data()), -384);
}

// An instruction of another ISA object, or with an opcode past the table, has no table:
// the fix-up then takes its general path.
TEST(ExtentChecks, FindsOnlyItsOwnSpecs) {
  const Isa other = Isa::load_string(builtin_isa_yaml(), "copy.yaml");
  const ExtentChecks checks(builtin_isa());
  const InstrSpec& gemm = builtin_isa().require("gemm");
  EXPECT_NE(checks.find(Instruction::make(gemm)), nullptr);
  EXPECT_EQ(checks.find(Instruction::make(other.require("gemm"))), nullptr);
  Instruction odd = Instruction::make(gemm);
  odd.raw[kOpcodeSlot] = 0xffffffffu;
  EXPECT_EQ(checks.find(odd), nullptr);
  odd.raw[kOpcodeSlot] = builtin_isa().require("move").opcode;  // another spec's opcode
  EXPECT_EQ(checks.find(odd), nullptr);
  Instruction none;
  EXPECT_EQ(checks.find(none), nullptr);
}

}  // namespace
}  // namespace npuforge::isa
