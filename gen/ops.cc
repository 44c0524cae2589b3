// One function per instruction template (gen/roles.h): each emits an instruction of the
// ISA that follows its role, bound by field name. It picks the fields from the profile,
// reuses live symbols as inputs (fitting its shape to their written size, so every read
// lies inside bytes its producer wrote) or loads fresh ones, sizes operands with the ISA's
// operand expressions, places its output and emits.
#include <algorithm>

#include "gen/builder.h"

namespace npuforge::gen {
namespace {

// Pins `sym` for the duration of one operation so that the OOM policies leave it alone.
struct Pin {
  Builder& b;
  unsigned slot;
  Pin(Builder& builder, uint32_t sym) : b(builder), slot(kNoSlot) {
    if (sym == kNone) return;
    for (slot = 0; b.pin_[slot] != kNone;) ++slot;
    b.pin_[slot] = sym;
  }
  ~Pin() {
    if (slot != kNoSlot) b.pin_[slot] = kNone;
  }
  static constexpr unsigned kNoSlot = ~0u;
  Pin(const Pin&) = delete;
  Pin& operator=(const Pin&) = delete;
};

}  // namespace

void Builder::step() {
  if (!spilled_.empty() && rng_.chance(0.15)) return reload_one();
  if (p_.directed_rate > 0 && rng_.chance(p_.directed_rate)) return directed();
  // A buffer well past its due point gets a consumer now, so lifetimes stay bounded.
  if (!due_heap_.empty() && rng_.chance(0.1)) {
    const uint32_t top = sym_of(due_heap_.front());
    if (syms_[top].live && due_of(due_heap_.front()) + uint64_t(p_.lifetime.max / 2) < now() && !pinned(top) &&
        refs(top) > 0) {
      store_of(top, true);
      return;
    }
  }
  double total = 0;
  for (double w : p_.mix) total += w;
  double u = static_cast<double>(rng_.next() >> 11) * 0x1.0p-53 * total;
  unsigned k = 0;
  while (k + 1 < kNumOpKinds && (u -= p_.mix[k]) >= 0) ++k;
  switch (static_cast<OpKind>(k)) {
    case OpKind::Load: load_sampled(p_.load_sizes, true); break;
    case OpKind::Store: {
      const uint32_t src = pick_input(1, false);
      if (src != kNone) store_of(src, true);
      else load_sampled(p_.load_sizes);
      break;
    }
    case OpKind::Gemm: op_gemm(); break;
    case OpKind::Im2col: op_im2col(); break;
    case OpKind::Eltwise: op_eltwise(); break;
    case OpKind::Pool: op_pool(); break;
    case OpKind::Move: op_move(); break;
    case OpKind::Lut: op_lut(); break;
    case OpKind::Nop: emit(roles_.pick(OpKind::Nop, rng_).make(), {}, {}); break;
    case OpKind::Sync: emit(roles_.pick(OpKind::Sync, rng_).make(), {}, {}); break;
  }
}

// LOAD of `bytes` (rounded down to what rows x row_bytes can express unless exact) from the
// DDR input region into a new symbol with `refs` consumers to come.
uint32_t Builder::load_fresh(uint64_t bytes, uint32_t refs, bool exact, bool may_die) {
  const Bound& ld = roles_.pick(OpKind::Load, rng_);
  uint32_t rows = 1, rb = 1;
  if (bytes <= dma_limits_.row_bytes && rng_.chance(0.6)) {
    rb = static_cast<uint32_t>(bytes);
  } else if (!factor_exact(bytes, dma_limits_, rows, rb)) {
    if (exact) return kNone;
    factor_floor(bytes, dma_limits_, rows, rb);
  }
  return load_rows(ld, rows, rb, refs, may_die);
}

uint32_t Builder::load_rows(const Bound& ld, uint32_t rows, uint32_t rb, uint32_t refs, bool may_die, bool at_end) {
  const uint64_t size = uint64_t(rows) * rb;
  const uint32_t sym = new_symbol(size, may_die ? refs : std::max<uint32_t>(refs, 1), OpKind::Load, 0);
  if (sym == kNone) return kNone;
  uint64_t stride = rb;
  if (rows > 1 && rng_.chance(0.3)) stride += rng_.below(align_ + 1);
  if ((rows - 1) * stride + rb > ddr_.input_bytes) stride = rb;
  const uint64_t extent = (rows - 1) * stride + rb;
  uint64_t src = ddr_.input_base + rng_.below(ddr_.input_bytes - extent + 1);
  if (rng_.chance(0.5)) src = src / align_ * align_;
  if (at_end) src = ddr_.input_base + ddr_.input_bytes - extent;  // its last byte is the region's
  isa::Instruction in = ld.make();
  in.raw[ld[dma::ddr]] = static_cast<uint32_t>(src);
  in.raw[ld[dma::rows]] = rows;
  in.raw[ld[dma::row_bytes]] = rb;
  in.raw[ld[dma::stride]] = static_cast<uint32_t>(stride);
  const Use w{sym, ld[dma::sram]};
  emit(in, {}, {&w, 1});
  return sym;
}

// STORE of a symbol's written bytes (or a prefix) to DDR. `ddr_dst` < 0: the next place in
// the output region. Spills pass consume = false, an exact DDR slot and its last reader.
bool Builder::store_of(uint32_t sym, bool consume, int64_t ddr_dst, int64_t ddr_dep) {
  const Bound& st = roles_.pick(OpKind::Store, rng_);
  uint32_t rows = 1, rb = 1;
  const uint64_t bytes = written(sym);
  if (ddr_dst >= 0) {
    if (!factor_exact(bytes, dma_limits_, rows, rb)) return false;
  } else if (bytes <= dma_limits_.row_bytes && rng_.chance(0.6)) {
    rb = static_cast<uint32_t>(bytes);
  } else {
    factor_floor(bytes, dma_limits_, rows, rb);
  }
  return store_rows(st, sym, rows, rb, consume, ddr_dst, ddr_dep);
}

bool Builder::store_rows(const Bound& st, uint32_t sym, uint32_t rows, uint32_t rb, bool consume, int64_t ddr_dst,
                         int64_t ddr_dep) {
  uint64_t stride = rb;
  if (ddr_dst < 0 && rows > 1 && rng_.chance(0.3)) stride += rng_.below(align_ + 1);
  const uint64_t extent = (rows - 1) * stride + rb;
  uint64_t dst = static_cast<uint64_t>(ddr_dst);
  if (ddr_dst < 0) {
    // Outputs only ever go to the output region; wrapping only overwrites earlier outputs,
    // which nobody reads and whose writers are earlier in the same (in-order) queue.
    if (out_cursor_ + extent > ddr_.output_base + ddr_.output_bytes) out_cursor_ = ddr_.output_base;
    dst = out_cursor_;
    out_cursor_ += (extent + align_ - 1) / align_ * align_;
  }
  isa::Instruction in = st.make();
  in.raw[st[dma::ddr]] = static_cast<uint32_t>(dst);
  in.raw[st[dma::rows]] = rows;
  in.raw[st[dma::row_bytes]] = rb;
  in.raw[st[dma::stride]] = static_cast<uint32_t>(stride);
  const Use r{sym, st[dma::sram], consume};
  emit(in, {&r, 1}, {}, ddr_dep);
  return true;
}

void Builder::op_gemm() {
  const Bound& g = roles_.pick(OpKind::Gemm, rng_);
  isa::Instruction in = g.make();
  int64_t m = rng_.range(p_.gemm_m.min, p_.gemm_m.max);
  int64_t n = rng_.range(p_.gemm_n.min, p_.gemm_n.max);
  int64_t k = rng_.range(p_.gemm_k.min, p_.gemm_k.max);
  uint32_t a = rng_.chance(p_.fan_in) ? pick_input(1, true) : kNone;
  if (a != kNone) {  // fit m x k into what the producer wrote
    const auto w = static_cast<int64_t>(written(a));
    k = std::min<int64_t>(k, std::min<int64_t>(w, g.field(gemm::k).max));
    m = std::max<int64_t>(1, std::min<int64_t>(m, w / k));
  }
  in.raw[g[gemm::m]] = static_cast<uint32_t>(m);
  in.raw[g[gemm::k]] = static_cast<uint32_t>(k);
  if (a == kNone && (a = load_fresh(operand_bytes(in, g.operand[gemm::a]), sample_refs())) == kNone) return;
  Pin pa(*this, a);
  uint32_t b = rng_.chance(p_.fan_in) ? pick_input(uint64_t(k), true) : kNone;  // at least one column
  if (b != kNone) n = std::max<int64_t>(1, std::min<int64_t>(n, static_cast<int64_t>(written(b)) / k));
  in.raw[g[gemm::n]] = static_cast<uint32_t>(n);
  if (b == kNone && (b = load_fresh(operand_bytes(in, g.operand[gemm::b]), sample_refs())) == kNone) return;
  Pin pb(*this, b);
  uint32_t bias = kNone;
  if (rng_.chance(p_.gemm_bias)) {
    in.raw[g[gemm::has_bias]] = 1;
    const uint64_t bytes = operand_bytes(in, g.operand[gemm::bias]);
    bias = rng_.chance(p_.fan_in) ? pick_input(bytes, true) : kNone;
    if (bias == kNone) bias = load_fresh(bytes, sample_refs());
  }
  in.raw[g[gemm::has_bias]] = bias != kNone;
  Pin pc(*this, bias);
  uint32_t qp = kNone;  // per-channel requant table: n * 8 bytes (ISA v2)
  if (rng_.chance(p_.gemm_per_channel)) {
    in.raw[g[gemm::per_channel]] = 1;
    const uint64_t bytes = operand_bytes(in, g.operand[gemm::qp]);
    qp = rng_.chance(p_.fan_in) ? pick_input(bytes, true) : kNone;
    if (qp == kNone) qp = load_fresh(bytes, sample_refs());
  }
  in.raw[g[gemm::per_channel]] = qp != kNone;
  Pin pq(*this, qp);
  auto depth_of = [&](uint32_t sym) { return sym == kNone ? uint8_t{0} : syms_[sym].depth; };
  const uint8_t depth =
      static_cast<uint8_t>(1 + std::max({syms_[a].depth, syms_[b].depth, depth_of(bias), depth_of(qp)}));
  const uint32_t dst = new_symbol(operand_bytes(in, g.operand[gemm::dst]), sample_refs(), OpKind::Gemm, depth);
  if (dst == kNone) return;
  in.raw[g[gemm::scale]] = static_cast<uint32_t>(rng_.range(1, 255));
  in.raw[g[gemm::shift]] = static_cast<uint32_t>(rng_.range(0, 16));
  in.raw[g[gemm::relu]] = static_cast<uint32_t>(rng_.below(2));
  Use reads[4] = {{a, g[gemm::a]}, {b, g[gemm::b]}};
  unsigned n_reads = 2;
  if (bias != kNone) reads[n_reads++] = {bias, g[gemm::bias]};
  if (qp != kNone) reads[n_reads++] = {qp, g[gemm::qp]};
  const Use w{dst, g[gemm::dst]};
  emit(in, {reads, n_reads}, {&w, 1});
}

void Builder::op_im2col() {
  const Bound& g = roles_.pick(OpKind::Im2col, rng_);
  auto draw = [&](const Range& r) { return rng_.range(r.min, r.max); };
  const int64_t h = draw(p_.im2col_h), w = draw(p_.im2col_w), c = draw(p_.im2col_c);
  const int64_t pt = draw(p_.im2col_pad), pl = draw(p_.im2col_pad), pb = draw(p_.im2col_pad), pr = draw(p_.im2col_pad);
  const int64_t sh = draw(p_.im2col_stride), sw = draw(p_.im2col_stride);
  const int64_t dh = draw(p_.im2col_dilation), dw = draw(p_.im2col_dilation);
  // The dilated kernel must fit the padded image: (k - 1) * dil + 1 <= size + pads.
  const int64_t kh = std::min(draw(p_.im2col_kernel), std::min<int64_t>(g.field(im2col::kh).max, (h + pt + pb - 1) / dh + 1));
  const int64_t kw = std::min(draw(p_.im2col_kernel), std::min<int64_t>(g.field(im2col::kw).max, (w + pl + pr - 1) / dw + 1));
  isa::Instruction in = g.make();
  const std::pair<unsigned, int64_t> fields[] = {
      {im2col::h, h},          {im2col::w, w},         {im2col::c, c},           {im2col::kh, kh},
      {im2col::kw, kw},        {im2col::stride_h, sh}, {im2col::stride_w, sw},   {im2col::pad_top, pt},
      {im2col::pad_left, pl},  {im2col::pad_bottom, pb}, {im2col::pad_right, pr}, {im2col::dil_h, dh},
      {im2col::dil_w, dw}};
  for (const auto& [f, v] : fields) in.raw[g[f]] = static_cast<uint32_t>(v);
  const uint64_t in_bytes = operand_bytes(in, g.operand[im2col::src]);
  uint32_t src = rng_.chance(p_.fan_in) ? pick_input(in_bytes, true) : kNone;
  if (src == kNone && (src = load_fresh(in_bytes, sample_refs())) == kNone) return;
  Pin ps(*this, src);
  const uint32_t dst = new_symbol(operand_bytes(in, g.operand[im2col::dst]), sample_refs(), OpKind::Im2col,
                                  static_cast<uint8_t>(syms_[src].depth + 1));
  if (dst == kNone) return;
  const Use r{src, g[im2col::src]}, wr{dst, g[im2col::dst]};
  emit(in, {&r, 1}, {&wr, 1});
}

void Builder::op_eltwise() {
  const Bound& g = roles_.pick(OpKind::Eltwise, rng_);
  isa::Instruction in = g.make();
  const isa::FieldSpec& ops = g.field(eltwise::op);  // add, mul, relu, clip in the reference ISA
  in.raw[g[eltwise::op]] = enum_value(ops, rng_.below(ops.enum_values.size()));
  uint32_t a = rng_.chance(p_.fan_in) ? pick_input(1, true) : kNone;
  uint64_t len;
  if (a != kNone) {
    const uint64_t w = written(a);
    len = rng_.chance(0.7) ? w : 1 + rng_.below(w);
    in.raw[g[eltwise::len]] = static_cast<uint32_t>(len);
  } else {
    len = sample_size(p_.vector_sizes);
    in.raw[g[eltwise::len]] = static_cast<uint32_t>(len);
    if ((a = load_fresh(operand_bytes(in, g.operand[eltwise::a]), sample_refs())) == kNone) return;
  }
  Pin pa(*this, a);
  uint32_t b = kNone;
  if (const uint64_t b_bytes = operand_bytes(in, g.operand[eltwise::b]); b_bytes > 0) {  // binary ops only
    b = rng_.chance(p_.fan_in) ? pick_input(b_bytes, true) : kNone;
    if (b == kNone && (b = load_fresh(b_bytes, sample_refs())) == kNone) return;
  }
  Pin pb(*this, b);
  const uint8_t depth = static_cast<uint8_t>(1 + std::max(syms_[a].depth, b == kNone ? uint8_t{0} : syms_[b].depth));
  const uint32_t dst = new_symbol(operand_bytes(in, g.operand[eltwise::dst]), sample_refs(), OpKind::Eltwise, depth);
  if (dst == kNone) return;
  draw_eltwise_params(in, g);
  Use reads[2] = {{a, g[eltwise::a]}, {b, g[eltwise::b]}};
  const Use w{dst, g[eltwise::dst]};
  emit(in, {reads, b != kNone ? 2u : 1u}, {&w, 1});
}

void Builder::draw_eltwise_params(isa::Instruction& in, const Bound& g) {
  in.raw[g[eltwise::scale]] = static_cast<uint32_t>(rng_.range(1, 255));
  in.raw[g[eltwise::shift]] = static_cast<uint32_t>(rng_.range(0, 12));
  const isa::FieldSpec &lo_f = g.field(eltwise::lo), &hi_f = g.field(eltwise::hi);
  const int64_t lo = rng_.range(lo_f.min, lo_f.max);
  in.set_value(g[eltwise::lo], lo);
  in.set_value(g[eltwise::hi], rng_.range(lo, hi_f.max));
}

void Builder::op_pool() {
  const Bound& g = roles_.pick(OpKind::Pool, rng_);
  auto draw = [&](const Range& r) { return rng_.range(r.min, r.max); };
  const int64_t wh = draw(p_.pool_window), ww = draw(p_.pool_window);
  const int64_t h = std::max(wh, draw(p_.pool_h)), w = std::max(ww, draw(p_.pool_w)), c = draw(p_.pool_c);
  const int64_t sh = draw(p_.pool_stride), sw = draw(p_.pool_stride);
  const int64_t pt = draw(p_.pool_pad), pl = draw(p_.pool_pad), pb = draw(p_.pool_pad), pr = draw(p_.pool_pad);
  isa::Instruction in = g.make();
  const std::pair<unsigned, int64_t> fields[] = {
      {pool::h, h},           {pool::w, w},           {pool::c, c},             {pool::window_h, wh},
      {pool::window_w, ww},   {pool::stride_h, sh},   {pool::stride_w, sw},     {pool::pad_top, pt},
      {pool::pad_left, pl},   {pool::pad_bottom, pb}, {pool::pad_right, pr}};
  for (const auto& [f, v] : fields) in.raw[g[f]] = static_cast<uint32_t>(v);
  const uint64_t in_bytes = operand_bytes(in, g.operand[pool::src]);
  uint32_t src = rng_.chance(p_.fan_in) ? pick_input(in_bytes, true) : kNone;
  if (src == kNone && (src = load_fresh(in_bytes, sample_refs())) == kNone) return;
  Pin ps(*this, src);
  const uint32_t dst = new_symbol(operand_bytes(in, g.operand[pool::dst]), sample_refs(), OpKind::Pool,
                                  static_cast<uint8_t>(syms_[src].depth + 1));
  if (dst == kNone) return;
  const isa::FieldSpec& modes = g.field(pool::mode);  // max, avg in the reference ISA
  in.raw[g[pool::mode]] = enum_value(modes, rng_.below(modes.enum_values.size()));
  in.raw[g[pool::count_pad]] = rng_.chance(p_.pool_count_pad) ? 1 : 0;
  const Use r{src, g[pool::src]}, wr{dst, g[pool::dst]};
  emit(in, {&r, 1}, {&wr, 1});
}

void Builder::op_move() {
  const Bound& g = roles_.pick(OpKind::Move, rng_);
  uint32_t src = pick_input(1, false);
  if (src == kNone && (src = load_sampled(p_.vector_sizes)) == kNone) return;
  Pin ps(*this, src);
  const uint64_t w = written(src);
  const uint64_t len = rng_.chance(0.7) ? w : 1 + rng_.below(w);
  isa::Instruction in = g.make();
  in.raw[g[move::len]] = static_cast<uint32_t>(len);
  const uint32_t dst = new_symbol(operand_bytes(in, g.operand[move::dst]), sample_refs(), OpKind::Move, syms_[src].depth);
  if (dst == kNone) return;
  const Use r{src, g[move::src]}, wr{dst, g[move::dst]};
  emit(in, {&r, 1}, {&wr, 1});
}

// LUT over a live symbol's bytes (or a fresh load) through a 256-byte table.
void Builder::op_lut() {
  const Bound& g = roles_.pick(OpKind::Lut, rng_);
  isa::Instruction in = g.make();
  uint32_t src = rng_.chance(p_.fan_in) ? pick_input(1, true) : kNone;
  if (src != kNone) {
    const uint64_t w = written(src);
    in.raw[g[lut::len]] = static_cast<uint32_t>(rng_.chance(0.7) ? w : 1 + rng_.below(w));
  } else {
    in.raw[g[lut::len]] = static_cast<uint32_t>(sample_size(p_.vector_sizes));
    if ((src = load_fresh(operand_bytes(in, g.operand[lut::src]), sample_refs())) == kNone) return;
  }
  Pin ps(*this, src);
  const uint64_t table_bytes = operand_bytes(in, g.operand[lut::table]);
  uint32_t table = rng_.chance(p_.fan_in) ? pick_input(table_bytes, true) : kNone;
  if (table == kNone && (table = load_fresh(table_bytes, sample_refs())) == kNone) return;
  Pin pt(*this, table);
  const uint8_t depth = static_cast<uint8_t>(1 + std::max(syms_[src].depth, syms_[table].depth));
  const uint32_t dst = new_symbol(operand_bytes(in, g.operand[lut::dst]), sample_refs(), OpKind::Lut, depth);
  if (dst == kNone) return;
  const Use reads[2] = {{src, g[lut::src]}, {table, g[lut::table]}};
  const Use wr{dst, g[lut::dst]};
  emit(in, {reads, 2}, {&wr, 1});
}

}  // namespace npuforge::gen
