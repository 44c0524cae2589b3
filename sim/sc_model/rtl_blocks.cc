// The Verilated scratchpad and decoder models behind RtlSram / RtlDecoder, and the decoder's
// adapter. The scratchpad's port scheduling is in rtl_sram.cc.
#include "sim/sc_model/rtl_blocks.h"

#include <algorithm>
#include <type_traits>

#include <fmt/format.h>

// Once SystemC is included, verilated_funcs.h calls an unqualified sc_time_stamp() (see
// rtl_compute.cc).
using sc_core::sc_time_stamp;
#include "Vnpu_decoder.h"
#include "Vnpu_scratchpad.h"
#include "rtl_plant_models.h"
#include "sim/sc_model/npu_top.h"
#include "util/error.h"

namespace npuforge::sim::sc_model {
namespace {

uint32_t le32(const uint8_t* p) {
  return uint32_t{p[0]} | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16 | uint32_t{p[3]} << 24;
}

// A Verilated port as 32-bit words, bit 0 first: an integer up to 64 bits wide, else a VlWide.
template <class Port>
void set_words(Port& port, const uint32_t* w, unsigned n) {
  if constexpr (std::is_integral_v<Port>) {
    uint64_t v = w[0];
    if (n > 1) v |= uint64_t{w[1]} << 32;
    port = static_cast<Port>(v);
  } else {
    for (unsigned i = 0; i < n; ++i) port.at(i) = w[i];
  }
}

template <class Port>
uint32_t word_of(const Port& port, unsigned i) {
  if constexpr (std::is_integral_v<Port>) {
    return 32 * i < 8 * sizeof(Port) ? static_cast<uint32_t>(uint64_t{port} >> (32 * i)) : 0;
  } else {
    return port.at(i);
  }
}

template <class M>
class SramDriver final : public RtlSram::Model {
 public:
  // The geometry is held on the cfg pins for the whole run; the model loads it in reset.
  explicit SramDriver(RtlSram::Geometry g)
      : m_("rtl"), lane_words_((std::max(1u << g.width_bits, 4u)) / 4), bytes_(1u << g.width_bits) {
    m_.cfg_bank_bits = static_cast<uint8_t>(g.bank_bits);
    m_.cfg_width_bits = static_cast<uint8_t>(g.width_bits);
    // Settle with the clock low, so that the first clk = 1 is seen as a rising edge.
    m_.clk = 0;
    m_.eval();
  }
  ~SramDriver() override { m_.final(); }

  // Only the configured bank word's lanes and enables are driven (the RTL ignores the rest).
  void cycle(const RtlSram::Pins& p) override {
    m_.rst_n = p.rst_n;
    m_.wr_en = p.wr_en;
    if (p.wr_en) {  // the clocked adapter left the data pins as they were while wr_en was low
      for (unsigned i = 0; i < lane_words_; ++i) m_.wr_data.at(i) = le32(p.wr_lane + 4 * i);
      set_enables(p.be_off, p.be_len);
      m_.wr_addr = static_cast<std::remove_reference_t<decltype(m_.wr_addr)>>(p.wr_addr);
    }
    m_.rd_en = p.rd_en;
    if (p.rd_en) m_.rd_addr = static_cast<std::remove_reference_t<decltype(m_.rd_addr)>>(p.rd_addr);
    m_.clk = 1;
    m_.eval();
    m_.clk = 0;
    m_.eval();
  }

  RtlSram::Outputs outputs() const override {
    RtlSram::Outputs o;
    o.rd_valid = m_.rd_valid != 0;
    o.conflict = m_.conflict;
    for (unsigned i = 0; i < lane_words_; ++i) {
      const uint32_t v = m_.rd_data.at(i);
      for (unsigned b = 0; b < 4; ++b) o.rd_lane[4 * i + b] = static_cast<uint8_t>(v >> (8 * b));
    }
    return o;
  }

 private:
  // wr_be bits [off, off + len) of the configured word, the rest of its words cleared.
  void set_enables(unsigned off, unsigned len) {
    const unsigned be_words = (bytes_ + 31) / 32;
    for (unsigned i = 0; i < be_words; ++i) {
      const unsigned lo = std::max(off, 32 * i), hi = std::min(off + len, 32 * i + 32);
      m_.wr_be.at(i) = hi <= lo ? 0u : static_cast<uint32_t>(((uint64_t{1} << (hi - lo)) - 1) << (lo - 32 * i));
    }
  }

  // The default VerilatedContext (see rtl_compute.cc).
  M m_;
  unsigned lane_words_;  // 32-bit words of the configured bank word (at least one)
  unsigned bytes_;
};

template <class M>
class DecoderDriver final : public RtlDecoder::Model {
 public:
  DecoderDriver() : m_("rtl") {
    m_.clk = 0;
    m_.rst_n = 0;
    m_.eval();
  }
  ~DecoderDriver() override { m_.final(); }

  void reset() override {
    m_.rst_n = 0;
    m_.in_valid = 0;
    tick();
    tick();
    m_.rst_n = 1;
  }
  RtlDecoder::Decoded decode(const uint32_t* words) override {
    set_words(m_.instr, words, 8);
    m_.in_valid = 1;
    tick();
    m_.in_valid = 0;
    RtlDecoder::Decoded d;
    d.out_valid = m_.out_valid != 0;
    d.illegal = m_.illegal != 0 || !d.out_valid;
    d.queue = m_.queue_id;
    d.field_count = m_.field_count;
    for (unsigned s = 0; s < RtlDecoder::kMaxFields; ++s) d.fields[s] = word_of(m_.fields, s);
    return d;
  }

