#include "compiler/isa_slots.h"

#include <fmt/core.h>

#include "util/error.h"

namespace npuforge::compiler {
namespace {

IsaSlots::Dma dma(const isa::InstrSpec& s) {
  return {s.require_field("dst"), s.require_field("src"), s.require_field("rows"), s.require_field("row_bytes"),
          s.require_field("stride")};
}

}  // namespace

IsaSlots::IsaSlots(const isa::Isa& i)
    : isa(&i),
      load(&i.require("load")),
      store(&i.require("store")),
      gemm(&i.require("gemm")),
      im2col(&i.require("im2col")),
      eltwise(&i.require("eltwise")),
      pool(&i.require("pool")),
      lut(&i.require("lut")) {
  ld = dma(*load);
  st = dma(*store);
  const isa::InstrSpec& g = *gemm;
  gm = {g.require_field("dst"), g.require_field("a"),   g.require_field("b"),        g.require_field("bias"),
        g.require_field("qp"),  g.require_field("m"),   g.require_field("n"),        g.require_field("k"),
        g.require_field("relu"), g.require_field("has_bias"), g.require_field("per_channel")};
  const isa::InstrSpec& c = *im2col;
  ic = {c.require_field("dst"),        c.require_field("src"),      c.require_field("h"),
        c.require_field("w"),          c.require_field("c"),        c.require_field("kh"),
        c.require_field("kw"),         c.require_field("stride_h"), c.require_field("stride_w"),
        c.require_field("dil_h"),      c.require_field("dil_w"),    c.require_field("pad_top"),
        c.require_field("pad_left"),   c.require_field("pad_bottom"), c.require_field("pad_right")};
  const isa::InstrSpec& e = *eltwise;
  el = {e.require_field("dst"), e.require_field("a"),     e.require_field("b"),
        e.require_field("len"), e.require_field("op"),    e.require_field("scale"),
        e.require_field("shift"), e.require_field("lo"),  e.require_field("hi"),
        0, 0, 0};
  el.add = i.enum_value(e.mnemonic, "op", "add");
  el.mul = i.enum_value(e.mnemonic, "op", "mul");
  el.clip = i.enum_value(e.mnemonic, "op", "clip");
  const isa::InstrSpec& p = *pool;
  pl = {p.require_field("dst"),        p.require_field("src"),       p.require_field("h"),
        p.require_field("w"),          p.require_field("c"),         p.require_field("window_h"),
        p.require_field("window_w"),   p.require_field("stride_h"),  p.require_field("stride_w"),
        p.require_field("pad_top"),    p.require_field("pad_left"),  p.require_field("pad_bottom"),
        p.require_field("pad_right"),  p.require_field("mode"),      p.require_field("count_pad"),
        0, 0};
  pl.max = i.enum_value(p.mnemonic, "mode", "max");
  pl.avg = i.enum_value(p.mnemonic, "mode", "avg");
  const isa::InstrSpec& l = *lut;
  lt = {l.require_field("dst"), l.require_field("src"), l.require_field("table"), l.require_field("len")};
}

void set_field(isa::Instruction& in, unsigned slot, int64_t value, std::string_view what) {
  const isa::FieldSpec& f = in.spec->fields[slot];
  if (value < f.min || value > f.max)
    throw Error(fmt::format("{}: {}.{} = {} is outside the field's range [{}, {}]", what, in.spec->mnemonic, f.name,
                            value, f.min, f.max));
  in.set_value(slot, value);
}

}  // namespace npuforge::compiler
