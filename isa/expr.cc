#include "isa/expr.h"

#include <cctype>
#include <optional>
#include <utility>

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
    for (const auto& c : e.code_)
      if (c.op == Op::Field) e.fields_used_ |= c.arg < 32 ? 1u << c.arg : 0u;
    e.specialise();
    e.fuse();
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
  void emit(Op op, int64_t arg = 0, uint32_t bias = 0) { out_->push_back({op, arg, bias}); }

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
    const auto field = resolve_(name);
    if (!field) fail(fmt::format("unknown field '{}'", name));
    pos_ = end;
    const unsigned w = field->signed_width;
    emit(Op::Field, field->slot, w == 0 ? 0u : w >= 32 ? 0x80000000u : 1u << (w - 1));
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

// The postfix code as a tree, matched against the specialised forms (see expr.h).
struct ExprShape {
  using Op = Expr::Op;
  struct Node {
    Expr::Code code;
    int kid[3] = {-1, -1, -1};
  };
  std::vector<Node> nodes;
  int root = -1;

  explicit ExprShape(const std::vector<Expr::Code>& code) {
    std::vector<int> stack;
    for (const auto& c : code) {
      Node n{c};
      const int arity = c.op == Op::Const || c.op == Op::Field ? 0 : c.op == Op::Neg || c.op == Op::Not ? 1
                        : c.op == Op::Select                     ? 3
                                                                 : 2;
      for (int k = arity; k-- > 0;) {
        n.kid[k] = stack.back();
        stack.pop_back();
      }
      stack.push_back(static_cast<int>(nodes.size()));
      nodes.push_back(n);
    }
    root = stack.empty() ? -1 : stack.back();
  }

  static Expr::Load load(const Expr::Code& c) { return {static_cast<uint32_t>(c.arg), c.bias}; }

  // constant * fields, or nullopt.
  std::optional<Expr::Product> product(int i) const {
    const Node& n = nodes[static_cast<size_t>(i)];
    Expr::Product p;
    if (n.code.op == Op::Const) {
      p.constant = n.code.arg;
      return p;
    }
    if (n.code.op == Op::Field) {
      p.factors[p.count++] = load(n.code);
      return p;
    }
    if (n.code.op != Op::Mul) return std::nullopt;
    const auto a = product(n.kid[0]), b = product(n.kid[1]);
    if (!a || !b || a->count + b->count > Expr::kMaxFactors) return std::nullopt;
    p = *a;
    p.constant = static_cast<int64_t>(static_cast<uint64_t>(a->constant) * static_cast<uint64_t>(b->constant));
    for (unsigned k = 0; k < b->count; ++k) p.factors[p.count++] = b->factors[k];
    return p;
  }

  // A sum of products (+, -, unary - and * expand exactly modulo 2^64), or nullopt when
  // the subtree has another operation or needs more terms or factors than the form holds.
  using Poly = std::vector<Expr::Product>;
  static std::optional<Poly> times(const Poly& a, const Poly& b) {
    if (a.size() * b.size() > Expr::kMaxTerms) return std::nullopt;
    Poly out;
    for (const Expr::Product& x : a) {
      for (const Expr::Product& y : b) {
        if (x.count + y.count > Expr::kMaxFactors) return std::nullopt;
        Expr::Product p = x;
        p.constant = static_cast<int64_t>(static_cast<uint64_t>(x.constant) * static_cast<uint64_t>(y.constant));
        for (unsigned k = 0; k < y.count; ++k) p.factors[p.count++] = y.factors[k];
        out.push_back(p);
      }
    }
    return out;
  }
  static Poly negated(Poly p) {
    for (Expr::Product& t : p) t.constant = static_cast<int64_t>(0 - static_cast<uint64_t>(t.constant));
    return p;
  }
  std::optional<Poly> poly(int i) const {
    const Node& n = nodes[static_cast<size_t>(i)];
    switch (n.code.op) {
      case Op::Const:
      case Op::Field: return Poly{*product(i)};
      case Op::Neg: {
        auto a = poly(n.kid[0]);
        if (!a) return std::nullopt;
        return negated(std::move(*a));
      }
      case Op::Mul: {
        const auto a = poly(n.kid[0]), b = poly(n.kid[1]);
        if (!a || !b) return std::nullopt;
        return times(*a, *b);
      }
      case Op::Add:
      case Op::Sub: {
        auto a = poly(n.kid[0]), b = poly(n.kid[1]);
        if (!a || !b || a->size() + b->size() > Expr::kMaxTerms) return std::nullopt;
        if (n.code.op == Op::Sub) *b = negated(std::move(*b));
        a->insert(a->end(), b->begin(), b->end());
        return a;
      }
      default: return std::nullopt;
    }
  }

