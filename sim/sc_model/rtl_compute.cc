#include "sim/sc_model/rtl_compute.h"

#include <algorithm>
#include <array>

#include <fmt/format.h>

#include "Vnpu_compute.h"
#include "Vnpu_compute_mac_sign.h"
#include "Vnpu_compute_no_sat.h"
#include "Vnpu_compute_round.h"
#include "sim/sc_model/npu_top.h"
#include "util/error.h"

namespace npuforge::sim::sc_model {
namespace {

// A port's bits as 32-bit words, bit 0 first.
template <unsigned W>
using Words = std::array<uint32_t, (W + 31) / 32>;

template <unsigned W>
void put_bits(Words<W>& w, unsigned lsb, unsigned width, uint64_t value) {
  for (unsigned i = 0; i < width; ++i) {
    if (value >> i & 1) w[(lsb + i) / 32] |= 1u << ((lsb + i) % 32);
  }
}

template <unsigned W>
void put_byte(Words<W>& w, unsigned index, uint8_t value) {
  w[index / 4] |= uint32_t{value} << (8 * (index % 4));
}

template <unsigned W>
RtlPort<W> to_port(const Words<W>& w) {
  if constexpr (W <= 32) {
    return static_cast<RtlPort<W>>(w[0]);
  } else if constexpr (W <= 64) {
    return uint64_t{w[0]} | uint64_t{w[1]} << 32;
  } else {
    sc_dt::sc_bv<W> bv;
    for (unsigned i = 0; i < w.size(); ++i) bv.set_word(i, w[i]);
    return bv;
  }
}

template <unsigned W>
uint8_t byte_of(const RtlPort<W>& v, unsigned index) {
  if constexpr (W <= 64) {
    return static_cast<uint8_t>(uint64_t{v} >> (8 * index));
  } else {
    return static_cast<uint8_t>(v.get_word(index / 4) >> (8 * (index % 4)));
  }
}

std::span<const uint8_t> operand(const isa::Instruction& instr, const OperandBuffers& b, unsigned slot) {
  const auto& ops = instr.spec->operands;
  for (size_t i = 0; i < ops.size(); ++i) {
    if (ops[i].field == slot) return b.in[i];
  }
  throw Error(fmt::format("rtl compute: {} field slot {} is not an operand", instr.spec->mnemonic, slot));
}

uint32_t le32(const uint8_t* p) {
  return uint32_t{p[0]} | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16 | uint32_t{p[3]} << 24;
}

template <class M>
std::unique_ptr<sc_core::sc_module> make_compute(RtlCompute& c) {
  auto m = std::make_unique<M>("rtl");
  m->clk(c.clk);
  m->rst_n(c.rst_n);
  m->mac_en(c.mac_en);
  m->mac_first(c.mac_first);
  m->a_col(c.a_col);
  m->b_row(c.b_row);
  m->bias(c.bias);
  m->scale(c.scale);
  m->shift(c.shift);
  m->relu(c.relu);
  m->gemm_out_req(c.gemm_out_req);
  m->gemm_valid(c.gemm_valid);
  m->gemm_out(c.gemm_out);
  m->elt_en(c.elt_en);
  m->elt_op(c.elt_op);
  m->elt_a(c.elt_a);
  m->elt_b(c.elt_b);
  m->elt_scale(c.elt_scale);
  m->elt_shift(c.elt_shift);
  m->elt_lo(c.elt_lo);
  m->elt_hi(c.elt_hi);
  m->elt_valid(c.elt_valid);
  m->elt_out(c.elt_out);
  return m;
}

template <class Signal>
void trace_signal(sc_core::sc_trace_file* tf, const Signal& s) {
  if (tf) sc_core::sc_trace(tf, s, s.name());
}

}  // namespace

RtlCompute::RtlCompute(sc_core::sc_module_name name, RtlVariant variant, sc_core::sc_trace_file* tf,
                       std::function<void(std::string)> monitor)
    : sc_module(name), monitor_(std::move(monitor)) {
  switch (variant) {
    case RtlVariant::MacSign: model_ = make_compute<Vnpu_compute_mac_sign>(*this); break;
    case RtlVariant::NoSaturation: model_ = make_compute<Vnpu_compute_no_sat>(*this); break;
    case RtlVariant::RequantRound: model_ = make_compute<Vnpu_compute_round>(*this); break;
    default: model_ = make_compute<Vnpu_compute>(*this); break;
  }
  trace_signal(tf, clk);
  trace_signal(tf, mac_en);
  trace_signal(tf, mac_first);
  trace_signal(tf, gemm_out_req);
  trace_signal(tf, gemm_valid);
  trace_signal(tf, elt_en);
  trace_signal(tf, elt_valid);
}

RtlCompute::~RtlCompute() = default;

void RtlCompute::tick() {
  clk.write(true);
  wait(kCycle / 2);
  clk.write(false);
  wait(kCycle / 2);
  ++cycles_;
}

void RtlCompute::reset_once() {
  if (reset_done_) return;
  rst_n.write(false);
  tick();
  // Monitor: the documented reset values of the strobes.
  if (gemm_valid.read() || elt_valid.read()) monitor_("compute: gemm_valid/elt_valid not 0 after reset");
  rst_n.write(true);
  reset_done_ = true;
}

void RtlCompute::expect_valid(bool valid, const char* port) {
  if (!valid) monitor_(fmt::format("compute: {} low one cycle after its request", port));
}

void RtlCompute::compute(const Semantics& sem, const isa::Instruction& instr, const OperandBuffers& buffers) {
  reset_once();
  switch (sem.op(instr)) {
    case Op::Gemm: return gemm(sem.gemm_slots(), instr, buffers);
    case Op::Eltwise: return eltwise(sem.eltwise_slots(), instr, buffers);
    default: throw Error(fmt::format("rtl compute: {} is not a compute-unit instruction", instr.spec->mnemonic));
  }
}

// Output-stationary tiles of kRows x kCols: k MAC cycles each; a tile's requant is requested
// in the first MAC cycle of the next tile (it reads the accumulators before that edge).
void RtlCompute::gemm(const Semantics::GemmSlots& s, const isa::Instruction& instr, const OperandBuffers& ob) {
  const uint64_t m = instr.get(s.m), n = instr.get(s.n), k = instr.get(s.k);
  const auto a = operand(instr, ob, s.a);
  const auto b = operand(instr, ob, s.b);
  const bool has_bias = instr.get(s.has_bias) != 0;
  const bool per_channel = instr.get(s.per_channel) != 0;
  const auto bias_bytes = has_bias ? operand(instr, ob, s.bias) : std::span<const uint8_t>{};
  const auto qp = per_channel ? operand(instr, ob, s.qp) : std::span<const uint8_t>{};
  relu.write(instr.get(s.relu) != 0);

  struct Tile { uint64_t m0, n0; };
  bool pending = false;
  Tile prev{};
  auto collect = [&](const Tile& t) {  // after the cycle that requested t's requant
    expect_valid(gemm_valid.read(), "gemm_valid");
    const auto out = gemm_out.read();
    for (uint64_t r = 0; r < kRows && t.m0 + r < m; ++r)
      for (uint64_t c = 0; c < kCols && t.n0 + c < n; ++c)
        ob.out[(t.m0 + r) * n + t.n0 + c] = byte_of<8 * kRows * kCols>(out, static_cast<unsigned>(r * kCols + c));
  };
  for (uint64_t m0 = 0; m0 < m; m0 += kRows) {
    for (uint64_t n0 = 0; n0 < n; n0 += kCols) {
      Words<32 * kCols> bias_w{}, scale_w{};
      Words<6 * kCols> shift_w{};
      for (unsigned c = 0; c < kCols && n0 + c < n; ++c) {
        const uint64_t j = n0 + c;
        if (has_bias) bias_w[c] = le32(bias_bytes.data() + 4 * j);
        const uint32_t sc = per_channel ? le32(qp.data() + 8 * j) : static_cast<uint32_t>(instr.get(s.scale));
        const uint64_t sh = per_channel ? qp[8 * j + 4] : instr.get(s.shift);
        scale_w[c] = sc;
        put_bits<6 * kCols>(shift_w, 6 * c, 6, std::min<uint64_t>(sh, 63));  // the ISA: above 63 acts as 63
      }
      for (uint64_t p = 0; p < k; ++p) {
        Words<8 * kRows> a_w{};
        Words<8 * kCols> b_w{};
        for (unsigned r = 0; r < kRows && m0 + r < m; ++r) put_byte<8 * kRows>(a_w, r, a[(m0 + r) * k + p]);
        for (unsigned c = 0; c < kCols && n0 + c < n; ++c) put_byte<8 * kCols>(b_w, c, b[p * n + n0 + c]);
        a_col.write(to_port<8 * kRows>(a_w));
        b_row.write(to_port<8 * kCols>(b_w));
        mac_en.write(true);
        mac_first.write(p == 0);
        gemm_out_req.write(p == 0 && pending);
        if (p == 0) {
          bias.write(to_port<32 * kCols>(bias_w));
        }
        tick();
        if (p == 0 && pending) {
          collect(prev);
          pending = false;
        }
        // The requant parameters of the previous tile were used in the first cycle; now this tile's.
        if (p == 0) {
          scale.write(to_port<32 * kCols>(scale_w));
          shift.write(to_port<6 * kCols>(shift_w));
        }
      }
      if (k == 0) {  // the ISA forbids k = 0; keep the pipeline sane anyway
        scale.write(to_port<32 * kCols>(scale_w));
        shift.write(to_port<6 * kCols>(shift_w));
      }
      prev = {m0, n0};
      pending = true;
      ++tiles_;
    }
  }
  mac_en.write(false);
  mac_first.write(false);
  gemm_out_req.write(pending);
  tick();
  if (pending) collect(prev);
  gemm_out_req.write(false);
}

void RtlCompute::eltwise(const Semantics::EltwiseSlots& s, const isa::Instruction& instr, const OperandBuffers& ob) {
  const uint64_t len = instr.get(s.len);
  const auto op = static_cast<EltwiseOp>(instr.get(s.op));
  const auto a = operand(instr, ob, s.a);
  const bool binary = op == EltwiseOp::Add || op == EltwiseOp::Mul;
  const auto b = binary ? operand(instr, ob, s.b) : std::span<const uint8_t>{};
  elt_op.write(static_cast<uint32_t>(op));
  elt_scale.write(static_cast<uint32_t>(instr.get(s.scale)));
  elt_shift.write(static_cast<uint32_t>(std::min<uint64_t>(instr.get(s.shift), 63)));
  elt_lo.write(static_cast<uint8_t>(instr.value(s.lo)));
  elt_hi.write(static_cast<uint8_t>(instr.value(s.hi)));
  for (uint64_t i0 = 0; i0 < len; i0 += kLanes) {
    const unsigned lanes = static_cast<unsigned>(std::min<uint64_t>(kLanes, len - i0));
    Words<8 * kLanes> a_w{}, b_w{};
    for (unsigned l = 0; l < lanes; ++l) {
      put_byte<8 * kLanes>(a_w, l, a[i0 + l]);
      if (binary) put_byte<8 * kLanes>(b_w, l, b[i0 + l]);
    }
    elt_a.write(to_port<8 * kLanes>(a_w));
    elt_b.write(to_port<8 * kLanes>(b_w));
    elt_en.write(true);
    tick();
    expect_valid(elt_valid.read(), "elt_valid");
    const auto out = elt_out.read();
    for (unsigned l = 0; l < lanes; ++l) ob.out[i0 + l] = byte_of<8 * kLanes>(out, l);
    ++tiles_;
  }
  elt_en.write(false);
}

}  // namespace npuforge::sim::sc_model
