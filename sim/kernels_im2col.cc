// IM2COL: the gather of an image's convolution windows into rows.
#include <algorithm>
#include <cstring>

#include "sim/kernels_shared.h"

namespace npuforge::sim::kernels {
namespace {

// IM2COL's geometry, read from the instruction once.
struct Im2colShape {
  int64_t h, w, c, kh, kw, sh, sw, dh, dw, pt, pl, oh, ow;
};

// Taps (output columns times window columns) kept on the stack: 1 KiB.
constexpr size_t kTapsInline = 256;

// The gather for pixels of `C` channels (0: c, known at run time only). A pixel is a few
// bytes (c is 1..8 in generated programs): a libc memcpy/memset call per pixel or window row
// was most of IM2COL's time, where a compile-time size is a move or two. The general case
// copies a window row's in-image pixels in one call (dw == 1).
template <size_t C>
void im2col_pixels(const Im2colShape& g, const uint8_t* src, uint8_t* o) {
  const int64_t c = C ? static_cast<int64_t>(C) : g.c;
  auto copy = [&](uint8_t* to, const uint8_t* from, int64_t pixels) {
    if constexpr (C > 0) {
      for (int64_t p = 0; p < pixels; ++p) std::memcpy(to + p * C, from + p * C, C);
    } else {
      std::memcpy(to, from, static_cast<size_t>(pixels * c));
    }
  };
  auto zero = [&](uint8_t* to, int64_t pixels) {
    if constexpr (C > 0) {
      for (int64_t p = 0; p < pixels; ++p) std::memset(to + p * C, 0, C);
    } else {
      std::memset(to, 0, static_cast<size_t>(pixels * c));
    }
  };
  if (g.oh <= 0 || g.ow <= 0) return;  // no output pixels (nothing to write)
  if constexpr (C > 0) {
    // Pixel by pixel from a table of each output column's taps (their source column's offset
    // in a row, -1 outside the image), worked out once: per output row and window row only
    // the source row is new. On the stack for the usual shapes (a heap vector per
    // instruction cost its allocation and zero fill).
    Scratch<int32_t, kTapsInline> taps(static_cast<size_t>(g.ow * g.kw));
    for (int64_t ox = 0; ox < g.ow; ++ox) {
      for (int64_t kx = 0; kx < g.kw; ++kx) {
        const int64_t ix = ox * g.sw - g.pl + kx * g.dw;
        taps.data()[ox * g.kw + kx] = ix < 0 || ix >= g.w ? -1 : static_cast<int32_t>(ix * c);
      }
    }
    const int64_t pixel_row = g.kh * g.kw * c;  // one output pixel's bytes
    for (int64_t oy = 0; oy < g.oh; ++oy) {
      for (int64_t ky = 0; ky < g.kh; ++ky) {
        const int64_t iy = oy * g.sh - g.pt + ky * g.dh;
        uint8_t* p = o + oy * g.ow * pixel_row + ky * g.kw * c;  // (oy, ox = 0, ky)
        const bool inside = iy >= 0 && iy < g.h;
        const uint8_t* srow = src + (inside ? iy * g.w * c : 0);
        for (int64_t ox = 0; ox < g.ow; ++ox, p += pixel_row) {
          if (!inside) {
            zero(p, g.kw);
            continue;
          }
          const int32_t* t = taps.data() + ox * g.kw;
          for (int64_t kx = 0; kx < g.kw; ++kx) {
            if (t[kx] < 0) {
              zero(p + kx * C, 1);
            } else {
              copy(p + kx * C, srow + t[kx], 1);
            }
          }
        }
      }
    }
    return;
  }
  for (int64_t oy = 0; oy < g.oh; ++oy) {
    for (int64_t ox = 0; ox < g.ow; ++ox) {
      for (int64_t ky = 0; ky < g.kh; ++ky) {
        const int64_t iy = oy * g.sh - g.pt + ky * g.dh;
        if (iy < 0 || iy >= g.h) {
          zero(o, g.kw);
          o += g.kw * c;
          continue;
        }
        const uint8_t* srow = src + iy * g.w * c;
        const int64_t x0 = ox * g.sw - g.pl;  // ix at kx = 0
        if (g.dw == 1) {
          // The window row's in-image pixels kx0 <= kx < kx1 are contiguous in the source:
          // one copy between the zeros of the pads (per pixel when that is a fixed-size move).
          const int64_t kx0 = std::clamp<int64_t>(-x0, 0, g.kw), kx1 = std::clamp<int64_t>(g.w - x0, kx0, g.kw);
          if (kx0 > 0) zero(o, kx0);
          if (kx1 > kx0) copy(o + kx0 * c, srow + (x0 + kx0) * c, kx1 - kx0);
          if (kx1 < g.kw) zero(o + kx1 * c, g.kw - kx1);
          o += g.kw * c;
          continue;
        }
        for (int64_t kx = 0; kx < g.kw; ++kx) {
          const int64_t ix = x0 + kx * g.dw;
          if (ix < 0 || ix >= g.w) {
            zero(o, 1);
          } else {
            copy(o, srow + ix * c, 1);
          }
          o += c;
        }
      }
    }
  }
}

}  // namespace

void im2col(const isa::Instruction& instr, const Semantics::Im2colSlots& s, In in,
            std::span<uint8_t> out) {
  Im2colShape g{};
  g.h = instr.get(s.h), g.w = instr.get(s.w), g.c = instr.get(s.c);
  g.kh = instr.get(s.kh), g.kw = instr.get(s.kw);
  g.sh = instr.get(s.sh), g.sw = instr.get(s.sw), g.dh = instr.get(s.dh), g.dw = instr.get(s.dw);
  g.pt = instr.get(s.pt), g.pl = instr.get(s.pl);
  const int64_t pb = instr.get(s.pb), pr = instr.get(s.pr);
  g.oh = (g.h + g.pt + pb - (g.kh - 1) * g.dh - 1) / g.sh + 1;
  g.ow = (g.w + g.pl + pr - (g.kw - 1) * g.dw - 1) / g.sw + 1;
  const uint8_t* src = operand(instr, in, s.src).data();
  uint8_t* o = out.data();
  switch (g.c) {
    case 1: return im2col_pixels<1>(g, src, o);
    case 2: return im2col_pixels<2>(g, src, o);
    case 3: return im2col_pixels<3>(g, src, o);
    case 4: return im2col_pixels<4>(g, src, o);
    case 5: return im2col_pixels<5>(g, src, o);
    case 6: return im2col_pixels<6>(g, src, o);
    case 7: return im2col_pixels<7>(g, src, o);
    case 8: return im2col_pixels<8>(g, src, o);
    default: return im2col_pixels<0>(g, src, o);
  }
}

}  // namespace npuforge::sim::kernels
