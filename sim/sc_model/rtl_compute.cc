#include "sim/sc_model/rtl_compute.h"

#include <algorithm>
#include <array>
#include <span>
#include <type_traits>

#include <fmt/format.h>

// Once SystemC is included, verilated_funcs.h calls an unqualified sc_time_stamp() (it
// expects systemc.h's using-directives, which the --sc models' headers bring along).
using sc_core::sc_time_stamp;
#include "Vnpu_compute.h"
#include "rtl_plant_models.h"
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

// Drives a Verilated input port: an integer up to 64 bits wide, else a VlWide of words.
template <class Port, size_t N>
void drive(Port& port, const std::array<uint32_t, N>& w) {
  if constexpr (std::is_integral_v<Port>) {
    static_assert(N <= 2 && sizeof(Port) * 8 >= 32 * (N - 1));
    uint64_t v = w[0];
    if constexpr (N > 1) v |= uint64_t{w[1]} << 32;
    port = static_cast<Port>(v);
  } else {
    for (size_t i = 0; i < N; ++i) port.at(i) = w[i];
  }
}

template <class Port>
uint8_t byte_of(const Port& port, unsigned index) {
  if constexpr (std::is_integral_v<Port>) {
    return static_cast<uint8_t>(uint64_t{port} >> (8 * index));
  } else {
    return static_cast<uint8_t>(port.at(index / 4) >> (8 * (index % 4)));
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

template <class Signal>
void trace_signal(sc_core::sc_trace_file* tf, const Signal& s) {
  if (tf) sc_core::sc_trace(tf, s, s.name());
}

}  // namespace

// The Verilated model behind the operations compute() needs; one Driver<M> per variant.
class RtlCompute::Model {
 public:
  explicit Model(RtlCompute& owner) : owner_(owner) {}
  virtual ~Model() = default;
  Model(const Model&) = delete;
  Model& operator=(const Model&) = delete;

  virtual void reset() = 0;  // one reset cycle, then the reset values checked
  virtual void gemm(const Semantics::GemmSlots& s, const isa::Instruction& instr, const OperandBuffers& b) = 0;
  virtual void eltwise(const Semantics::EltwiseSlots& s, const isa::Instruction& instr, const OperandBuffers& b) = 0;

 protected:
  void cycle_done(const Strobes& s) { owner_.cycle_done(s); }
  void tile_done() { ++owner_.tiles_; }
  void monitor(std::string what) { owner_.monitor_(std::move(what)); }
  void expect_valid(bool valid, const char* port) {
    if (!valid) monitor(fmt::format("compute: {} low one cycle after its request", port));
  }

 private:
  RtlCompute& owner_;
};

namespace {

template <class M>
class Driver final : public RtlCompute::Model {
 public:
  explicit Driver(RtlCompute& owner) : Model(owner), m_("rtl") {
    // Settle with the clock low, so that the first clk = 1 is seen as a rising edge.
    m_.clk = 0;
    m_.eval();
  }
  ~Driver() override { m_.final(); }

  void reset() override {
    m_.rst_n = 0;
    tick();
    // Monitor: the documented reset values of the strobes.
    if (m_.gemm_valid || m_.elt_valid) monitor("compute: gemm_valid/elt_valid not 0 after reset");
    m_.rst_n = 1;
  }
  void gemm(const Semantics::GemmSlots& s, const isa::Instruction& instr, const OperandBuffers& b) override;
  void eltwise(const Semantics::EltwiseSlots& s, const isa::Instruction& instr, const OperandBuffers& b) override;

 private:
  static constexpr unsigned kRows = RtlCompute::kRows, kCols = RtlCompute::kCols, kLanes = RtlCompute::kLanes;

  // One cycle: the inputs set since the last cycle are sampled on the rising edge; the
  // registered outputs are readable after it.
  void tick() {
    m_.clk = 1;
    m_.eval();
    m_.clk = 0;
    m_.eval();
    cycle_done({m_.mac_en != 0, m_.mac_first != 0, m_.gemm_out_req != 0, m_.gemm_valid != 0, m_.elt_en != 0,
                m_.elt_valid != 0});
  }

  // The default VerilatedContext, as the --sc models use: one built here would be laid out
  // with this file's Verilator defines, not the model library's.
  M m_;
};

// Output-stationary tiles of kRows x kCols: k MAC cycles each; a tile's requant is requested
// in the first MAC cycle of the next tile (it reads the accumulators before that edge).
template <class M>
void Driver<M>::gemm(const Semantics::GemmSlots& s, const isa::Instruction& instr, const OperandBuffers& ob) {
  const uint64_t m = instr.get(s.m), n = instr.get(s.n), k = instr.get(s.k);
  const auto a = operand(instr, ob, s.a);
  const auto b = operand(instr, ob, s.b);
  const bool has_bias = instr.get(s.has_bias) != 0;
  const bool per_channel = instr.get(s.per_channel) != 0;
  const auto bias_bytes = has_bias ? operand(instr, ob, s.bias) : std::span<const uint8_t>{};
  const auto qp = per_channel ? operand(instr, ob, s.qp) : std::span<const uint8_t>{};
  m_.relu = instr.get(s.relu) != 0;

  struct Tile { uint64_t m0, n0; };
  bool pending = false;
  Tile prev{};
  auto collect = [&](const Tile& t) {  // after the cycle that requested t's requant
    expect_valid(m_.gemm_valid != 0, "gemm_valid");
    for (uint64_t r = 0; r < kRows && t.m0 + r < m; ++r)
      for (uint64_t c = 0; c < kCols && t.n0 + c < n; ++c)
        ob.out[(t.m0 + r) * n + t.n0 + c] = byte_of(m_.gemm_out, static_cast<unsigned>(r * kCols + c));
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
        drive(m_.a_col, a_w);
        drive(m_.b_row, b_w);
        m_.mac_en = 1;
        m_.mac_first = p == 0;
        m_.gemm_out_req = p == 0 && pending;
        if (p == 0) drive(m_.bias, bias_w);
        tick();
        if (p == 0 && pending) {
          collect(prev);
          pending = false;
        }
        // The requant parameters of the previous tile were used in the first cycle; now this tile's.
        if (p == 0) {
          drive(m_.scale, scale_w);
          drive(m_.shift, shift_w);
        }
      }
      if (k == 0) {  // the ISA forbids k = 0; keep the pipeline sane anyway
        drive(m_.scale, scale_w);
        drive(m_.shift, shift_w);
      }
      prev = {m0, n0};
      pending = true;
      tile_done();
    }
  }
  m_.mac_en = 0;
  m_.mac_first = 0;
  m_.gemm_out_req = pending;
  tick();
  if (pending) collect(prev);
  m_.gemm_out_req = 0;
}