 private:
  void tick() {
    m_.clk = 1;
    m_.eval();
    m_.clk = 0;
    m_.eval();
  }
  M m_;
};

template <class Signal>
void trace_signal(sc_core::sc_trace_file* tf, const Signal& s) {
  if (tf) sc_core::sc_trace(tf, s, s.name());
}

}  // namespace

uint64_t FallingEdges::after(const sc_core::sc_time& t) {
  const uint64_t v = t.value(), p = kCycle.value(), h = p / 2;
  return v < h ? 0 : (v - h) / p + 1;
}

uint64_t FallingEdges::before(const sc_core::sc_time& t) {
  const uint64_t v = t.value(), p = kCycle.value(), h = p / 2;
  return v <= h ? 0 : (v - h + p - 1) / p;
}

bool FallingEdges::at(const sc_core::sc_time& t) {
  const uint64_t v = t.value(), p = kCycle.value(), h = p / 2;
  return v >= h && (v - h) % p == 0;
}

sc_core::sc_time FallingEdges::time(uint64_t n) {
  return sc_core::sc_time::from_value(n * kCycle.value() + kCycle.value() / 2);
}

std::unique_ptr<RtlSram::Model> RtlSram::make_model(Plant plant, Geometry g) {
  // The variants come from the plant catalogue (util/plant.h) through rtl_plant_models.h.
#define NPUFORGE_SRAM_VARIANT(id) \
  if (plant.is(PlantId::id)) return std::make_unique<SramDriver<V##id>>(g);
  NPUFORGE_RTL_PLANT_MODELS_npu_scratchpad(NPUFORGE_SRAM_VARIANT)
#undef NPUFORGE_SRAM_VARIANT
  return std::make_unique<SramDriver<Vnpu_scratchpad>>(g);
}

uint64_t stuck_bit_alias_bytes(const isa::NpuConfig& config) {
  return uint64_t{config.bank_width_bytes} << plant_info(PlantId::RtlScratchpadStuckBit).rtl.value;
}

RtlDecoder::RtlDecoder(sc_core::sc_module_name name, sc_core::sc_clock* clk, sc_core::sc_trace_file* tf,
                       Plant plant)
    : sc_module(name), clk_(clk) {
#define NPUFORGE_DECODER_VARIANT(id) \
  if (plant.is(PlantId::id)) model_ = std::make_unique<DecoderDriver<V##id>>();
  NPUFORGE_RTL_PLANT_MODELS_npu_decoder(NPUFORGE_DECODER_VARIANT)
#undef NPUFORGE_DECODER_VARIANT
  if (!model_) model_ = std::make_unique<DecoderDriver<Vnpu_decoder>>();
  if (!clk_) return;
  trace_signal(tf, in_valid);
  trace_signal(tf, instr);
  trace_signal(tf, out_valid);
  trace_signal(tf, illegal);
  trace_signal(tf, queue_id);
  trace_signal(tf, field_count);
  trace_signal(tf, fields);
}

RtlDecoder::~RtlDecoder() = default;

void RtlDecoder::wait_until(const sc_core::sc_time& t) {
  if (t > sc_core::sc_time_stamp()) wait(t - sc_core::sc_time_stamp());
}

// The clocked adapter waited for the next falling edge (a reset cycle first, on first use),
// drove the word, and read the outputs on the falling edge after; its caller resumed one
// delta cycle after that edge. The same cycles here, evaluated at once, then one wait.
RtlDecoder::Decoded RtlDecoder::decode(std::span<const uint8_t> word) {
  const sc_core::sc_time now = sc_core::sc_time_stamp();
  // A falling edge at this very time has not fired yet in the first delta cycle of the time
  // step (the clock's edge event comes one delta later), so the clocked adapter caught it.
  uint64_t edge = FallingEdges::after(now);
  if (FallingEdges::at(now) && sc_core::sc_delta_count_at_current_time() == 0) --edge;
  if (!reset_done_) {  // rst_n was low from time 0 until the edge after the first wait
    model_->reset();
    reset_done_ = true;
    edge += 2;
  }
  uint32_t words[8];
  for (unsigned i = 0; i < 8; ++i) words[i] = le32(word.data() + 4 * i);
  if (clk_) {
    wait_until(FallingEdges::time(edge));
    sc_dt::sc_bv<256> bv;
    for (unsigned i = 0; i < 8; ++i) bv.set_word(i, words[i]);
    instr.write(bv);
    in_valid.write(true);
    wait_until(FallingEdges::time(edge) + kCycle / 2);
  }
  const Decoded d = model_->decode(words);
  if (clk_) mirror_outputs(d);
  wait_until(FallingEdges::time(edge + 1));
  if (clk_) in_valid.write(false);
  wait(sc_core::SC_ZERO_TIME);
  return d;
}

void RtlDecoder::mirror_outputs(const Decoded& d) {
  out_valid.write(d.out_valid);
  illegal.write(d.illegal && d.out_valid);
  queue_id.write(d.queue);
  field_count.write(d.field_count);
  sc_dt::sc_bv<32 * kMaxFields> f;
  for (unsigned s = 0; s < kMaxFields; ++s) f.set_word(s, d.fields[s]);
  fields.write(f);
}

}  // namespace npuforge::sim::sc_model
