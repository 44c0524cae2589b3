#pragma once
// The instructions and fields the lowering writes, bound by name once (ISA version 2,
// docs/isa.md), and a checked way to set them: a value outside its field's range is an
// npuforge::Error naming the instruction and the field, never a silently truncated field.
#include <cstdint>
#include <string_view>

#include "isa/instruction.h"
#include "isa/isa.h"

namespace npuforge::compiler {

struct IsaSlots {
  // Throws npuforge::Error naming the instruction and field the ISA lacks.
  explicit IsaSlots(const isa::Isa& isa);

  const isa::Isa* isa;
  const isa::InstrSpec *load, *store, *gemm, *im2col, *eltwise, *pool, *lut;
  struct Dma {
    unsigned dst, src, rows, row_bytes, stride;
  } ld{}, st{};
  struct Gemm {
    unsigned dst, a, b, bias, qp, m, n, k, relu, has_bias, per_channel;
  } gm{};
  struct Im2col {
    unsigned dst, src, h, w, c, kh, kw, stride_h, stride_w, dil_h, dil_w, pad_top, pad_left, pad_bottom, pad_right;
  } ic{};
  struct Eltwise {
    unsigned dst, a, b, len, op, scale, shift, lo, hi;
    uint32_t add, mul, clip;  // values of `op`
  } el{};
  struct Pool {
    unsigned dst, src, h, w, c, window_h, window_w, stride_h, stride_w, pad_top, pad_left, pad_bottom, pad_right, mode,
        count_pad;
    uint32_t max, avg;  // values of `mode`
  } pl{};
  struct Lut {
    unsigned dst, src, table, len;
  } lt{};

  // The largest value field `slot` of `spec` takes.
  static int64_t max(const isa::InstrSpec& spec, unsigned slot) { return spec.fields[slot].max; }
};

// Sets field `slot` to `value`, or throws npuforge::Error "<mnemonic>.<field> = v is outside
// [min, max] (<what>)" where `what` names the op being lowered.
void set_field(isa::Instruction& in, unsigned slot, int64_t value, std::string_view what);

}  // namespace npuforge::compiler