  // Quotients form: splits the subtree into the leading polynomial (multiplied into
  // `lead`) and quotients "num / den [+- constant]" (appended to `q`); false when it does
  // not fit.
  struct Quotient {
    Poly num, den;
    int64_t add = 0;
  };
  bool factors(int i, Poly& lead, std::vector<Quotient>& q) const {
    if (auto p = poly(i)) {
      auto product = times(lead, *p);
      if (!product) return false;
      lead = std::move(*product);
      return true;
    }
    const Node& n = nodes[static_cast<size_t>(i)];
    if (n.code.op == Op::Mul) return factors(n.kid[0], lead, q) && factors(n.kid[1], lead, q);
    int div = i;
    int64_t add = 0;
    if (n.code.op == Op::Add || n.code.op == Op::Sub) {  // quotient +- constant
      const Node &a = nodes[static_cast<size_t>(n.kid[0])], &b = nodes[static_cast<size_t>(n.kid[1])];
      if (a.code.op == Op::Div && b.code.op == Op::Const) {
        div = n.kid[0];
        add = n.code.op == Op::Add ? b.code.arg : static_cast<int64_t>(0 - static_cast<uint64_t>(b.code.arg));
      } else if (n.code.op == Op::Add && a.code.op == Op::Const && b.code.op == Op::Div) {
        div = n.kid[1];
        add = a.code.arg;
      } else {
        return false;
      }
    }
    const Node& d = nodes[static_cast<size_t>(div)];
    if (d.code.op != Op::Div || q.size() >= Expr::kMaxQuotients) return false;
    auto num = poly(d.kid[0]), den = poly(d.kid[1]);
    if (!num || !den) return false;
    q.push_back({std::move(*num), std::move(*den), add});
    return true;
  }

  // A field tested against a constant: sets cond, cmp and value.
  bool test(int i, Expr& e) const {
    const Node& n = nodes[static_cast<size_t>(i)];
    if (n.code.op == Op::Field) {
      e.cond_ = load(n.code);
      e.cmp_ = Op::Ne;
      e.cmp_value_ = 0;
      return true;
    }
    static constexpr std::pair<Op, Op> kMirror[] = {{Op::Lt, Op::Gt}, {Op::Le, Op::Ge}, {Op::Gt, Op::Lt},
                                                    {Op::Ge, Op::Le}, {Op::Eq, Op::Eq}, {Op::Ne, Op::Ne}};
    for (const auto& [op, mirrored] : kMirror) {
      if (n.code.op != op) continue;
      const Expr::Code &a = nodes[static_cast<size_t>(n.kid[0])].code, &b = nodes[static_cast<size_t>(n.kid[1])].code;
      if (a.op == Op::Field && b.op == Op::Const) {
        e.cond_ = load(a), e.cmp_ = op, e.cmp_value_ = b.arg;
        return true;
      }
      if (a.op == Op::Const && b.op == Op::Field) {
        e.cond_ = load(b), e.cmp_ = mirrored, e.cmp_value_ = a.arg;
        return true;
      }
    }
    return false;
  }
};

void Expr::specialise() {
  form_ = Form::General;
  const ExprShape shape(code_);
  if (shape.root < 0) return;
  if (const auto p = shape.product(shape.root)) {
    yes_ = *p;
    form_ = Form::Product;
    return;
  }
  const ExprShape::Node& top = shape.nodes[static_cast<size_t>(shape.root)];
  if (top.code.op != Op::Select) {
    specialise_quotients(shape);
    return;
  }
  const auto yes = shape.product(top.kid[1]), no = shape.product(top.kid[2]);
  if (yes && no && shape.test(top.kid[0], *this)) {
    yes_ = *yes;
    no_ = *no;
    form_ = Form::Select;
  }
}

void Expr::specialise_quotients(const ExprShape& shape) {
  ExprShape::Poly lead{Product{}};  // 1
  std::vector<ExprShape::Quotient> q;
  if (!shape.factors(shape.root, lead, q)) return;
  terms_.clear();
  const auto add = [&](const ExprShape::Poly& p) {
    PolyRange r;
    r.begin = static_cast<uint16_t>(terms_.size());
    for (const Product& t : p) {
      if (t.count == 0) r.constant = static_cast<int64_t>(static_cast<uint64_t>(r.constant) + static_cast<uint64_t>(t.constant));
      if (t.count == 1) terms_.push_back(t);
    }
    r.mid = static_cast<uint16_t>(terms_.size());
    for (const Product& t : p)
      if (t.count > 1) terms_.push_back(t);
    r.end = static_cast<uint16_t>(terms_.size());
    return r;
  };
  lead_ = add(lead);
  quotient_count_ = static_cast<unsigned>(q.size());
  for (size_t j = 0; j < q.size(); ++j) quotients_[j] = {add(q[j].num), add(q[j].den), q[j].add};
  form_ = Form::Quotients;
}