template <class M>
void Driver<M>::eltwise(const Semantics::EltwiseSlots& s, const isa::Instruction& instr, const OperandBuffers& ob) {
  const uint64_t len = instr.get(s.len);
  const EltwiseOp op = s.ops.of(instr.get(s.op));
  const auto a = operand(instr, ob, s.a);
  const bool binary = op == EltwiseOp::Add || op == EltwiseOp::Mul;
  const auto b = binary ? operand(instr, ob, s.b) : std::span<const uint8_t>{};
  // The unit was Verilated with the package of the built-in ISA (npu_isa_pkg): its code for
  // the op, which a program of another ISA file may number otherwise.
  m_.elt_op = static_cast<uint8_t>(isa::builtin_isa().enum_value("eltwise", "op", to_string(op)));
  m_.elt_scale = static_cast<uint32_t>(instr.get(s.scale));
  m_.elt_shift = static_cast<uint8_t>(std::min<uint64_t>(instr.get(s.shift), 63));
  m_.elt_lo = static_cast<uint8_t>(instr.value(s.lo));
  m_.elt_hi = static_cast<uint8_t>(instr.value(s.hi));
  for (uint64_t i0 = 0; i0 < len; i0 += kLanes) {
    const unsigned lanes = static_cast<unsigned>(std::min<uint64_t>(kLanes, len - i0));
    Words<8 * kLanes> a_w{}, b_w{};
    for (unsigned l = 0; l < lanes; ++l) {
      put_byte<8 * kLanes>(a_w, l, a[i0 + l]);
      if (binary) put_byte<8 * kLanes>(b_w, l, b[i0 + l]);
    }
    drive(m_.elt_a, a_w);
    drive(m_.elt_b, b_w);
    m_.elt_en = 1;
    tick();
    expect_valid(m_.elt_valid != 0, "elt_valid");
    for (unsigned l = 0; l < lanes; ++l) ob.out[i0 + l] = byte_of(m_.elt_out, l);
    tile_done();
  }
  m_.elt_en = 0;
}

}  // namespace

