#pragma once
// Internal to the lowering files: building LOAD/STORE and the tile pipeline.
#include <cstdint>
#include <string>
#include <string_view>

#include "compiler/lower.h"

namespace npuforge::compiler::detail {

inline int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
inline uint64_t pad_to(uint64_t bytes, uint64_t unit) { return (bytes + unit - 1) / unit * unit; }

// A 2-D DMA: `rows` rows of `row_bytes`, DDR rows `stride` apart (SRAM packed).
struct Dma {
  int64_t rows = 1, row_bytes = 0, stride = 0;
};
// `bytes` contiguous bytes as one DMA shape (rows * row_bytes == bytes, both within the
// fields), or rows == 0 when there is none.
Dma contiguous(const IsaSlots& s, int64_t bytes);

// LOAD into `buf` (+ offset) from DDR `src`; ddr_buf names the DDR buffer for the memory map.
void load(OpCode& code, const IsaSlots& s, uint32_t buf, uint64_t src, const Dma& d, int32_t ddr_buf,
          std::string_view what, uint32_t offset = 0);
void store(OpCode& code, const IsaSlots& s, uint32_t buf, uint64_t dst, const Dma& d, int32_t ddr_buf,
           std::string_view what, uint32_t offset = 0);
// A contiguous copy of `bytes` between DDR and `buf`, in as many DMAs as the fields need.
void load_contiguous(OpCode& code, const IsaSlots& s, uint32_t buf, uint64_t src, int64_t bytes, int32_t ddr_buf,
                     std::string_view what);

// The software pipeline over `tiles`: with double buffering L(0), {L(t+1), C(t), S(t-1)},
// S(last); else {L(t), C(t), S(t)}.
template <class Load, class Compute, class Store>
void pipeline(int64_t tiles, bool double_buffer, Load&& l, Compute&& c, Store&& s) {
  if (!double_buffer) {
    for (int64_t t = 0; t < tiles; ++t) {
      l(t);
      c(t);
      s(t);
    }
    return;
  }
  if (tiles > 0) l(0);
  for (int64_t t = 0; t < tiles; ++t) {
    if (t + 1 < tiles) l(t + 1);
    c(t);
    if (t > 0) s(t - 1);
  }
  if (tiles > 0) s(tiles - 1);
}

// Rows of one tile of output rows [oy0, oy1) of a window op: the input rows [lo, hi) it
// reads and its own pads.
struct RowSpan {
  int64_t lo = 0, hi = 0;
  int64_t pad_top = 0, pad_bottom = 0;
};
RowSpan input_rows(const Window& w, int64_t in_h, int64_t oy0, int64_t oy1);

// "<model>: op 'name' (kind)" for messages: named by its first model node, else its output.
std::string describe(const QGraph& g, const std::vector<std::string>& nodes, TensorId output, std::string_view kind);
template <class Op>
std::string describe(const QGraph& g, const Op& op, std::string_view kind) {
  return describe(g, op.nodes, op.output, kind);
}

}  // namespace npuforge::compiler::detail
