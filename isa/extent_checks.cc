#include "isa/extent_checks.h"

#include <fmt/core.h>

#include <algorithm>

#include "util/error.h"

namespace npuforge::isa {
namespace {

ExtentChecks::Check check_of(const Expr& e) {
  ExtentChecks::Check c;
  const auto p = e.product_terms();
  if (!p) {
    c.expr = &e;
    return c;
  }
  c.constant = p->constant;
  c.count = static_cast<uint8_t>(p->count);
  for (unsigned i = 0; i < p->count; ++i) {
    c.slot[i] = static_cast<uint8_t>(p->slot[i]);
    c.bias[i] = p->bias[i];
  }
  return c;
}

ExtentChecks::Spec spec_of(const InstrSpec& s) {
  if (s.fields.size() > kMaxFields || s.operands.size() > kMaxOperands)
    throw Error(fmt::format("extent checks: '{}' has more than {} fields or {} operands", s.mnemonic, kMaxFields,
                            kMaxOperands));
  ExtentChecks::Spec out;
  out.spec = &s;
  out.fields = static_cast<uint32_t>(s.fields.size());
  unsigned next = 0;
  for (unsigned f = 0; f < s.fields.size(); ++f) {
    const FieldSpec& fs = s.fields[f];
    ExtentChecks::Field& to = out.field[f];
    to.min = fs.min;
    to.max = fs.max;
    to.mask = fs.width >= 32 ? ~0u : (1u << fs.width) - 1;
    to.first = static_cast<uint8_t>(next);
    for (uint32_t ops = s.operands_of_field[f]; ops != 0; ops &= ops - 1) {
      const Expr& bytes = s.operands[static_cast<unsigned>(__builtin_ctz(ops))].bytes;
      out.check[next] = check_of(bytes);
      out.check[next++].field = static_cast<uint8_t>(f);
      out.reads |= bytes.fields_used();
    }
    to.count = static_cast<uint8_t>(next - to.first);
  }
  out.checks = next;
  return out;
}

}  // namespace

int64_t ExtentChecks::Check::eval_expr(const Expr& e, const uint32_t* raw) { return e.eval(raw); }

ExtentChecks::ExtentChecks(const Isa& isa) {
  specs_.reserve(isa.instructions().size());  // no reallocation: by_opcode_ points into it
  uint32_t top = 0;
  for (const InstrSpec& s : isa.instructions()) {
    specs_.push_back(spec_of(s));
    top = std::max(top, s.opcode);
  }
  by_opcode_.assign(size_t{top} + 1, nullptr);
  for (const Spec& s : specs_) by_opcode_[s.spec->opcode] = &s;
}

}  // namespace npuforge::isa
