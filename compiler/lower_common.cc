// Lowering helpers shared by every op kind, the constants of the DDR image, and dispatch.
#include <cstring>
#include <type_traits>

#include <fmt/core.h>

#include "compiler/lower_util.h"
#include "util/error.h"

namespace npuforge::compiler {
namespace detail {

Dma contiguous(const IsaSlots& s, int64_t bytes) {
  const int64_t rb_max = IsaSlots::max(*s.load, s.ld.row_bytes);
  const int64_t rows_max = IsaSlots::max(*s.load, s.ld.rows);
  if (bytes <= rb_max) return {1, bytes, bytes};
  for (int64_t r = rb_max; r >= 1 && bytes / r <= rows_max; --r)
    if (bytes % r == 0) return {bytes / r, r, r};
  return {0, 0, 0};
}

static void dma(OpCode& code, const isa::InstrSpec& spec, const IsaSlots::Dma& f, uint32_t buf, uint64_t ddr,
                const Dma& d, int32_t ddr_buf, std::string_view what, uint32_t offset, bool is_load) {
  isa::Instruction in = isa::Instruction::make(spec);
  set_field(in, f.rows, d.rows, what);
  set_field(in, f.row_bytes, d.row_bytes, what);
  set_field(in, f.stride, d.rows == 1 ? d.row_bytes : d.stride, what);
  set_field(in, is_load ? f.src : f.dst, static_cast<int64_t>(ddr), what);
  code.add(in, ddr_buf);
  if (is_load) {
    code.write(buf, f.dst, offset);
  } else {
    code.read(buf, f.src, offset);
  }
}

void load(OpCode& code, const IsaSlots& s, uint32_t buf, uint64_t src, const Dma& d, int32_t ddr_buf,
          std::string_view what, uint32_t offset) {
  dma(code, *s.load, s.ld, buf, src, d, ddr_buf, what, offset, true);
}

void store(OpCode& code, const IsaSlots& s, uint32_t buf, uint64_t dst, const Dma& d, int32_t ddr_buf,
           std::string_view what, uint32_t offset) {
  dma(code, *s.store, s.st, buf, dst, d, ddr_buf, what, offset, false);
}

void load_contiguous(OpCode& code, const IsaSlots& s, uint32_t buf, uint64_t src, int64_t bytes, int32_t ddr_buf,
                     std::string_view what) {
  const Dma d = contiguous(s, bytes);
  if (d.rows > 0) return load(code, s, buf, src, d, ddr_buf, what);
  // No exact factorisation: full rows, then the tail.
  const int64_t rb = IsaSlots::max(*s.load, s.ld.row_bytes);
  const int64_t rows = bytes / rb, tail = bytes - rows * rb;
  load(code, s, buf, src, {rows, rb, rb}, ddr_buf, what);
  if (tail > 0)
    load(code, s, buf, src + rows * rb, {1, tail, tail}, ddr_buf, what, static_cast<uint32_t>(rows * rb));
}

RowSpan input_rows(const Window& w, int64_t in_h, int64_t oy0, int64_t oy1) {
  const int64_t span = (w.kernel_h - 1) * w.dilation_h + 1;
  const int64_t lo = oy0 * w.stride_h - w.pad_top;
  const int64_t hi = (oy1 - 1) * w.stride_h - w.pad_top + span;
  RowSpan r;
  r.lo = std::max<int64_t>(0, lo);
  r.hi = std::min(in_h, hi);
  r.pad_top = r.lo - lo;
  r.pad_bottom = hi - r.hi;
  return r;
}

std::string describe(const QGraph& g, const std::vector<std::string>& nodes, TensorId output, std::string_view kind) {
  const std::string name = !nodes.empty() ? nodes.front() : output.valid() ? g.tensor(output).name : "?";
  return fmt::format("{}: op '{}' ({})", g.source, name, kind);
}

}  // namespace detail

std::vector<ConvBlock> conv_blocks(const ConvOp& conv, int64_t in_channels, uint32_t mac_cols) {
  const int64_t cin_pg = conv.cin_per_group, cout_pg = conv.cout_per_group();
  const int64_t taps = conv.window.kernel_h * conv.window.kernel_w;
  std::vector<ConvBlock> blocks;
  if (conv.groups == 1) {
    blocks.push_back({0, 1, 0, in_channels, 0, conv.cout, taps * in_channels});
    return blocks;
  }
  const int64_t per = std::max<int64_t>(1, static_cast<int64_t>(mac_cols) / std::max<int64_t>(1, cout_pg));
  for (int64_t g0 = 0; g0 < conv.groups; g0 += per) {
    const int64_t n = std::min(per, conv.groups - g0);
    blocks.push_back({g0, n, g0 * cin_pg, n * cin_pg, g0 * cout_pg, n * cout_pg, taps * n * cin_pg});
  }
  return blocks;
}

std::vector<int8_t> block_weights(const ConvOp& conv, const ConvBlock& b) {
  if (conv.groups == 1) return conv.weights;
  const int64_t cin_pg = conv.cin_per_group, cout_pg = conv.cout_per_group();
  const int64_t taps = conv.window.kernel_h * conv.window.kernel_w;
  std::vector<int8_t> out(static_cast<size_t>(b.k * b.cout), 0);
  for (int64_t gi = 0; gi < b.groups; ++gi) {
    const std::vector<int8_t> gw = group_weights(conv, b.g0 + gi);  // [taps * cin_pg][cout_pg]
    for (int64_t t = 0; t < taps; ++t)
      for (int64_t ci = 0; ci < cin_pg; ++ci)
        for (int64_t co = 0; co < cout_pg; ++co)
          out[((t * b.cin + gi * cin_pg + ci) * b.cout) + gi * cout_pg + co] = gw[(t * cin_pg + ci) * cout_pg + co];
  }
  return out;
}

uint64_t ConstImage::add(std::string name, const void* data, uint64_t n) {
  const uint64_t addr = detail::pad_to(bytes.size(), alignment);
  bytes.resize(addr + n);
  if (n > 0) std::memcpy(bytes.data() + addr, data, n);
  bytes.resize(detail::pad_to(bytes.size(), alignment), 0);
  blobs.push_back({std::move(name), addr, detail::pad_to(n, alignment)});
  return addr;
}

namespace {

// The GEMM constants of one block: weights [k][cout], bias int32 LE, qp {u32 scale, u8 shift, 0, 0, 0}.
BlockConsts gemm_consts(const std::string& name, const std::vector<int8_t>& weights, const std::vector<int32_t>& bias,
                        const std::vector<isa::RequantParams>& rq, int64_t c0, int64_t n, ConstImage& image) {
  BlockConsts b;
  b.weights = image.add(name + ".weights", weights.data(), weights.size());
  std::vector<uint8_t> bias_bytes(static_cast<size_t>(4 * n)), qp(static_cast<size_t>(8 * n), 0);
  for (int64_t i = 0; i < n; ++i) {
    const auto v = static_cast<uint32_t>(bias[c0 + i]);
    b.has_bias = b.has_bias || v != 0;
    for (int byte = 0; byte < 4; ++byte) {
      bias_bytes[4 * i + byte] = static_cast<uint8_t>(v >> (8 * byte));
      qp[8 * i + byte] = static_cast<uint8_t>(rq[c0 + i].scale >> (8 * byte));
    }
    qp[8 * i + 4] = static_cast<uint8_t>(rq[c0 + i].shift);
  }
  if (b.has_bias) b.bias = image.add(name + ".bias", bias_bytes.data(), bias_bytes.size());
  b.qp = image.add(name + ".qp", qp.data(), qp.size());
  return b;
}

}  // namespace

OpConsts build_consts(const QGraph& g, const QOp& op, uint32_t mac_cols, ConstImage& image) {
  OpConsts c;
  if (const auto* conv = std::get_if<ConvOp>(&op)) {
    const QTensor& in = g.tensor(conv->input);
    const std::string& out = g.tensor(conv->output).name;
    const std::vector<ConvBlock> blocks = conv_blocks(*conv, in.storage_shape().back(), mac_cols);
    for (size_t i = 0; i < blocks.size(); ++i) {
      const std::string name = blocks.size() == 1 ? out : fmt::format("{}@b{}", out, i);
      c.blocks.push_back(gemm_consts(name, block_weights(*conv, blocks[i]), conv->bias, conv->requant,
                                     blocks[i].cout0, blocks[i].cout, image));
    }
  } else if (const auto* gemm = std::get_if<GemmOp>(&op)) {
    c.blocks.push_back(gemm_consts(g.tensor(gemm->output).name, gemm->weights, gemm->bias, gemm->requant, 0, gemm->n,
                                   image));
  } else if (const auto* lut = std::get_if<LutOp>(&op)) {
    c.table = image.add(g.tensor(lut->output).name + ".table", lut->table.data(), lut->table.size());
    for (const LutOp::ChannelTable& t : lut->channel_tables)
      c.tables.push_back(image.add(fmt::format("{}.table[{},{})", g.tensor(lut->output).name, t.c0, t.c1),
                                   t.table.data(), t.table.size()));
  }
  return c;
}

OpCode lower_op(const LowerEnv& env, const QOp& op, const OpConsts& consts) {
  return std::visit(
      [&](const auto& o) -> OpCode {
        using T = std::decay_t<decltype(o)>;
        if constexpr (std::is_same_v<T, ConvOp>) return lower_conv(env, o, consts);
        else if constexpr (std::is_same_v<T, GemmOp>) return lower_gemm(env, o, consts);
        else if constexpr (std::is_same_v<T, PoolOp>) return lower_pool(env, o);
        else if constexpr (std::is_same_v<T, EltwiseOp>) return lower_eltwise(env, o);
        else if constexpr (std::is_same_v<T, ClampOp>) return lower_clamp(env, o);
        else if constexpr (std::is_same_v<T, LutOp>) return lower_lut(env, o, consts);
        else if constexpr (std::is_same_v<T, ConcatOp>) return lower_concat(env, o);
        else if constexpr (std::is_same_v<T, AliasOp>) return OpCode{};
        else throw Error(fmt::format("{}: a CPU step has no NPU code", env.graph->source));
      },
      op);
}

uint64_t op_macs(const QGraph& g, const QOp& op) {
  if (const auto* conv = std::get_if<ConvOp>(&op)) {
    const model::Shape out = g.tensor(conv->output).storage_shape();
    return static_cast<uint64_t>(out[0] * out[1] * conv->cout * conv->k());
  }
  if (const auto* gemm = std::get_if<GemmOp>(&op)) {
    const int64_t rows = g.tensor(gemm->input).numel() / gemm->k;
    return static_cast<uint64_t>(rows * gemm->k * gemm->n);
  }
  return 0;
}

}  // namespace npuforge::compiler
