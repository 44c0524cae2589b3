#pragma once
// Integer expressions over an instruction's fields, as written in npu_isa.yaml
// ("m * k", "has_bias ? n * 4 : 0"). Compiled once to postfix code with field names
// resolved to field slots, so evaluating one is a short loop with no lookups.
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace npuforge::isa {

class Expr {
 public:
  // Resolves a field name to its slot, or nullopt when no such field exists.
  using FieldResolver = std::function<std::optional<unsigned>(std::string_view)>;

  // Throws npuforge::Error naming `where` and the column on a syntax error or unknown field.
  static Expr compile(std::string_view text, const FieldResolver& resolve, std::string_view where);

  // `fields` holds the instruction's field values already sign-extended where signed.
  int64_t eval(std::span<const int64_t> fields) const;

  const std::string& text() const { return text_; }

 private:
  enum class Op : uint8_t {
    Const, Field, Neg, Not, Add, Sub, Mul, Div, Mod, Shl, Shr,
    Lt, Le, Gt, Ge, Eq, Ne, And, Or, Select
  };
  struct Code {
    Op op;
    int64_t arg;  // the constant, or the field slot
  };
  std::vector<Code> code_;
  std::string text_;
  friend class ExprParser;
};

}  // namespace npuforge::isa