void Expr::fuse() {
  fused_.clear();
  for (const Code& c : code_) {
    const bool binary = c.op != Op::Const && c.op != Op::Field && c.op != Op::Neg && c.op != Op::Not &&
                        c.op != Op::Select;
    if (binary && !fused_.empty() && fused_.back().src == Src::Stack &&
        (fused_.back().op == Op::Const || fused_.back().op == Op::Field)) {
      Code leaf = fused_.back();
      fused_.back() = Code{c.op, leaf.arg, leaf.bias, leaf.op == Op::Const ? Src::Const : Src::Field};
      continue;
    }
    fused_.push_back(c);
  }
}

std::optional<Expr::ProductTerms> Expr::product_terms() const {
  if (form_ != Form::Product) return std::nullopt;
  static_assert(kMaxFactors == 3, "ProductTerms holds three factors");
  ProductTerms t;
  t.constant = yes_.constant;
  t.count = yes_.count;
  for (unsigned i = 0; i < yes_.count; ++i) {
    t.slot[i] = yes_.factors[i].slot;
    t.bias[i] = yes_.factors[i].bias;
  }
  return t;
}

std::string_view Expr::form() const {
  switch (form_) {
    case Form::Product: return "product";
    case Form::Select: return "select";
    case Form::Quotients: return "quotients";
    case Form::General: break;
  }
  return "general";
}

namespace {

int64_t divide(int64_t a, int64_t b) {  // as the interpreter's Div
  return b == 0 ? 0 : b == -1 ? static_cast<int64_t>(0 - static_cast<uint64_t>(a)) : a / b;
}

}  // namespace

int64_t Expr::eval_quotients(const uint32_t* raw) const {
  const Product* terms = terms_.data();
  const auto poly = [&](const PolyRange& r) {
    uint64_t sum = static_cast<uint64_t>(r.constant);
    for (unsigned i = r.begin; i < r.mid; ++i)
      sum += static_cast<uint64_t>(terms[i].constant) * static_cast<uint64_t>(terms[i].factors[0](raw));
    for (unsigned i = r.mid; i < r.end; ++i) sum += static_cast<uint64_t>(terms[i].eval(raw));
    return static_cast<int64_t>(sum);
  };
  uint64_t v = static_cast<uint64_t>(poly(lead_));
  for (unsigned j = 0; j < quotient_count_; ++j) {
    const Quotient& q = quotients_[j];
    v *= static_cast<uint64_t>(divide(poly(q.num), poly(q.den))) + static_cast<uint64_t>(q.add);
  }
  return static_cast<int64_t>(v);
}

int64_t Expr::eval_general(const uint32_t* raw) const {
  // Wrapping arithmetic through uint64: an ISA expression is total and never undefined.
  auto wrap = [](uint64_t v) { return static_cast<int64_t>(v); };
  int64_t stack[32];
  int sp = 0;
  for (const Code& c : fused_) {
    switch (c.op) {
      case Op::Const: stack[sp++] = c.arg; continue;
      case Op::Field: stack[sp++] = Load{static_cast<uint32_t>(c.arg), c.bias}(raw); continue;
      case Op::Neg: stack[sp - 1] = wrap(0 - static_cast<uint64_t>(stack[sp - 1])); continue;
      case Op::Not: stack[sp - 1] = !stack[sp - 1]; continue;
      case Op::Select: {
        const int64_t no = stack[--sp], yes = stack[--sp];
        stack[sp - 1] = stack[sp - 1] ? yes : no;
        continue;
      }
      default: break;
    }
    const int64_t b = c.src == Src::Stack ? stack[--sp]
                      : c.src == Src::Const ? c.arg
                                            : Load{static_cast<uint32_t>(c.arg), c.bias}(raw);
    int64_t& a = stack[sp - 1];
    const auto ua = static_cast<uint64_t>(a), ub = static_cast<uint64_t>(b);
    switch (c.op) {
      case Op::Add: a = wrap(ua + ub); break;
      case Op::Sub: a = wrap(ua - ub); break;
      case Op::Mul: a = wrap(ua * ub); break;
      case Op::Div: a = b == 0 ? 0 : b == -1 ? wrap(0 - ua) : a / b; break;  // total: never traps
      case Op::Mod: a = b == 0 || b == -1 ? 0 : a % b; break;
      case Op::Shl: a = (b < 0 || b > 62) ? 0 : wrap(ua << b); break;
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
