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

OpCode lower_eltwise(const LowerEnv& env, const EltwiseOp& op) {
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

OpCode lower_lut(const LowerEnv& env, const LutOp& op, const OpConsts& consts) {
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
