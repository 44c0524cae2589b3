// Element-wise ops over flat chunks (add, mul, clamp, lut) and concat (strided copies).
#include <algorithm>

#include <fmt/core.h>

#include "compiler/lower_util.h"
#include "util/error.h"

namespace npuforge::compiler {
namespace {

using detail::ceil_div;
using detail::pad_to;

// One flat op: `inputs` tensors of `bytes` each -> one output; `compute` adds the instruction
// for a chunk (its input buffers, output buffer and length).
struct FlatJob {
  std::string name, what;
  int64_t bytes = 0;
  std::vector<TensorId> inputs;
  TensorId output;
  uint64_t fixed_sram = 0;  // a table loaded once
};

template <class Prologue, class Compute>
OpCode lower_flat(const LowerEnv& env, const FlatJob& j, Prologue&& prologue, Compute&& compute) {
  const IsaSlots& s = *env.slots;
  const uint64_t sram = env.npu.sram_bytes.value, align = env.npu.alignment.value;
  const int64_t n_in = static_cast<int64_t>(j.inputs.size());
  // A chunk is one single-row DMA (and within the compute's len field).
  const int64_t dma_max = std::min(IsaSlots::max(*s.load, s.ld.row_bytes), IsaSlots::max(*s.store, s.st.row_bytes));
  const int64_t chunk_max =
      std::max<int64_t>(1, std::min<int64_t>(dma_max / static_cast<int64_t>(align) * static_cast<int64_t>(align),
                                             IsaSlots::max(*s.eltwise, s.el.len)));
  for (bool dbl : {true, false}) {
    const uint64_t copies = (dbl ? 2 : 1) * static_cast<uint64_t>(n_in + 1);
    if (sram <= pad_to(j.fixed_sram, align)) break;
    int64_t chunk = static_cast<int64_t>((sram - pad_to(j.fixed_sram, align)) / copies / align * align);
    chunk = std::min({chunk, chunk_max, j.bytes});
    for (; chunk >= 1; chunk = chunk > static_cast<int64_t>(align) ? chunk / 2 / static_cast<int64_t>(align) * static_cast<int64_t>(align) : chunk / 2) {
      OpCode code;
      const uint32_t fixed = prologue(code);
      const int64_t tiles = ceil_div(j.bytes, chunk);
      std::vector<std::vector<uint32_t>> in(tiles, std::vector<uint32_t>(n_in));
      std::vector<uint32_t> out(tiles);
      auto len = [&](int64_t t) { return std::min(chunk, j.bytes - t * chunk); };
      auto load_tile = [&](int64_t t) {
        for (int64_t i = 0; i < n_in; ++i) {
          in[t][i] = code.buffer(fmt::format("{}.in{}@t{}", j.name, i, t), static_cast<uint64_t>(len(t)));
          detail::load(code, s, in[t][i], env.tensor_addr(j.inputs[i]) + static_cast<uint64_t>(t * chunk),
                       {1, len(t), len(t)}, env.tensor_buf(j.inputs[i]), j.what);
        }
      };
      auto compute_tile = [&](int64_t t) {
        out[t] = code.buffer(fmt::format("{}.out@t{}", j.name, t), static_cast<uint64_t>(len(t)));
        compute(code, fixed, in[t], out[t], len(t));
      };
      auto store_tile = [&](int64_t t) {
        detail::store(code, s, out[t], env.tensor_addr(j.output) + static_cast<uint64_t>(t * chunk),
                      {1, len(t), len(t)}, env.tensor_buf(j.output), j.what);
      };
      detail::pipeline(tiles, dbl, load_tile, compute_tile, store_tile);
      if (sram_fit(code, env.npu, env.policy).fits) return code;
    }
  }
  throw Error(fmt::format("{}: does not fit the {}-byte SRAM", j.what, sram));
}

isa::Instruction eltwise_instr(const IsaSlots& s, uint32_t op, int64_t len, const std::string& what) {
  isa::Instruction in = isa::Instruction::make(*s.eltwise);
  set_field(in, s.el.op, op, what);
  set_field(in, s.el.len, len, what);
  return in;
}

}  // namespace

// A multiply by a per-channel vector: the vector is loaded once per pixel row of a tile into
// one buffer (rows LOADs of C bytes, at offsets r * C), which every tile's ELTWISE mul reads
// beside its `rows` pixels of the image (one contiguous LOAD), as a flat op.
OpCode lower_mul_broadcast(const LowerEnv& env, const EltwiseOp& op) {
  const QGraph& g = *env.graph;
  const IsaSlots& s = *env.slots;
  const std::string what = detail::describe(g, op, "mul");
  const QTensor& out_t = g.tensor(op.output);
  const std::string name = out_t.name;
  const int64_t channels = out_t.storage_shape()[2];
  const int64_t pixels = out_t.numel() / channels;
  const uint64_t sram = env.npu.sram_bytes.value;
  const int64_t dma_max = std::min(IsaSlots::max(*s.load, s.ld.row_bytes), IsaSlots::max(*s.store, s.st.row_bytes));
  const int64_t len_max = std::min(dma_max, IsaSlots::max(*s.eltwise, s.el.len));
  if (channels > len_max) throw Error(fmt::format("{}: {} channels exceed one eltwise", what, channels));
  // At most 64 vector copies: each is a LOAD instruction.
  const int64_t rows_start = std::min<int64_t>({pixels, 64, len_max / channels});
  for (bool dbl : {true, false})
    for (int64_t rows = rows_start; rows >= 1; rows /= 2) {
      if (static_cast<uint64_t>(rows * channels) * (dbl ? 5 : 3) > sram) continue;
      OpCode code;
      const int64_t chunk = rows * channels, bytes = pixels * channels;
      const uint32_t vec = code.buffer(name + ".vector", static_cast<uint64_t>(chunk));
      for (int64_t r = 0; r < rows; ++r)
        detail::load(code, s, vec, env.tensor_addr(op.b), {1, channels, channels}, env.tensor_buf(op.b), what,
                     static_cast<uint32_t>(r * channels));
      const int64_t tiles = ceil_div(bytes, chunk);
      std::vector<uint32_t> in(static_cast<size_t>(tiles)), out(static_cast<size_t>(tiles));
      auto len = [&](int64_t t) { return std::min(chunk, bytes - t * chunk); };
      auto load_tile = [&](int64_t t) {
        in[t] = code.buffer(fmt::format("{}.in0@t{}", name, t), static_cast<uint64_t>(len(t)));
        detail::load(code, s, in[t], env.tensor_addr(op.a) + static_cast<uint64_t>(t * chunk), {1, len(t), len(t)},
                     env.tensor_buf(op.a), what);
      };
      auto compute_tile = [&](int64_t t) {
        out[t] = code.buffer(fmt::format("{}.out@t{}", name, t), static_cast<uint64_t>(len(t)));
        isa::Instruction e = eltwise_instr(s, s.el.mul, len(t), what);
        set_field(e, s.el.scale, op.requant.scale, what);
        set_field(e, s.el.shift, op.requant.shift, what);
        code.add(e);
        code.read(in[t], s.el.a).read(vec, s.el.b).write(out[t], s.el.dst);
      };
      auto store_tile = [&](int64_t t) {
        detail::store(code, s, out[t], env.tensor_addr(op.output) + static_cast<uint64_t>(t * chunk),
                      {1, len(t), len(t)}, env.tensor_buf(op.output), what);
      };
      detail::pipeline(tiles, dbl, load_tile, compute_tile, store_tile);
      if (sram_fit(code, env.npu, env.policy).fits) return code;
    }
  throw Error(fmt::format("{}: does not fit the {}-byte SRAM", what, sram));
}

OpCode lower_eltwise(const LowerEnv& env, const EltwiseOp& op) {
  if (op.broadcast_b) return lower_mul_broadcast(env, op);
  const QGraph& g = *env.graph;
  const IsaSlots& s = *env.slots;
  const std::string what = detail::describe(g, op, op.kind == EltwiseOp::Kind::kAdd ? "add" : "mul");
  const FlatJob j{g.tensor(op.output).name, what, g.tensor(op.output).bytes(), {op.a, op.b}, op.output, 0};
  return lower_flat(
      env, j, [](OpCode&) { return 0u; },
      [&](OpCode& code, uint32_t, const std::vector<uint32_t>& in, uint32_t out, int64_t len) {
        isa::Instruction e = eltwise_instr(s, op.kind == EltwiseOp::Kind::kAdd ? s.el.add : s.el.mul, len, what);
        set_field(e, s.el.scale, op.requant.scale, what);
        set_field(e, s.el.shift, op.requant.shift, what);
        code.add(e);
        code.read(in[0], s.el.a).read(in[1], s.el.b).write(out, s.el.dst);
      });
}

OpCode lower_clamp(const LowerEnv& env, const ClampOp& op) {
  const QGraph& g = *env.graph;
  const IsaSlots& s = *env.slots;
  const std::string what = detail::describe(g, op, "clamp");
  const FlatJob j{g.tensor(op.output).name, what, g.tensor(op.output).bytes(), {op.input}, op.output, 0};
  return lower_flat(
      env, j, [](OpCode&) { return 0u; },
      [&](OpCode& code, uint32_t, const std::vector<uint32_t>& in, uint32_t out, int64_t len) {
        isa::Instruction c = eltwise_instr(s, s.el.clip, len, what);
        set_field(c, s.el.lo, op.lo, what);
        set_field(c, s.el.hi, op.hi, what);
        code.add(c);
        code.read(in[0], s.el.a).write(out, s.el.dst);
      });
}

// A lut with channel tables (lower.h): tiles are (group, block of pixels); tables load once.
OpCode lower_lut_channels(const LowerEnv& env, const LutOp& op, const OpConsts& consts) {
  const QGraph& g = *env.graph;
  const IsaSlots& s = *env.slots;
  const std::string what = detail::describe(g, op, "lut");
  const std::string name = g.tensor(op.output).name;
  const int64_t channels = g.tensor(op.output).storage_shape()[2];
  const int64_t pixels = g.tensor(op.output).numel() / channels;
  const auto& groups = op.channel_tables;
  if (consts.tables.size() != groups.size()) throw Error(fmt::format("{}: channel tables have no DDR address", what));
  const uint64_t sram = env.npu.sram_bytes.value, align = env.npu.alignment.value;
  const uint64_t fixed = groups.size() * pad_to(256, align);
  int64_t widest = 0;
  for (const LutOp::ChannelTable& t : groups) widest = std::max(widest, t.c1 - t.c0);
  const int64_t rows_max = std::min({IsaSlots::max(*s.load, s.ld.rows), IsaSlots::max(*s.store, s.st.rows),
                                     IsaSlots::max(*s.lut, s.lt.len) / widest});
  for (bool dbl : {true, false}) {
    if (sram <= fixed) break;
    const int64_t budget = static_cast<int64_t>((sram - fixed) / (dbl ? 4 : 2) / align * align);
    for (int64_t rows = std::min({pixels, rows_max, std::max<int64_t>(1, budget / widest)}); rows >= 1; rows /= 2) {
      OpCode code;
      std::vector<uint32_t> table(groups.size());
      for (size_t k = 0; k < groups.size(); ++k) {
        table[k] = code.buffer(fmt::format("{}.table{}", name, k), 256);
        detail::load(code, s, table[k], consts.tables[k], {1, 256, 256}, env.const_buf(consts.tables[k]), what);
      }
      struct Tile {
        size_t k;
        int64_t p0, n;
      };
      std::vector<Tile> tiles;
      for (size_t k = 0; k < groups.size(); ++k)
        for (int64_t p0 = 0; p0 < pixels; p0 += rows) tiles.push_back({k, p0, std::min(rows, pixels - p0)});
      std::vector<uint32_t> in(tiles.size()), out(tiles.size());
      auto width = [&](const Tile& t) { return groups[t.k].c1 - groups[t.k].c0; };
      auto offset = [&](const Tile& t) { return static_cast<uint64_t>(t.p0 * channels + groups[t.k].c0); };
      auto load_tile = [&](int64_t i) {
        const Tile& t = tiles[static_cast<size_t>(i)];
        in[i] = code.buffer(fmt::format("{}.in@t{}", name, i), static_cast<uint64_t>(t.n * width(t)));
        detail::load(code, s, in[i], env.tensor_addr(op.input) + offset(t), {t.n, width(t), channels},
                     env.tensor_buf(op.input), what);
      };
      auto compute_tile = [&](int64_t i) {
        const Tile& t = tiles[static_cast<size_t>(i)];
        out[i] = code.buffer(fmt::format("{}.out@t{}", name, i), static_cast<uint64_t>(t.n * width(t)));
        isa::Instruction l = isa::Instruction::make(*s.lut);
        set_field(l, s.lt.len, t.n * width(t), what);
        code.add(l);
        code.read(in[i], s.lt.src).read(table[t.k], s.lt.table).write(out[i], s.lt.dst);
      };
      auto store_tile = [&](int64_t i) {
        const Tile& t = tiles[static_cast<size_t>(i)];
        detail::store(code, s, out[i], env.tensor_addr(op.output) + offset(t), {t.n, width(t), channels},
                      env.tensor_buf(op.output), what);
      };
      detail::pipeline(static_cast<int64_t>(tiles.size()), dbl, load_tile, compute_tile, store_tile);
      if (sram_fit(code, env.npu, env.policy).fits) return code;
    }
  }
  throw Error(fmt::format("{}: does not fit the {}-byte SRAM", what, sram));
}

OpCode lower_lut(const LowerEnv& env, const LutOp& op, const OpConsts& consts) {
  if (!op.channel_tables.empty()) return lower_lut_channels(env, op, consts);
  const QGraph& g = *env.graph;
  const IsaSlots& s = *env.slots;
  const std::string what = detail::describe(g, op, "lut");
  const FlatJob j{g.tensor(op.output).name, what, g.tensor(op.output).bytes(), {op.input}, op.output, 256};
  return lower_flat(
      env, j,
      [&](OpCode& code) {
        const uint32_t table = code.buffer(j.name + ".table", 256);
        detail::load(code, s, table, consts.table, {1, 256, 256}, env.const_buf(consts.table), what);
        return table;
      },
      [&](OpCode& code, uint32_t table, const std::vector<uint32_t>& in, uint32_t out, int64_t len) {
        isa::Instruction l = isa::Instruction::make(*s.lut);
        set_field(l, s.lt.len, len, what);
        code.add(l);
        code.read(in[0], s.lt.src).read(table, s.lt.table).write(out, s.lt.dst);
      });
}

OpCode lower_concat(const LowerEnv& env, const ConcatOp& op) {
  const QGraph& g = *env.graph;
  const IsaSlots& s = *env.slots;
  const std::string what = detail::describe(g, op, "concat");
  const std::string name = g.tensor(op.output).name;
  const ConcatChunks chunks = concat_chunks(g, op);
  int64_t row = 0;
  for (int64_t c : chunks.chunk_bytes) row += c;
  const uint64_t sram = env.npu.sram_bytes.value, align = env.npu.alignment.value;
  const int64_t width_max = std::min(IsaSlots::max(*s.load, s.ld.row_bytes), IsaSlots::max(*s.store, s.st.row_bytes));
  const int64_t rows_max = std::min(IsaSlots::max(*s.load, s.ld.rows), IsaSlots::max(*s.store, s.st.rows));
  // A piece: input i, columns [col, col + width) of its chunk, repetitions [rep0, rep0 + reps).
  struct Piece {
    size_t input;
    int64_t col, width, rep0, reps;
  };
  for (bool dbl : {true, false}) {
    for (uint64_t budget = sram / (dbl ? 2 : 1); budget >= align; budget /= 2) {
      std::vector<Piece> pieces;
      for (size_t i = 0; i < chunks.chunk_bytes.size(); ++i) {
        const int64_t chunk = chunks.chunk_bytes[i];
        const int64_t width = std::min({chunk, width_max, static_cast<int64_t>(budget)});
        const int64_t reps = std::min({chunks.outer, rows_max, static_cast<int64_t>(budget) / width});
        for (int64_t col = 0; col < chunk; col += width)
          for (int64_t rep0 = 0; rep0 < chunks.outer; rep0 += reps)
            pieces.push_back({i, col, std::min(width, chunk - col), rep0, std::min(reps, chunks.outer - rep0)});
      }
      OpCode code;
      std::vector<uint32_t> buf(pieces.size());
      int64_t offset_in_row = 0;
      std::vector<int64_t> offsets;
      for (int64_t c : chunks.chunk_bytes) {
        offsets.push_back(offset_in_row);
        offset_in_row += c;
      }
      auto load_piece = [&](int64_t t) {
        const Piece& p = pieces[t];
        const int64_t chunk = chunks.chunk_bytes[p.input];
        buf[t] = code.buffer(fmt::format("{}.in{}@t{}", name, p.input, t), static_cast<uint64_t>(p.reps * p.width));
        detail::load(code, s, buf[t], env.tensor_addr(op.inputs[p.input]) + static_cast<uint64_t>(p.rep0 * chunk + p.col),
                     {p.reps, p.width, chunk}, env.tensor_buf(op.inputs[p.input]), what);
      };
      auto store_piece = [&](int64_t t) {
        const Piece& p = pieces[t];
        detail::store(code, s, buf[t],
                      env.tensor_addr(op.output) + static_cast<uint64_t>(p.rep0 * row + offsets[p.input] + p.col),
                      {p.reps, p.width, row}, env.tensor_buf(op.output), what);
      };
      // A copy has no compute: with double buffering the next piece loads while this one stores.
      const auto n = static_cast<int64_t>(pieces.size());
      for (int64_t t = 0; t < n; ++t) {
        if (!dbl || t == 0) load_piece(t);
        if (dbl && t + 1 < n) load_piece(t + 1);
        store_piece(t);
      }
      if (sram_fit(code, env.npu, env.policy).fits) return code;
    }
  }
  throw Error(fmt::format("{}: does not fit the {}-byte SRAM", what, sram));
}

}  // namespace npuforge::compiler
