#include "isa/expr.h"

#include <cctype>

#include <fmt/core.h>

#include "util/error.h"

namespace npuforge::isa {

// Precedence climbing over a tiny grammar; emits postfix code as it goes.
class ExprParser {
 public:
  ExprParser(std::string_view text, const Expr::FieldResolver& resolve, std::string_view where)
      : text_(text), resolve_(resolve), where_(where) {}

  Expr parse() {
    Expr e;
    e.text_ = std::string(text_);
    out_ = &e.code_;
    ternary();
    skip_space();
    if (pos_ != text_.size()) fail(fmt::format("unexpected '{}'", text_[pos_]));
    check_depth(e.code_);
    return e;
  }

 private:
  using Op = Expr::Op;

  [[noreturn]] void fail(const std::string& what) const {
    throw Error(fmt::format("{}: in expression \"{}\" at column {}: {}", where_, text_, pos_ + 1, what));
  }
  void skip_space() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  bool accept(std::string_view tok) {
    skip_space();
    if (text_.substr(pos_, tok.size()) != tok) return false;
    pos_ += tok.size();
    return true;
  }
  void emit(Op op, int64_t arg = 0) { out_->push_back({op, arg}); }

  // eval() uses a fixed stack; reject expressions that would need a deeper one.
  void check_depth(const std::vector<Expr::Code>& code) const {
    int depth = 0;
    for (const auto& c : code) {
      if (c.op == Op::Const || c.op == Op::Field) ++depth;
      else if (c.op == Op::Select) depth -= 2;
      else if (c.op != Op::Neg && c.op != Op::Not) depth -= 1;
      if (depth > 30) throw Error(fmt::format("{}: expression \"{}\" is nested too deeply", where_, text_));
    }
  }

  void ternary() {
    binary(0);
    if (accept("?")) {
      ternary();
      if (!accept(":")) fail("expected ':' of '?:'");
      ternary();
      emit(Op::Select);
    }
  }

  struct BinOp {
    std::string_view tok;
    int prec;
    Op op;
  };
  // Longer tokens first so "<=" is not read as "<".
  static constexpr BinOp kBinOps[] = {
      {"||", 1, Op::Or},  {"&&", 2, Op::And}, {"==", 3, Op::Eq}, {"!=", 3, Op::Ne},
      {"<=", 4, Op::Le},  {">=", 4, Op::Ge},  {"<<", 5, Op::Shl}, {">>", 5, Op::Shr},
      {"<", 4, Op::Lt},   {">", 4, Op::Gt},   {"+", 6, Op::Add}, {"-", 6, Op::Sub},
      {"*", 7, Op::Mul},  {"/", 7, Op::Div},  {"%", 7, Op::Mod},
  };

  const BinOp* peek_binop() {
    skip_space();
    for (const auto& b : kBinOps)
      if (text_.substr(pos_, b.tok.size()) == b.tok) return &b;
    return nullptr;
  }

  void binary(int min_prec) {
    unary();
    while (const BinOp* b = peek_binop()) {
      if (b->prec <= min_prec) break;
      pos_ += b->tok.size();
      binary(b->prec);
      emit(b->op);
    }
  }

  void unary() {
    if (accept("-")) {
      unary();
      emit(Op::Neg);
    } else if (accept("!")) {
      unary();
      emit(Op::Not);
    } else {
      primary();
    }
  }

  void primary() {
    skip_space();
    if (pos_ >= text_.size()) fail("unexpected end, expected a number, a field name or '('");
    const char c = text_[pos_];
    if (c == '(') {
      ++pos_;
      ternary();
      if (!accept(")")) fail("expected ')'");
    } else if (std::isdigit(static_cast<unsigned char>(c))) {
      number();
    } else if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      identifier();
    } else {
      fail(fmt::format("unexpected '{}'", c));
    }
  }

  void number() {
    size_t end = pos_;
    while (end < text_.size() && std::isalnum(static_cast<unsigned char>(text_[end]))) ++end;
    const std::string tok(text_.substr(pos_, end - pos_));
    size_t used = 0;
    int64_t v = 0;
    try {
      v = std::stoll(tok, &used, 0);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != tok.size()) fail(fmt::format("bad number '{}'", tok));
    pos_ = end;
    emit(Op::Const, v);
  }

  void identifier() {
    size_t end = pos_;
    while (end < text_.size() &&
           (std::isalnum(static_cast<unsigned char>(text_[end])) || text_[end] == '_'))
      ++end;
    const std::string_view name = text_.substr(pos_, end - pos_);
    const auto slot = resolve_(name);
    if (!slot) fail(fmt::format("unknown field '{}'", name));
    pos_ = end;
    emit(Op::Field, *slot);
  }

  std::string_view text_;
  const Expr::FieldResolver& resolve_;
  std::string_view where_;
  size_t pos_ = 0;
  std::vector<Expr::Code>* out_ = nullptr;
};

Expr Expr::compile(std::string_view text, const FieldResolver& resolve, std::string_view where) {
  return ExprParser(text, resolve, where).parse();
}

int64_t Expr::eval(std::span<const int64_t> fields) const {
  int64_t stack[32];
  int sp = 0;
  for (const Code& c : code_) {
    switch (c.op) {
      case Op::Const: stack[sp++] = c.arg; continue;
      case Op::Field: stack[sp++] = fields[static_cast<size_t>(c.arg)]; continue;
      case Op::Neg: stack[sp - 1] = -stack[sp - 1]; continue;
      case Op::Not: stack[sp - 1] = !stack[sp - 1]; continue;
      case Op::Select: {
        const int64_t no = stack[--sp], yes = stack[--sp];
        stack[sp - 1] = stack[sp - 1] ? yes : no;
        continue;
      }
      default: break;
    }
    const int64_t b = stack[--sp];
    int64_t& a = stack[sp - 1];
    switch (c.op) {
      case Op::Add: a += b; break;
      case Op::Sub: a -= b; break;
      case Op::Mul: a *= b; break;
      case Op::Div: a = b == 0 ? 0 : a / b; break;  // total: an ISA expression never traps
      case Op::Mod: a = b == 0 ? 0 : a % b; break;
      case Op::Shl: a = (b < 0 || b > 62) ? 0 : a << b; break;
      case Op::Shr: a = (b < 0 || b > 62) ? 0 : a >> b; break;
      case Op::Lt: a = a < b; break;
      case Op::Le: a = a <= b; break;
      case Op::Gt: a = a > b; break;
      case Op::Ge: a = a >= b; break;
      case Op::Eq: a = a == b; break;
      case Op::Ne: a = a != b; break;
      case Op::And: a = a && b; break;
      case Op::Or: a = a || b; break;
      default: break;
    }
  }
  return sp > 0 ? stack[0] : 0;
}

}  // namespace npuforge::isa
