// The `extremes` directed sequence: operands at the ends of their ranges, which
// the random stream never reaches.
//
// - Zero-length operands. The ISA forbids a size field of 0 (`min: 1`), so a zero-length
//   operand is one whose size expression gives 0: a GEMM's bias and qp without has_bias /
//   per_channel, an ELTWISE's b for the unary ops. Their address fields still hold a value,
//   and here it is an extreme one (the field's maximum, one past the last SRAM byte,
//   or anything): a model that range-checks or touches an unused operand reports an
//   out-of-range access on a correct program.
// - Maximum-length operands: DMA rows and row lengths at their fields' maximum, GEMM m, n
//   or k at its field maximum, an ELTWISE over a third of the SRAM; each as large as the
//   SRAM allows. DMA transfers also hit the last bytes of the DDR input and output regions.
// Everything goes through the same symbol, token and OOM machinery as the random stream, so
// the programs stay race-free by construction.
#include <algorithm>
#include <vector>

#include "gen/builder.h"

namespace npuforge::gen {

void Builder::extremes(unsigned n) {
  for (unsigned i = 0; i < n; ++i) {
    switch (rng_.below(4)) {
      case 0: extreme_gemm(); break;
      case 1: extreme_eltwise(); break;
      case 2: extreme_dma(false); break;
      default: extreme_dma(true); break;
    }
  }
}

// An address for an operand of zero bytes: the field's maximum, the first byte past the
// SRAM, or any value the field holds.
uint32_t Builder::extreme_address(const isa::FieldSpec& f) {
  const auto top = static_cast<uint64_t>(f.max);
  switch (rng_.below(4)) {
    case 0:
    case 1: return static_cast<uint32_t>(top);
    case 2: return static_cast<uint32_t>(std::min<uint64_t>(npu_.sram_bytes.value, top));
    default: return static_cast<uint32_t>(rng_.below(top + 1));
  }
}

// GEMM with one of m, n, k at its maximum (the others 1) and no bias or qp: both unused
// operands point at extreme addresses.
void Builder::extreme_gemm() {
  if (roles_.of(OpKind::Gemm).empty()) return;
  const Bound& g = roles_.pick(OpKind::Gemm, rng_);
  isa::Instruction in = g.make();
  const unsigned dims[3] = {gemm::m, gemm::n, gemm::k};
  const unsigned big = dims[rng_.below(3)];
  for (unsigned d : dims) in.raw[g[d]] = 1;
  // Two operands grow with the big dimension (a and dst for m, b and dst for n, a and b for
  // k): a quarter of the SRAM each leaves room for what is live.
  in.raw[g[big]] = static_cast<uint32_t>(std::min<uint64_t>(g.field(big).max, npu_.sram_bytes.value / 4));
  in.raw[g[gemm::has_bias]] = 0;
  in.raw[g[gemm::per_channel]] = 0;
  in.raw[g[gemm::bias]] = extreme_address(g.field(gemm::bias));
  in.raw[g[gemm::qp]] = extreme_address(g.field(gemm::qp));
  // An ISA whose bias/qp do not vanish without their flags has no zero-length operand here.
  if (operand_bytes(in, g.operand[gemm::bias]) != 0 || operand_bytes(in, g.operand[gemm::qp]) != 0) return;
  const uint32_t a = load_fresh(operand_bytes(in, g.operand[gemm::a]), sample_refs());
  if (a == kNone) return;
  pin_[0] = a;  // the OOM policies leave the inputs alone until the GEMM is emitted
  const uint32_t b = load_fresh(operand_bytes(in, g.operand[gemm::b]), sample_refs());
  pin_[1] = b;
  const uint32_t dst = b == kNone ? kNone : new_symbol(operand_bytes(in, g.operand[gemm::dst]), sample_refs(), OpKind::Gemm, 1);
  pin_[0] = pin_[1] = kNone;
  if (dst == kNone) return;
  in.raw[g[gemm::scale]] = static_cast<uint32_t>(rng_.range(1, 255));
  in.raw[g[gemm::shift]] = static_cast<uint32_t>(rng_.range(0, 16));
  in.raw[g[gemm::relu]] = static_cast<uint32_t>(rng_.below(2));
  const Use reads[2] = {{a, g[gemm::a]}, {b, g[gemm::b]}};
  const Use w{dst, g[gemm::dst]};
  emit(in, {reads, 2}, {&w, 1});
}

// A unary ELTWISE (the ops whose b operand has no bytes, read from the ISA) of length 1 or
// a third of the SRAM, with b at an extreme address.
void Builder::extreme_eltwise() {
  if (roles_.of(OpKind::Eltwise).empty()) return;
  const Bound& g = roles_.pick(OpKind::Eltwise, rng_);
  isa::Instruction in = g.make();
  in.raw[g[eltwise::len]] = 1;
  std::vector<uint32_t> unary;
  for (const auto& [name, code] : g.field(eltwise::op).enum_values) {
    in.raw[g[eltwise::op]] = code;
    if (operand_bytes(in, g.operand[eltwise::b]) == 0) unary.push_back(code);
  }
  if (unary.empty()) return;
  in.raw[g[eltwise::op]] = unary[rng_.below(unary.size())];
  const uint64_t longest = std::min<uint64_t>(g.field(eltwise::len).max, npu_.sram_bytes.value / 3);
  const uint32_t a = load_fresh(rng_.chance(0.5) ? 1 : longest, sample_refs(), false);
  if (a == kNone) return;
  in.raw[g[eltwise::len]] = static_cast<uint32_t>(written(a));
  in.raw[g[eltwise::b]] = extreme_address(g.field(eltwise::b));
  pin_[0] = a;
  const uint32_t dst = new_symbol(operand_bytes(in, g.operand[eltwise::dst]), sample_refs(), OpKind::Eltwise, 1);
  pin_[0] = kNone;
  if (dst == kNone) return;
  draw_eltwise_params(in, g);
  const Use r{a, g[eltwise::a]};
  const Use w{dst, g[eltwise::dst]};
  emit(in, {&r, 1}, {&w, 1});
}

// A LOAD of one row as long as row_bytes holds, or of as many rows as `rows` holds (1 byte,
// or as wide as half the SRAM allows), then a STORE of the same bytes with rows and row
// length swapped: both DMA fields at their maximum, in both directions. Half of them touch the last bytes of the DDR input
// or output region.
void Builder::extreme_dma(bool many_rows) {
  const Bound& ld = roles_.pick(OpKind::Load, rng_);
  const uint64_t half = npu_.sram_bytes.value / 2;
  const auto max_rows = static_cast<uint64_t>(ld.field(dma::rows).max);
  const auto max_rb = static_cast<uint64_t>(ld.field(dma::row_bytes).max);
  uint64_t rows = 1, rb = std::min(max_rb, half);
  if (many_rows) {
    rows = std::min(max_rows, half);
    rb = rng_.chance(0.5) ? 1 : std::clamp<uint64_t>(half / rows, 1, max_rb);
  }
  const uint32_t sym = load_rows(ld, static_cast<uint32_t>(rows), static_cast<uint32_t>(rb),
                                 std::max<uint32_t>(sample_refs(), 1), false, rng_.chance(0.5));
  if (sym == kNone || !syms_[sym].live) return;
  const Bound& st = roles_.pick(OpKind::Store, rng_);
  // Swapped only where the store's fields hold the swapped shape.
  const bool swap = rb <= static_cast<uint64_t>(st.field(dma::rows).max) &&
                    rows <= static_cast<uint64_t>(st.field(dma::row_bytes).max);
  const uint64_t st_rows = swap ? rb : rows, st_rb = swap ? rows : rb;
  const int64_t at_end = rng_.chance(0.5) ? static_cast<int64_t>(ddr_.output_base + ddr_.output_bytes - rows * rb) : -1;
  store_rows(st, sym, static_cast<uint32_t>(st_rows), static_cast<uint32_t>(st_rb), true, at_end, -1);
}

}  // namespace npuforge::gen
