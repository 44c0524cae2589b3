#pragma once
// Integer expressions over an instruction's fields, as written in npu_isa.yaml
// ("m * k", "has_bias ? n * 4 : 0"). Compiled once, with field names resolved to field
// slots, and evaluated on the instruction's raw field bits (Instruction::raw): signed fields
// are sign-extended as they are read, so no per-instruction conversion pass is needed.
//
// Why specialised forms: operand extents are evaluated for every instruction the generator
// emits (sizing, then the fix-up's extent check) and the simulator runs. Most of them are a
// product of fields and a constant ("m * k", "len", "256") or a choice between two such
// products on a field test ("has_bias ? n * 4 : 0", "op <= 1 ? len : 0"); those are
// recognised at compile time and evaluated inline without the general postfix loop, which
// handles the rest. The extents of im2col, pool and strided DMA ("(rows - 1) * stride +
// row_bytes", "((h + pad_top + pad_bottom - window_h) / stride_h + 1) * ... * c") are a
// polynomial times at most two quotients of polynomials: the quotients form, evaluated as
// sums of products (+, -, * expand exactly in wrapping arithmetic), 4-5x cheaper than the
// interpreter. All forms give the same value for every input (tested): arithmetic wraps
// modulo 2^64 (never undefined), division and modulo by zero give 0, shifts outside
// [0, 62] give 0.
#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace npuforge::isa {

struct ExprShape;

class Expr {
 public:
  // A field as an expression reads it: its slot, and its width when it is signed (the raw
  // bits are sign-extended from it), 0 when unsigned.
  struct FieldRef {
    unsigned slot = 0;
    unsigned signed_width = 0;
  };
  // Resolves a field name, or nullopt when no such field exists.
  using FieldResolver = std::function<std::optional<FieldRef>(std::string_view)>;

  // Throws npuforge::Error naming `where` and the column on a syntax error or unknown field.
  static Expr compile(std::string_view text, const FieldResolver& resolve, std::string_view where);

  // `raw` holds the instruction's raw field bits by slot (at least up to the highest slot
  // the expression reads).
  int64_t eval(const uint32_t* raw) const {
    switch (form_) {
      case Form::Product: return yes_.eval(raw);
      case Form::Select: return test(raw) ? yes_.eval(raw) : no_.eval(raw);
      case Form::Quotients: return eval_quotients(raw);
      case Form::General: break;
    }
    return eval_general(raw);
  }
  int64_t eval(std::span<const uint32_t> raw) const { return eval(raw.data()); }
  // The postfix interpreter alone, whatever the form (the reference the forms are tested
  // against).
  int64_t eval_general(const uint32_t* raw) const;

  // Bit i set: the expression reads field slot i (slots below 32).
  uint32_t fields_used() const { return fields_used_; }
  const std::string& text() const { return text_; }
  // "product", "select", "quotients" or "general": which evaluation compile() chose (tests, docs).
  std::string_view form() const;

  // The product form's parts, constant * field * ... (each field read as `Load` does:
  // (raw[slot] ^ bias) - bias); nullopt for the other forms. For code that precomputes
  // per-ISA tables of cheap checks (isa/extent_checks.h).
  struct ProductTerms {
    int64_t constant = 1;
    unsigned count = 0;  // at most 3
    std::array<uint32_t, 3> slot{}, bias{};
  };
  std::optional<ProductTerms> product_terms() const;

 private:
  // A field read: value = (raw ^ bias) - bias, with bias = 2^(width-1) for a signed field
  // and 0 for an unsigned one (branch-free sign extension).
  struct Load {
    uint32_t slot = 0;
    uint32_t bias = 0;
    int64_t operator()(const uint32_t* raw) const {
      return static_cast<int64_t>(raw[slot] ^ bias) - static_cast<int64_t>(bias);
    }
  };
  // constant * field * field * ... (wrapping), up to kMaxFactors fields.
  static constexpr unsigned kMaxFactors = 3;
  struct Product {
    int64_t constant = 1;
    unsigned count = 0;
    std::array<Load, kMaxFactors> factors{};
    int64_t eval(const uint32_t* raw) const {
      uint64_t v = static_cast<uint64_t>(constant);
      switch (count) {  // unrolled: extents are evaluated for every instruction
        case 3: v *= static_cast<uint64_t>(factors[2](raw)); [[fallthrough]];
        case 2: v *= static_cast<uint64_t>(factors[1](raw)); [[fallthrough]];
        case 1: v *= static_cast<uint64_t>(factors[0](raw)); break;
        default: break;
      }
      return static_cast<int64_t>(v);
    }
  };
  // Quotients form: poly(lead_) * (poly(q[0].num) / poly(q[0].den) + q[0].add) * ..., a
  // poly being the sum of the Products terms_[begin, end). Division as in the interpreter.
  // A polynomial: constant + the one-field terms terms_[begin, mid) + the products of
  // several fields terms_[mid, end) (split so that the common terms cost one multiply).
  struct PolyRange {
    int64_t constant = 0;
    uint16_t begin = 0, mid = 0, end = 0;
  };
  struct Quotient {
    PolyRange num, den;
    int64_t add = 0;
  };
  static constexpr unsigned kMaxQuotients = 2;
  static constexpr unsigned kMaxTerms = 8;  // per polynomial
  // Out of line: inlined, it weighed on every caller's common (product) path.
  int64_t eval_quotients(const uint32_t* raw) const;
  enum class Form : uint8_t { Product, Select, Quotients, General };
  enum class Op : uint8_t {
    Const, Field, Neg, Not, Add, Sub, Mul, Div, Mod, Shl, Shr,
    Lt, Le, Gt, Ge, Eq, Ne, And, Or, Select
  };
  // Where a binary operation's right operand comes from: the stack, or (fused with the
  // push before it) `arg` as a constant or a field slot.
  enum class Src : uint8_t { Stack, Const, Field };
  struct Code {
    Op op;
    int64_t arg;  // the constant, or the field slot
    uint32_t bias = 0;  // for a field: see Load
    Src src = Src::Stack;
  };

  // Select form: field `cmp_` constant, e.g. "op <= 1"; a bare field tests "!= 0".
  bool test(const uint32_t* raw) const {
    const int64_t v = cond_(raw);
    switch (cmp_) {
      case Op::Lt: return v < cmp_value_;
      case Op::Le: return v <= cmp_value_;
      case Op::Gt: return v > cmp_value_;
      case Op::Ge: return v >= cmp_value_;
      case Op::Eq: return v == cmp_value_;
      default: return v != cmp_value_;
    }
  }
  void specialise();  // picks form_ from code_ (expr.cc)
  void specialise_quotients(const ExprShape& shape);
  void fuse();        // fused_ from code_ (expr.cc)

  std::vector<Code> code_;   // postfix, as parsed
  std::vector<Code> fused_;  // the same with each leaf push merged into the operation after it
  std::string text_;
  uint32_t fields_used_ = 0;
  Form form_ = Form::General;
  Product yes_, no_;  // Product: yes_; Select: cond ? yes_ : no_
  Load cond_;
  Op cmp_ = Op::Ne;
  int64_t cmp_value_ = 0;
  std::vector<Product> terms_;  // Quotients: the polynomials' terms
  PolyRange lead_;
  std::array<Quotient, kMaxQuotients> quotients_{};
  unsigned quotient_count_ = 0;
  friend class ExprParser;
  friend struct ExprShape;
};

}  // namespace npuforge::isa
