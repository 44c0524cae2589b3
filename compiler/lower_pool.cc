// Max/avg pools: tiles of output rows (input halo, per-tile pads) and of channels.
#include <algorithm>

#include <fmt/core.h>

#include "compiler/lower_util.h"
#include "util/error.h"

namespace npuforge::compiler {
namespace {

using detail::ceil_div;
using detail::pad_to;

struct PoolJob {
  std::string name, what;
  int64_t H = 1, W = 1, C = 1, OH = 1, OW = 1;
  const PoolOp* op = nullptr;
  uint64_t in_addr = 0, out_addr = 0;
  int32_t in_buf = kNoDdrBuffer, out_buf = kNoDdrBuffer;
};

int64_t in_rows(const PoolJob& j, int64_t rows) {
  return std::min(j.H, (rows - 1) * j.op->window.stride_h + j.op->window.kernel_h);
}

OpCode build(const LowerEnv& env, const PoolJob& j, int64_t ct, int64_t rows, bool dbl) {
  const IsaSlots& s = *env.slots;
  const Window& w = j.op->window;
  OpCode code;
  const int64_t row_tiles = ceil_div(j.OH, rows), c_tiles = ceil_div(j.C, ct);
  for (int64_t ci = 0; ci < c_tiles; ++ci) {
    const int64_t c0 = ci * ct, cw = std::min(ct, j.C - c0);
    auto name = [&](const char* role, int64_t t) {
      return c_tiles > 1 ? fmt::format("{}.{}@c{}t{}", j.name, role, ci, t) : fmt::format("{}.{}@t{}", j.name, role, t);
    };
    auto rows_of = [&](int64_t t) { return std::pair{t * rows, std::min(j.OH, (t + 1) * rows)}; };
    std::vector<uint32_t> in(row_tiles), out(row_tiles);
    auto load_tile = [&](int64_t t) {
      const auto [oy0, oy1] = rows_of(t);
      const detail::RowSpan r = detail::input_rows(w, j.H, oy0, oy1);
      const int64_t pixels = (r.hi - r.lo) * j.W;
      in[t] = code.buffer(name("in", t), static_cast<uint64_t>(pixels * cw));
      detail::load(code, s, in[t], j.in_addr + static_cast<uint64_t>(r.lo * j.W * j.C + c0), {pixels, cw, j.C},
                   j.in_buf, j.what);
    };
    auto compute_tile = [&](int64_t t) {
      const auto [oy0, oy1] = rows_of(t);
      const detail::RowSpan r = detail::input_rows(w, j.H, oy0, oy1);
      out[t] = code.buffer(name("out", t), static_cast<uint64_t>((oy1 - oy0) * j.OW * cw));
      isa::Instruction p = isa::Instruction::make(*s.pool);
      set_field(p, s.pl.h, r.hi - r.lo, j.what);
      set_field(p, s.pl.w, j.W, j.what);
      set_field(p, s.pl.c, cw, j.what);
      set_field(p, s.pl.window_h, w.kernel_h, j.what);
      set_field(p, s.pl.window_w, w.kernel_w, j.what);
      set_field(p, s.pl.stride_h, w.stride_h, j.what);
      set_field(p, s.pl.stride_w, w.stride_w, j.what);
      set_field(p, s.pl.pad_top, r.pad_top, j.what);
      set_field(p, s.pl.pad_bottom, r.pad_bottom, j.what);
      set_field(p, s.pl.pad_left, w.pad_left, j.what);
      set_field(p, s.pl.pad_right, w.pad_right, j.what);
      set_field(p, s.pl.mode, j.op->kind == PoolOp::Kind::kMax ? s.pl.max : s.pl.avg, j.what);
      set_field(p, s.pl.count_pad, j.op->count_pad ? 1 : 0, j.what);
      code.add(p);
      code.read(in[t], s.pl.src).write(out[t], s.pl.dst);
    };
    auto store_tile = [&](int64_t t) {
      const auto [oy0, oy1] = rows_of(t);
      detail::store(code, s, out[t], j.out_addr + static_cast<uint64_t>(oy0 * j.OW * j.C + c0),
                    {(oy1 - oy0) * j.OW, cw, j.C}, j.out_buf, j.what);
    };
    detail::pipeline(row_tiles, dbl, load_tile, compute_tile, store_tile);
  }
  return code;
}

}  // namespace

OpCode lower_pool(const LowerEnv& env, const PoolOp& op) {
  const QGraph& g = *env.graph;
  const IsaSlots& s = *env.slots;
  PoolJob j;
  j.op = &op;
  j.name = g.tensor(op.output).name;
  j.what = detail::describe(g, op, op.kind == PoolOp::Kind::kMax ? "maxpool" : "avgpool");
  const model::Shape in = g.tensor(op.input).storage_shape(), out = g.tensor(op.output).storage_shape();
  j.H = in[0], j.W = in[1], j.C = in[2], j.OH = out[0], j.OW = out[1];
  j.in_addr = env.tensor_addr(op.input);
  j.out_addr = env.tensor_addr(op.output);
  j.in_buf = env.tensor_buf(op.input);
  j.out_buf = env.tensor_buf(op.output);
  const Window& w = op.window;
  if (w.kernel_h > IsaSlots::max(*s.pool, s.pl.window_h) || w.kernel_w > IsaSlots::max(*s.pool, s.pl.window_w))
    throw Error(fmt::format("{}: window {}x{} exceeds the POOL window limit {}x{} (a GlobalAveragePool over a larger "
                            "image must run on the CPU)",
                            j.what, w.kernel_h, w.kernel_w, IsaSlots::max(*s.pool, s.pl.window_h),
                            IsaSlots::max(*s.pool, s.pl.window_w)));
  if (w.pad_top >= w.kernel_h || w.pad_bottom >= w.kernel_h || w.pad_left >= w.kernel_w || w.pad_right >= w.kernel_w)
    throw Error(fmt::format("{}: pads {} {} {} {} reach past the window", j.what, w.pad_top, w.pad_left, w.pad_bottom,
                            w.pad_right));
  if (j.W > IsaSlots::max(*s.pool, s.pl.w))
    throw Error(fmt::format("{}: image width {} exceeds the POOL w limit {}", j.what, j.W, IsaSlots::max(*s.pool, s.pl.w)));
  const uint64_t sram = env.npu.sram_bytes.value, align = env.npu.alignment.value;
  const int64_t rows_max = IsaSlots::max(*s.load, s.ld.rows), h_max = IsaSlots::max(*s.pool, s.pl.h);
  const int64_t c_max = std::min(j.C, IsaSlots::max(*s.pool, s.pl.c));
  auto rows_ok = [&](int64_t r) {
    return in_rows(j, r) * j.W <= rows_max && in_rows(j, r) <= h_max && r * j.OW <= IsaSlots::max(*s.store, s.st.rows);
  };
  for (int64_t split = ceil_div(j.C, c_max); split <= j.C; ++split) {
    const int64_t ct = ceil_div(j.C, split);
    if (split > ceil_div(j.C, c_max) && ct == ceil_div(j.C, split - 1)) continue;
    for (bool dbl : {true, false}) {
      const uint64_t copies = dbl ? 2 : 1;
      auto est = [&](int64_t r) {
        return copies * (pad_to(in_rows(j, r) * j.W * ct, align) + pad_to(r * j.OW * ct, align));
      };
      int64_t lo = 0, hi = j.OH;
      while (lo < hi) {
        const int64_t mid = (lo + hi + 1) / 2;
        if (rows_ok(mid) && est(mid) <= sram) lo = mid;
        else hi = mid - 1;
      }
      for (int64_t rows = lo; rows >= 1; rows = rows > 4 ? rows * 3 / 4 : rows - 1) {
        OpCode code = build(env, j, ct, rows, dbl);
        if (sram_fit(code, env.npu, env.policy).fits) return code;
      }
    }
  }
  throw Error(fmt::format("{}: one output row of one channel does not fit the {}-byte SRAM", j.what, sram));
}

}  // namespace npuforge::compiler