RtlCompute::RtlCompute(sc_core::sc_module_name name, Plant plant, sc_core::sc_trace_file* tf,
                       std::function<void(std::string)> monitor)
    : sc_module(name), monitor_(std::move(monitor)), tracing_(tf != nullptr) {
  // The variants come from the plant catalogue (util/plant.h) through rtl_plant_models.h.
#define NPUFORGE_COMPUTE_VARIANT(id) \
  if (plant.is(PlantId::id)) model_ = std::make_unique<Driver<V##id>>(*this);
  NPUFORGE_RTL_PLANT_MODELS_npu_compute(NPUFORGE_COMPUTE_VARIANT)
#undef NPUFORGE_COMPUTE_VARIANT
  if (!model_) model_ = std::make_unique<Driver<Vnpu_compute>>(*this);
  trace_signal(tf, clk_);
  trace_signal(tf, mac_en_);
  trace_signal(tf, mac_first_);
  trace_signal(tf, gemm_out_req_);
  trace_signal(tf, gemm_valid_);
  trace_signal(tf, elt_en_);
  trace_signal(tf, elt_valid_);
}

RtlCompute::~RtlCompute() = default;

uint64_t RtlCompute::cycles() const {
  if (!in_call_) return cycles_;
  const uint64_t elapsed = to_cycles(sc_core::sc_time_stamp()) - call_start_cycle_;
  return call_base_cycles_ + std::min(elapsed, cycles_ - call_base_cycles_);
}

void RtlCompute::cycle_done(const Strobes& s) {
  ++cycles_;
  if (!tracing_) return;
  clk_.write(true);
  mac_en_.write(s.mac_en);
  mac_first_.write(s.mac_first);
  gemm_out_req_.write(s.gemm_out_req);
  gemm_valid_.write(s.gemm_valid);
  elt_en_.write(s.elt_en);
  elt_valid_.write(s.elt_valid);
  wait(kCycle / 2);
  clk_.write(false);
  wait(kCycle / 2);
}

void RtlCompute::compute(const Semantics& sem, const isa::Instruction& instr, const OperandBuffers& buffers) {
  const sc_core::sc_time t0 = sc_core::sc_time_stamp();
  in_call_ = true;
  call_start_cycle_ = to_cycles(t0);
  call_base_cycles_ = cycles_;
  struct EndCall {
    bool& in_call;
    ~EndCall() { in_call = false; }
  } end_call{in_call_};
  if (!reset_done_) {
    model_->reset();
    reset_done_ = true;
  }
  switch (sem.op(instr)) {
    case Op::Gemm: model_->gemm(sem.gemm_slots(), instr, buffers); break;
    case Op::Eltwise: model_->eltwise(sem.eltwise_slots(), instr, buffers); break;
    default: throw Error(fmt::format("rtl compute: {} is not a compute-unit instruction", instr.spec->mnemonic));
  }
  // The RTL ran its cycles in zero time (unless tracing); now they pass in simulated time.
  const sc_core::sc_time end = t0 + kCycle * static_cast<double>(cycles_ - call_base_cycles_);
  if (sc_core::sc_time_stamp() < end) wait(end - sc_core::sc_time_stamp());
}

}  // namespace npuforge::sim::sc_model
