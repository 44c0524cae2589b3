// ISA expressions: the specialised forms (a product of fields, a choice between two
// products on a field test) give exactly what the general postfix interpreter gives, on
// random expressions and random raw field bits, signed fields included; arithmetic wraps
// instead of overflowing; fields_used names what an expression reads.
#include "isa/expr.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "isa/isa.h"
#include "util/error.h"
#include "util/rng.h"

namespace npuforge::isa {
namespace {

// Fields f0..f7: f0..f3 unsigned of widths 1, 4, 12, 32; f4..f7 signed of widths 3, 8, 16, 32.
constexpr unsigned kWidths[8] = {1, 4, 12, 32, 3, 8, 16, 32};

std::optional<Expr::FieldRef> resolve(std::string_view name) {
  if (name.size() != 2 || name[0] != 'f' || name[1] < '0' || name[1] > '7') return std::nullopt;
  const unsigned slot = static_cast<unsigned>(name[1] - '0');
  return Expr::FieldRef{slot, slot >= 4 ? kWidths[slot] : 0};
}

Expr compile(const std::string& text) { return Expr::compile(text, resolve, "test"); }

std::array<uint32_t, 8> random_raw(Rng& rng) {
  std::array<uint32_t, 8> raw{};
  for (unsigned i = 0; i < 8; ++i) {
    const uint32_t mask = kWidths[i] >= 32 ? ~0u : (1u << kWidths[i]) - 1;
    // Mostly small values, sometimes the extremes, so comparisons with constants go both ways.
    const uint64_t pick = rng.below(4);
    raw[i] = static_cast<uint32_t>(pick == 0 ? rng.next() : pick == 1 ? mask : rng.below(8)) & mask;
  }
  return raw;
}

std::string leaf(Rng& rng) {
  if (rng.chance(0.5)) return "f" + std::to_string(rng.below(8));
  static const char* kConsts[] = {"0", "1", "2", "4", "7", "256", "0x7fffffff", "4096"};
  return kConsts[rng.below(8)];
}

std::string product(Rng& rng) {
  std::string s = leaf(rng);
  for (uint64_t n = rng.below(4); n-- > 0;) s += " * " + leaf(rng);
  return rng.chance(0.3) ? "(" + s + ")" : s;
}

std::string random_expr(Rng& rng, int depth) {
  static const char* kOps[] = {"+", "-", "*", "/", "%", "<<", ">>", "<", "<=", ">", ">=", "==", "!=", "&&", "||"};
  switch (depth <= 0 ? 0 : rng.below(6)) {
    case 0: return leaf(rng);
    case 1: return product(rng);
    case 2: {  // the select form's shape, or something close to it
      static const char* kTests[] = {"<", "<=", ">", ">=", "==", "!="};
      const std::string test = rng.chance(0.3) ? leaf(rng) : leaf(rng) + " " + kTests[rng.below(6)] + " " + leaf(rng);
      return test + " ? " + product(rng) + " : " + product(rng);
    }
    case 3: return "-" + random_expr(rng, depth - 1);
    case 4: return "!(" + random_expr(rng, depth - 1) + ")";
    default:
      return "(" + random_expr(rng, depth - 1) + " " + kOps[rng.below(15)] + " " + random_expr(rng, depth - 1) + ")";
  }
}

TEST(Expr, TheIsaExpressionsTakeTheirForms) {
  EXPECT_EQ(compile("f2 * f3").form(), "product");
  EXPECT_EQ(compile("f2").form(), "product");
  EXPECT_EQ(compile("256").form(), "product");
  EXPECT_EQ(compile("4 * (f1 * f2) * 2").form(), "product");
  EXPECT_EQ(compile("f0 ? f2 * 4 : 0").form(), "select");
  EXPECT_EQ(compile("f1 <= 1 ? f2 : 0").form(), "select");
  EXPECT_EQ(compile("1 >= f1 ? f2 : 0").form(), "select");
  EXPECT_EQ(compile("(f1 - 1) * f2 + f3").form(), "quotients");
  EXPECT_EQ(compile("((f1 + f2 - (f3 - 1) * f0 - 1) / f4 + 1) * ((f2 - f1) / f5 - 2) * f6").form(), "quotients");
  EXPECT_EQ(compile("f1 * f2 * f3 * f0").form(), "general");  // more factors than a product holds
  EXPECT_EQ(compile("f1 / f2 * (f3 / f0) * (f4 / f5)").form(), "general");  // more quotients than it holds
  EXPECT_EQ(compile("(f1 % f2) * f3").form(), "general");
  // In the built-in ISA every operand extent has a specialised form (im2col, pool and the
  // strided DMA ones are quotients): none goes through the interpreter.
  for (const InstrSpec& spec : builtin_isa().instructions())
    for (const OperandSpec& op : spec.operands) EXPECT_NE(op.bytes.form(), "general") << op.bytes.text();
}

TEST(Expr, FormsAgreeWithTheInterpreterOnRandomExpressions) {
  Rng rng(12);
  std::array<unsigned, 3> forms{};
  for (int e = 0; e < 3000; ++e) {
    const std::string text = random_expr(rng, 3);
    const Expr x = compile(text);
    forms[x.form() == "product" ? 0 : x.form() == "select" ? 1 : 2]++;  // quotients with general
    for (int trial = 0; trial < 20; ++trial) {
      const auto raw = random_raw(rng);
      ASSERT_EQ(x.eval(raw.data()), x.eval_general(raw.data())) << text;
    }
  }
  // Every form was exercised.
  EXPECT_GT(forms[0], 100u);
  EXPECT_GT(forms[1], 100u);
  EXPECT_GT(forms[2], 100u);
}

// The shape of the im2col and pool extents with random fields, constants and signs.
std::string quotient_expr(Rng& rng) {
  const auto sum = [&] {
    std::string s = leaf(rng);
    for (uint64_t n = rng.below(5); n-- > 0;) s += (rng.chance(0.5) ? " + " : " - ") + product(rng);
    return rng.chance(0.3) ? "-(" + s + ")" : "(" + s + ")";
  };
  std::string s = product(rng);
  for (uint64_t n = rng.below(3); n-- > 0;) {
    const std::string q = "(" + sum() + " / " + (rng.chance(0.5) ? leaf(rng) : sum()) + ")";
    static const char* kAdd[] = {"", " + 1", " - 2", " + 0x7fffffff"};
    const char* add = kAdd[rng.below(4)];
    s += " * " + (rng.chance(0.3) && *add == ' ' && add[1] == '+' ? "(" + std::string(add + 3) + " + " + q + ")"
                                                                 : "(" + q + add + ")");
  }
  return s;
}

TEST(Expr, QuotientsAgreeWithTheInterpreter) {
  Rng rng(13);
  unsigned quotients = 0;
  for (int e = 0; e < 3000; ++e) {
    const std::string text = quotient_expr(rng);
    const Expr x = compile(text);
    quotients += x.form() == "quotients";
    for (int trial = 0; trial < 20; ++trial) {
      const auto raw = random_raw(rng);
      ASSERT_EQ(x.eval(raw.data()), x.eval_general(raw.data())) << text;
    }
  }
  EXPECT_GT(quotients, 1000u);
  // Division by zero and by -1 (signed f7 all ones) as the interpreter defines them.
  std::array<uint32_t, 8> raw{};
  raw[2] = 100, raw[7] = 0xffffffffu;
  for (const char* text : {"(f2 - 1) / f1 * f2", "(f2 * f2 - 1) / f7 * f2", "(0 - 9223372036854775807 - 1) / f7 + 1"}) {
    const Expr x = compile(text);
    EXPECT_EQ(x.form(), "quotients") << text;
    EXPECT_EQ(x.eval(raw.data()), x.eval_general(raw.data())) << text;
  }
}

TEST(Expr, ValuesFollowTheDefinition) {
  std::array<uint32_t, 8> raw{};
  raw[2] = 100;      // f2, unsigned
  raw[5] = 0xfe;     // f5, signed 8 bits: -2
  raw[7] = 0xffffffffu;  // f7, signed 32 bits: -1
  raw[3] = 0xffffffffu;  // f3, unsigned 32 bits
  EXPECT_EQ(compile("f5").eval(raw.data()), -2);
  EXPECT_EQ(compile("f7 * f2").eval(raw.data()), -100);
  EXPECT_EQ(compile("f3").eval(raw.data()), 0xffffffffll);
  EXPECT_EQ(compile("f5 < 0 ? f2 : 1").eval(raw.data()), 100);
  EXPECT_EQ(compile("(f2 + f5) / 7").eval(raw.data()), 14);  // truncates
  EXPECT_EQ(compile("f2 / (f2 - 100)").eval(raw.data()), 0);  // total: no trap
  EXPECT_EQ(compile("f2 << 70").eval(raw.data()), 0);
  // Wraps modulo 2^64 (no undefined overflow, the same in every form).
  const Expr big = compile("f3 * f3 * f3");
  const uint64_t m = 0xffffffffull;
  EXPECT_EQ(static_cast<uint64_t>(big.eval(raw.data())), m * m * m);
  EXPECT_EQ(big.eval(raw.data()), big.eval_general(raw.data()));
  EXPECT_EQ(compile("-9223372036854775807 - 1 - 1").eval(raw.data()), INT64_MAX);
}

TEST(Expr, FieldsUsedNamesTheSlotsRead) {
  EXPECT_EQ(compile("f1 * f2").fields_used(), 0b110u);
  EXPECT_EQ(compile("f0 ? f7 * 4 : f3").fields_used(), 0b10001001u);
  EXPECT_EQ(compile("16").fields_used(), 0u);
}

TEST(Expr, SyntaxErrorsNameTheColumn) {
  try {
    compile("f1 * * f2");
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("column 6"), std::string::npos) << e.what();
  }
  EXPECT_THROW(compile("f9"), Error);
  EXPECT_THROW(compile("(f1"), Error);
}

}  // namespace
}  // namespace npuforge::isa
