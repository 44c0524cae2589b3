#include "gen/roles.h"

#include <fmt/core.h>

#include <algorithm>
#include <cstdint>
#include <string>

#include "util/error.h"

namespace npuforge::gen {
namespace {

using isa::Access;
using isa::FieldKind;
using isa::Queue;

// A field a template sets. Address fields name an operand of that access (and the space
// their kind says).
struct Need {
  const char* name;
  FieldKind kind;
  Access access = Access::Read;
};

struct RoleSpec {
  OpKind kind;
  Queue queue;
  std::vector<Need> fields;  // in the order of the role's index names (roles.h)
};

const std::vector<RoleSpec>& role_specs() {
  constexpr auto S = FieldKind::SramAddr, D = FieldKind::DdrAddr, Z = FieldKind::Size, H = FieldKind::Shape,
                 I = FieldKind::Imm, F = FieldKind::Flag, E = FieldKind::Enum;
  constexpr auto R = Access::Read, W = Access::Write;
  static const std::vector<RoleSpec> specs = {
      {OpKind::Load, Queue::Load, {{"dst", S, W}, {"src", D, R}, {"rows", Z}, {"row_bytes", Z}, {"stride", Z}}},
      {OpKind::Store, Queue::Store, {{"src", S, R}, {"dst", D, W}, {"rows", Z}, {"row_bytes", Z}, {"stride", Z}}},
      {OpKind::Gemm,
       Queue::Compute,
       {{"dst", S, W}, {"a", S, R}, {"b", S, R}, {"bias", S, R}, {"qp", S, R}, {"m", H}, {"n", H}, {"k", H},
        {"scale", I}, {"shift", I}, {"relu", F}, {"has_bias", F}, {"per_channel", F}}},
      {OpKind::Im2col,
       Queue::Compute,
       {{"dst", S, W}, {"src", S, R}, {"h", H}, {"w", H}, {"c", H}, {"kh", H}, {"kw", H}, {"stride_h", H},
        {"stride_w", H}, {"pad_top", H}, {"pad_left", H}, {"pad_bottom", H}, {"pad_right", H}, {"dil_h", H},
        {"dil_w", H}}},
      {OpKind::Eltwise,
       Queue::Compute,
       {{"dst", S, W}, {"a", S, R}, {"b", S, R}, {"len", Z}, {"op", E}, {"scale", I}, {"shift", I}, {"lo", I},
        {"hi", I}}},
      {OpKind::Pool,
       Queue::Compute,
       {{"dst", S, W}, {"src", S, R}, {"h", H}, {"w", H}, {"c", H}, {"window_h", H}, {"window_w", H},
        {"stride_h", H}, {"stride_w", H}, {"pad_top", H}, {"pad_left", H}, {"pad_bottom", H}, {"pad_right", H},
        {"mode", E}, {"count_pad", F}}},
      {OpKind::Move, Queue::Compute, {{"dst", S, W}, {"src", S, R}, {"len", Z}}},
      {OpKind::Lut, Queue::Compute, {{"dst", S, W}, {"src", S, R}, {"table", S, R}, {"len", Z}}},
  };
  return specs;
}

// Binds `s` to `r` when it follows the role (see roles.h).
bool follows(const isa::InstrSpec& s, const RoleSpec& r, Bound& out) {
  if (s.queue != r.queue) return false;
  unsigned addresses = 0;
  std::vector<bool> set(s.fields.size(), false);
  out.spec = &s;
  for (unsigned i = 0; i < r.fields.size(); ++i) {
    const Need& need = r.fields[i];
    const std::optional<unsigned> slot = s.field_index(need.name);
    if (!slot || s.fields[*slot].kind != need.kind) return false;
    out.slot[i] = static_cast<uint8_t>(*slot);
    set[*slot] = true;
    if (!s.fields[*slot].is_address()) continue;
    ++addresses;
    unsigned op = 0;
    while (op < s.operands.size() && !(s.operands[op].field == *slot && s.operands[op].access == need.access)) ++op;
    if (op == s.operands.size()) return false;
    out.operand[i] = static_cast<uint8_t>(op);
  }
  if (s.operands.size() != addresses) return false;  // an operand the template would not feed
  for (unsigned f = isa::kSignalSlot + 1; f < s.fields.size(); ++f)
    if (!set[f] && !s.fields[f].default_value) return false;  // a field the template would leave invalid
  return true;
}

std::string describe(const RoleSpec& r) {
  std::string fields, operands;
  for (const Need& n : r.fields) {
    if (n.kind == FieldKind::SramAddr || n.kind == FieldKind::DdrAddr)
      operands += fmt::format("{}{} ({} {})", operands.empty() ? "" : ", ", n.name, isa::to_string(n.kind),
                              isa::to_string(n.access));
    else
      fields += fmt::format("{}{} ({})", fields.empty() ? "" : ", ", n.name, isa::to_string(n.kind));
  }
  return fmt::format("queue {}; fields {}; operands {}", isa::to_string(r.queue), fields, operands);
}

// Why the profile needs a role, or empty when it does not.
std::string needed_by(OpKind kind, const Profile& p) {
  if (kind == OpKind::Load) return "every program loads its inputs";
  if (kind == OpKind::Store) return "every program stores its outputs";
  if (kind == OpKind::Move && p.oom == OomPolicy::Compact) return "allocator.oom is compact";
  const double w = p.mix[static_cast<unsigned>(kind)];
  return w > 0 ? fmt::format("mix.{} is {}", op_name(kind), w) : std::string();
}

}  // namespace

Roles::Roles(const isa::Isa& isa, const Profile& profile) {
  halt_ = &isa.require("halt");
  for (const isa::InstrSpec& s : isa.instructions()) {
    if (s.queue == Queue::Control) {
      if (&s == halt_) continue;
      Bound b;
      b.spec = &s;
      by_kind_[static_cast<unsigned>(s.mnemonic == "nop" ? OpKind::Nop : OpKind::Sync)].push_back(b);
      continue;
    }
    for (const RoleSpec& r : role_specs()) {
      Bound b;
      if (!follows(s, r, b)) continue;
      by_kind_[static_cast<unsigned>(r.kind)].push_back(b);
      break;  // roles are disjoint for a sane ISA; the first one wins otherwise
    }
  }
  for (unsigned k = 0; k < kNumOpKinds; ++k) {
    const auto kind = static_cast<OpKind>(k);
    const std::string why = needed_by(kind, profile);
    if (!by_kind_[k].empty() || why.empty()) continue;
    std::string what = fmt::format("a {} instruction", kind == OpKind::Nop ? "'nop'" : "control (barrier)");
    for (const RoleSpec& r : role_specs())
      if (r.kind == kind) what = describe(r);
    throw Error(fmt::format("isa '{}': no instruction follows the generator's '{}' template ({}), which the profile "
                            "needs: {}",
                            isa.name(), op_name(kind), what, why));
  }
}

DmaLimits Roles::dma_limits() const {
  DmaLimits l{UINT64_MAX, UINT64_MAX};
  for (OpKind kind : {OpKind::Load, OpKind::Store})
    for (const Bound& b : of(kind)) {
      l.rows = std::min(l.rows, static_cast<uint64_t>(b.field(dma::rows).max));
      l.row_bytes = std::min(l.row_bytes, static_cast<uint64_t>(b.field(dma::row_bytes).max));
    }
  return l;
}

uint64_t Roles::max_len() const {
  uint64_t len = UINT64_MAX;
  for (const Bound& b : of(OpKind::Eltwise)) len = std::min(len, static_cast<uint64_t>(b.field(eltwise::len).max));
  for (const Bound& b : of(OpKind::Move)) len = std::min(len, static_cast<uint64_t>(b.field(move::len).max));
  for (const Bound& b : of(OpKind::Lut)) len = std::min(len, static_cast<uint64_t>(b.field(lut::len).max));
  return len;
}

}  // namespace npuforge::gen
