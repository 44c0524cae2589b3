// Conv and Gemm: IM2COL + GEMM over tiles of output rows, N-tiles when the weights do not fit.
#include <algorithm>

#include <fmt/core.h>

#include "compiler/lower_util.h"
#include "util/error.h"

namespace npuforge::compiler {
namespace {

using detail::ceil_div;
using detail::pad_to;

// A conv or gemm as a matmul over an HWC image: output pixel rows [OH][OW], cout channels.
struct MatmulJob {
  std::string name;  // output tensor: names the SRAM buffers
  std::string what;  // the op, for messages
  int64_t H = 1, W = 1, C = 1, OH = 1, OW = 1, cout = 1;
  Window win;
  bool direct = false;  // the loaded tile is the GEMM's a (1x1, stride 1, no pads)
  bool relu = false;
  std::vector<ConvBlock> blocks;
  const OpConsts* consts = nullptr;
  uint64_t in_addr = 0, out_addr = 0;
  int32_t in_buf = kNoDdrBuffer, out_buf = kNoDdrBuffer;
};

struct Tiling {
  int64_t nt = 1;    // output columns per N-tile
  int64_t rows = 1;  // output rows per tile
  bool double_buffer = true;
};

int64_t span_h(const Window& w) { return (w.kernel_h - 1) * w.dilation_h + 1; }

// Input rows a tile of `rows` output rows reads at most.
int64_t tile_in_rows(const MatmulJob& j, int64_t rows) {
  return std::min(j.H, (rows - 1) * j.win.stride_h + span_h(j.win));
}

// Padded SRAM bytes of one (block, N-tile) at its peak.
uint64_t estimate(const MatmulJob& j, const ConvBlock& b, const Tiling& t, uint64_t align) {
  const int64_t nt = std::min(t.nt, b.cout), m = t.rows * j.OW;
  const uint64_t consts = pad_to(b.k * nt, align) + pad_to(8 * nt, align) + pad_to(4 * nt, align);
  const uint64_t in = pad_to(tile_in_rows(j, t.rows) * j.W * b.cin, align);
  const uint64_t col = j.direct ? 0 : pad_to(m * b.k, align);
  const uint64_t out = pad_to(m * nt, align);
  const uint64_t copies = t.double_buffer ? 2 : 1;
  return consts + copies * (in + out) + col;
}

// The most output rows per tile the fields allow.
int64_t field_rows(const LowerEnv& env, const MatmulJob& j) {
  const IsaSlots& s = *env.slots;
  const int64_t m_max = std::min(IsaSlots::max(*s.gemm, s.gm.m), IsaSlots::max(*s.store, s.st.rows));
  int64_t r = std::min(j.OH, m_max / j.OW);
  const int64_t load_rows = IsaSlots::max(*s.load, s.ld.rows);
  const int64_t h_max = IsaSlots::max(*s.im2col, s.ic.h);
  while (r > 0 && (tile_in_rows(j, r) * j.W > load_rows || (!j.direct && tile_in_rows(j, r) > h_max))) --r;
  return r;
}

std::string tag(const MatmulJob& j, size_t b, int64_t n, int64_t tiles_n, const char* tile_prefix = "", int64_t t = -1) {
  std::string s;
  if (j.blocks.size() > 1) s += fmt::format("b{}", b);
  if (tiles_n > 1) s += fmt::format("n{}", n);
  if (t >= 0) s += fmt::format("{}{}", tile_prefix, t);
  return s.empty() ? s : "@" + s;
}

OpCode build(const LowerEnv& env, const MatmulJob& j, const Tiling& tl) {
  const IsaSlots& s = *env.slots;
  OpCode code;
  const int64_t row_tiles = ceil_div(j.OH, tl.rows);
  for (size_t bi = 0; bi < j.blocks.size(); ++bi) {
    const ConvBlock& b = j.blocks[bi];
    const BlockConsts& bc = j.consts->blocks.at(bi);
    const int64_t nt = std::min(tl.nt, b.cout), n_tiles = ceil_div(b.cout, nt);
    for (int64_t nj = 0; nj < n_tiles; ++nj) {
      const int64_t c0 = nj * nt, ntj = std::min(nt, b.cout - c0);
      const std::string wt = tag(j, bi, nj, n_tiles);
      const uint32_t w = code.buffer(j.name + ".w" + wt, static_cast<uint64_t>(b.k * ntj));
      detail::load(code, s, w, bc.weights + c0, {b.k, ntj, b.cout}, env.const_buf(bc.weights), j.what);
      uint32_t bias = 0;
      if (bc.has_bias) {
        bias = code.buffer(j.name + ".bias" + wt, static_cast<uint64_t>(4 * ntj));
        detail::load_contiguous(code, s, bias, bc.bias + 4 * c0, 4 * ntj, env.const_buf(bc.bias), j.what);
      }
      const uint32_t qp = code.buffer(j.name + ".qp" + wt, static_cast<uint64_t>(8 * ntj));
      detail::load_contiguous(code, s, qp, bc.qp + 8 * c0, 8 * ntj, env.const_buf(bc.qp), j.what);

      std::vector<uint32_t> in(row_tiles), out(row_tiles);
      auto rows_of = [&](int64_t t) { return std::pair{t * tl.rows, std::min(j.OH, (t + 1) * tl.rows)}; };
      auto load_tile = [&](int64_t t) {
        const auto [oy0, oy1] = rows_of(t);
        const detail::RowSpan r = detail::input_rows(j.win, j.H, oy0, oy1);
        const int64_t pixels = (r.hi - r.lo) * j.W;
        in[t] = code.buffer(j.name + ".in" + tag(j, bi, nj, n_tiles, "t", t), static_cast<uint64_t>(pixels * b.cin));
        detail::load(code, s, in[t], j.in_addr + static_cast<uint64_t>(r.lo * j.W * j.C + b.cin0), {pixels, b.cin, j.C},
                     j.in_buf, j.what);
      };
      auto compute_tile = [&](int64_t t) {
        const auto [oy0, oy1] = rows_of(t);
        const int64_t m = (oy1 - oy0) * j.OW;
        uint32_t a = in[t];
        if (!j.direct) {
          const detail::RowSpan r = detail::input_rows(j.win, j.H, oy0, oy1);
          const uint32_t col = code.buffer(j.name + ".col" + tag(j, bi, nj, n_tiles, "t", t), static_cast<uint64_t>(m * b.k));
          isa::Instruction ic = isa::Instruction::make(*s.im2col);
          set_field(ic, s.ic.h, r.hi - r.lo, j.what);
          set_field(ic, s.ic.w, j.W, j.what);
          set_field(ic, s.ic.c, b.cin, j.what);
          set_field(ic, s.ic.kh, j.win.kernel_h, j.what);
          set_field(ic, s.ic.kw, j.win.kernel_w, j.what);
          set_field(ic, s.ic.stride_h, j.win.stride_h, j.what);
          set_field(ic, s.ic.stride_w, j.win.stride_w, j.what);
          set_field(ic, s.ic.dil_h, j.win.dilation_h, j.what);
          set_field(ic, s.ic.dil_w, j.win.dilation_w, j.what);
          set_field(ic, s.ic.pad_top, r.pad_top, j.what);
          set_field(ic, s.ic.pad_bottom, r.pad_bottom, j.what);
          set_field(ic, s.ic.pad_left, j.win.pad_left, j.what);
          set_field(ic, s.ic.pad_right, j.win.pad_right, j.what);
          code.add(ic);
          code.read(in[t], s.ic.src).write(col, s.ic.dst);
          a = col;
        }
        out[t] = code.buffer(j.name + ".out" + tag(j, bi, nj, n_tiles, "t", t), static_cast<uint64_t>(m * ntj));
        isa::Instruction g = isa::Instruction::make(*s.gemm);
        set_field(g, s.gm.m, m, j.what);
        set_field(g, s.gm.n, ntj, j.what);
        set_field(g, s.gm.k, b.k, j.what);
        set_field(g, s.gm.relu, j.relu ? 1 : 0, j.what);
        set_field(g, s.gm.has_bias, bc.has_bias ? 1 : 0, j.what);
        set_field(g, s.gm.per_channel, 1, j.what);
        code.add(g);
        code.read(a, s.gm.a).read(w, s.gm.b).read(qp, s.gm.qp);
        if (bc.has_bias) code.read(bias, s.gm.bias);
        code.write(out[t], s.gm.dst);
      };
      auto store_tile = [&](int64_t t) {
        const auto [oy0, oy1] = rows_of(t);
        const int64_t m = (oy1 - oy0) * j.OW;
        detail::store(code, s, out[t], j.out_addr + static_cast<uint64_t>(oy0 * j.OW * j.cout + b.cout0 + c0),
                      {m, ntj, j.cout}, j.out_buf, j.what);
      };
      detail::pipeline(row_tiles, tl.double_buffer, load_tile, compute_tile, store_tile);
    }
  }
  return code;
}

// Checks the limits no tiling can change.
void check_fixed_limits(const LowerEnv& env, const MatmulJob& j) {
  const IsaSlots& s = *env.slots;
  for (const ConvBlock& b : j.blocks) {
    if (b.k > IsaSlots::max(*s.gemm, s.gm.k) || b.k > IsaSlots::max(*s.load, s.ld.rows))
      throw Error(fmt::format("{}: GEMM k = {} exceeds the ISA's limit {} (no K split)", j.what, b.k,
                              std::min(IsaSlots::max(*s.gemm, s.gm.k), IsaSlots::max(*s.load, s.ld.rows))));
    if (!j.direct && b.cin > IsaSlots::max(*s.im2col, s.ic.c))
      throw Error(fmt::format("{}: {} input channels exceed IM2COL's c limit {}", j.what, b.cin,
                              IsaSlots::max(*s.im2col, s.ic.c)));
  }
  if (!j.direct && j.W > IsaSlots::max(*s.im2col, s.ic.w))
    throw Error(fmt::format("{}: image width {} exceeds IM2COL's w limit {}", j.what, j.W, IsaSlots::max(*s.im2col, s.ic.w)));
  const Window& w = j.win;
  if (w.pad_top >= span_h(w) || w.pad_bottom >= span_h(w) || w.pad_left >= (w.kernel_w - 1) * w.dilation_w + 1 ||
      w.pad_right >= (w.kernel_w - 1) * w.dilation_w + 1)
    throw Error(fmt::format("{}: pads {} {} {} {} reach past the kernel (an output made of padding only)", j.what,
                            w.pad_top, w.pad_left, w.pad_bottom, w.pad_right));
}

OpCode lower_matmul(const LowerEnv& env, const MatmulJob& j) {
  check_fixed_limits(env, j);
  const uint64_t sram = env.npu.sram_bytes.value, align = env.npu.alignment.value;
  const int64_t rows_limit = field_rows(env, j);
  if (rows_limit < 1)
    throw Error(fmt::format("{}: one output row ({} pixels) exceeds the GEMM/DMA row limits", j.what, j.OW));
  int64_t nb_max = 0;
  for (const ConvBlock& b : j.blocks) nb_max = std::max(nb_max, b.cout);
  const int64_t n_max = std::min(nb_max, IsaSlots::max(*env.slots->gemm, env.slots->gm.n));
  const int64_t cols = env.npu.mac_cols, want_m = std::min(j.OH * j.OW, int64_t{4} * env.npu.mac_rows);
  auto fits_estimate = [&](const Tiling& t) {
    for (const ConvBlock& b : j.blocks)
      if (estimate(j, b, t, align) > sram) return false;
    return true;
  };
  std::optional<std::pair<Tiling, OpCode>> fallback;
  int64_t last_nt = 0;
  for (int64_t split = 1;; ++split) {
    int64_t nt = ceil_div(n_max, split);
    if (nt > cols) nt = std::min(n_max, ceil_div(nt, cols) * cols);
    if (split > 1 && nt >= last_nt) {
      if (nt <= 1) break;
      continue;
    }
    last_nt = nt;
    for (bool dbl : {true, false}) {
      // The most rows the estimate allows, then shrink until the real allocation fits.
      int64_t lo = 0, hi = rows_limit;
      while (lo < hi) {
        const int64_t mid = (lo + hi + 1) / 2;
        if (fits_estimate({nt, mid, dbl})) lo = mid;
        else hi = mid - 1;
      }
      for (int64_t rows = lo; rows >= 1; rows = rows > 4 ? rows * 3 / 4 : rows - 1) {
        const Tiling t{nt, rows, dbl};
        OpCode code = build(env, j, t);
        if (!sram_fit(code, env.npu, env.policy).fits) continue;
        if (rows * j.OW >= want_m || rows == j.OH) return code;
        if (!fallback || rows > fallback->first.rows) fallback.emplace(t, std::move(code));
        break;
      }
    }
    if (nt <= 1) break;
  }
  if (fallback) return std::move(fallback->second);
  throw Error(fmt::format("{}: does not fit the {}-byte SRAM even with one output row per tile and one output "
                          "channel per N-tile",
                          j.what, sram));
}

}  // namespace

OpCode lower_conv(const LowerEnv& env, const ConvOp& op, const OpConsts& consts) {
  const QGraph& g = *env.graph;
  const model::Shape in = g.tensor(op.input).storage_shape(), out = g.tensor(op.output).storage_shape();
  MatmulJob j;
  j.name = g.tensor(op.output).name;
  j.what = detail::describe(g, op, "conv");
  j.H = in[0];
  j.W = in[1];
  j.C = in[2];
  j.OH = out[0];
  j.OW = out[1];
  j.cout = op.cout;
  j.win = op.window;
  const Window& w = op.window;
  j.direct = w.pointwise();
  j.relu = op.relu;
  j.blocks = conv_blocks(op, j.C, env.npu.mac_cols);
  j.consts = &consts;
  j.in_addr = env.tensor_addr(op.input);
  j.out_addr = env.tensor_addr(op.output);
  j.in_buf = env.tensor_buf(op.input);
  j.out_buf = env.tensor_buf(op.output);
  return lower_matmul(env, j);
}

OpCode lower_gemm(const LowerEnv& env, const GemmOp& op, const OpConsts& consts) {
  const QGraph& g = *env.graph;
  MatmulJob j;
  j.name = g.tensor(op.output).name;
  j.what = detail::describe(g, op, "gemm");
  j.H = j.OH = g.tensor(op.input).numel() / op.k;
  j.W = j.OW = 1;
  j.C = op.k;
  j.cout = op.n;
  j.direct = true;
  j.relu = op.relu;
  j.blocks = {ConvBlock{0, 1, 0, op.k, 0, op.n, op.k}};
  j.consts = &consts;
  j.in_addr = env.tensor_addr(op.input);
  j.out_addr = env.tensor_addr(op.output);
  j.in_buf = env.tensor_buf(op.input);
  j.out_buf = env.tensor_buf(op.output);
  return lower_matmul(env, j);
}

}  // namespace npuforge::compiler
