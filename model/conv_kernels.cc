#include "model/conv_kernels.h"

#include <algorithm>
#include <vector>

#include "model/gemm.h"

namespace npuforge::model {
namespace {

// The geometry with 1 or 2 spatial axes padded to 3 (D, H, W) by leading unit axes, so
// one set of loops serves Conv1d, Conv2d and Conv3d.
struct Geo3 {
  int64_t in[3], k[3], s[3], d[3], pb[3], out[3];

  explicit Geo3(const WindowGeometry& g) {
    const size_t lead = 3 - g.rank();
    for (size_t i = 0; i < 3; ++i) {
      if (i < lead) {
        in[i] = k[i] = s[i] = d[i] = out[i] = 1;
        pb[i] = 0;
        continue;
      }
      const AxisGeometry& a = g.axes[i - lead];
      in[i] = a.in, k[i] = a.kernel, s[i] = a.stride, d[i] = a.dilation, pb[i] = a.pad_begin, out[i] = a.out;
    }
  }
  int64_t in_count() const { return in[0] * in[1] * in[2]; }
  int64_t out_count() const { return out[0] * out[1] * out[2]; }
  int64_t kernel_count() const { return k[0] * k[1] * k[2]; }
  bool is_pointwise() const {  // 1x1 kernel, stride 1, no padding: im2col is the identity
    for (int i = 0; i < 3; ++i)
      if (k[i] != 1 || s[i] != 1 || pb[i] != 0 || out[i] != in[i]) return false;
    return true;
  }
};

// Input index along axis `axis` of output index o and kernel tap t; may be out of range.
inline int64_t source(const Geo3& g, int axis, int64_t o, int64_t t) {
  return o * g.s[axis] - g.pb[axis] + t * g.d[axis];
}

// The range [lo, hi) of outputs o along W whose source o*s - pb + t*d lies in [0, in).
void valid_w_range(const Geo3& g, int64_t t, int64_t* lo, int64_t* hi) {
  const int64_t off = t * g.d[2] - g.pb[2];  // source = o * s + off
  const int64_t s = g.s[2];
  *lo = off >= 0 ? 0 : (-off + s - 1) / s;
  const int64_t last = g.in[2] - 1 - off;  // o * s <= last
  *hi = last < 0 ? 0 : std::min(g.out[2], last / s + 1);
  *lo = std::min(*lo, *hi);
}

// col[r][q] for rows r = (c, kd, kh, kw) over `channels` channels and columns q = output
// positions p0 .. p0+nc (row-major over out D, H, W); 0 where the window is in padding.
template <class T>
void im2col(const Geo3& g, const T* x, int64_t channels, int64_t p0, int64_t nc, T* col) {
  const int64_t kc = g.kernel_count();
  for (int64_t r = 0; r < channels * kc; ++r) {
    const int64_t c = r / kc, kd = r % kc / (g.k[1] * g.k[2]), kh = r % (g.k[1] * g.k[2]) / g.k[2],
                  kw = r % g.k[2];
    int64_t w_lo, w_hi;
    valid_w_range(g, kw, &w_lo, &w_hi);
    T* dst = col + r * nc;
    int64_t od = p0 / (g.out[1] * g.out[2]), oh = p0 / g.out[2] % g.out[1], ow = p0 % g.out[2];
    for (int64_t q = 0; q < nc;) {
      const int64_t run = std::min(g.out[2] - ow, nc - q);
      const int64_t id = source(g, 0, od, kd), ih = source(g, 1, oh, kh);
      if (id < 0 || id >= g.in[0] || ih < 0 || ih >= g.in[1]) {
        std::fill(dst + q, dst + q + run, T(0));
      } else {
        const T* row = x + ((c * g.in[0] + id) * g.in[1] + ih) * g.in[2];
        for (int64_t t = 0; t < run; ++t) {
          const int64_t o = ow + t;
          dst[q + t] = (o >= w_lo && o < w_hi) ? row[source(g, 2, o, kw)] : T(0);
        }
      }
      q += run;
      ow += run;
      if (ow == g.out[2]) {
        ow = 0;
        if (++oh == g.out[1]) oh = 0, ++od;
      }
    }
  }
}

// One input channel per group: y[o] = sum over taps of w[tap] * x[src(o, tap)], taps in
// row-major order, straight from the input (no im2col).
template <class T>
void direct_single_channel(const Geo3& g, const T* x, const T* w, T* y) {
  std::fill(y, y + g.out_count(), T(0));
  for (int64_t od = 0; od < g.out[0]; ++od)
    for (int64_t oh = 0; oh < g.out[1]; ++oh) {
      T* yrow = y + (od * g.out[1] + oh) * g.out[2];
      for (int64_t kd = 0; kd < g.k[0]; ++kd) {
        const int64_t id = source(g, 0, od, kd);
        if (id < 0 || id >= g.in[0]) continue;
        for (int64_t kh = 0; kh < g.k[1]; ++kh) {
          const int64_t ih = source(g, 1, oh, kh);
          if (ih < 0 || ih >= g.in[1]) continue;
          const T* xrow = x + (id * g.in[1] + ih) * g.in[2];
          for (int64_t kw = 0; kw < g.k[2]; ++kw) {
            const T wv = w[(kd * g.k[1] + kh) * g.k[2] + kw];
            int64_t lo, hi;
            valid_w_range(g, kw, &lo, &hi);
            const int64_t off = kw * g.d[2] - g.pb[2];
            if (g.s[2] == 1)
              for (int64_t o = lo; o < hi; ++o) yrow[o] += wv * xrow[o + off];
            else
              for (int64_t o = lo; o < hi; ++o) yrow[o] += wv * xrow[o * g.s[2] + off];
          }
        }
      }
    }
}

// Columns of im2col per GEMM call: bounds the scratch to ~4 MiB and keeps it cache-near.
int64_t column_chunk(int64_t rows, int64_t total) {
  const int64_t budget = int64_t{1} << 20;  // elements
  int64_t nc = std::max<int64_t>(64, budget / std::max<int64_t>(rows, 1) / 64 * 64);
  return std::min(nc, total);
}

template <class T>
void conv_forward_impl(const ConvProblem& p, const T* x, const T* w, T* y) {
  const Geo3 g(p.geometry);
  const int64_t cg = p.in_per_group(), mg = p.out_per_group();
  const int64_t kc = g.kernel_count(), in_size = g.in_count(), out_size = g.out_count();
  const int64_t rows = cg * kc;
  const int64_t chunk = column_chunk(rows, out_size);
  std::vector<T> col(g.is_pointwise() || cg == 1 ? 0 : static_cast<size_t>(rows * chunk));
  for (int64_t n = 0; n < p.batch; ++n)
    for (int64_t grp = 0; grp < p.groups; ++grp) {
      const T* xg = x + (n * p.in_channels + grp * cg) * in_size;
      const T* wg = w + grp * mg * rows;
      T* yg = y + (n * p.out_channels + grp * mg) * out_size;
      if (cg == 1) {
        for (int64_t m = 0; m < mg; ++m) direct_single_channel(g, xg, wg + m * kc, yg + m * out_size);
      } else if (g.is_pointwise()) {
        gemm(mg, out_size, rows, MatrixView<T>::row_major(wg, rows), MatrixView<T>::row_major(xg, out_size), yg,
             out_size, false);
      } else {
        for (int64_t p0 = 0; p0 < out_size; p0 += chunk) {
          const int64_t nc = std::min(chunk, out_size - p0);
          im2col(g, xg, cg, p0, nc, col.data());
          gemm(mg, nc, rows, MatrixView<T>::row_major(wg, rows), MatrixView<T>::row_major(col.data(), nc), yg + p0,
               out_size, false);
        }
      }
    }
}

// y[m][dst(q, tap)] += col[(m, tap)][q] for input positions q = q0 .. q0+nc.
void col2im(const Geo3& g, const float* col, int64_t channels, int64_t q0, int64_t nc, float* y) {
  const int64_t kc = g.kernel_count();
  for (int64_t r = 0; r < channels * kc; ++r) {
    const int64_t m = r / kc, kd = r % kc / (g.k[1] * g.k[2]), kh = r % (g.k[1] * g.k[2]) / g.k[2],
                  kw = r % g.k[2];
    const float* src = col + r * nc;
    float* ym = y + m * g.out_count();
    for (int64_t q = 0; q < nc; ++q) {
      const int64_t pos = q0 + q;
      const int64_t id = pos / (g.in[1] * g.in[2]), ih = pos / g.in[2] % g.in[1], iw = pos % g.in[2];
      const int64_t od = source(g, 0, id, kd), oh = source(g, 1, ih, kh), ow = source(g, 2, iw, kw);
      if (od < 0 || od >= g.out[0] || oh < 0 || oh >= g.out[1] || ow < 0 || ow >= g.out[2]) continue;
      ym[(od * g.out[1] + oh) * g.out[2] + ow] += src[q];
    }
  }
}

}  // namespace

int64_t ConvProblem::in_spatial() const {
  int64_t n = 1;
  for (const AxisGeometry& a : geometry.axes) n *= a.in;
  return n;
}

void conv_forward(const ConvProblem& p, const float* x, const float* w, float* y) { conv_forward_impl(p, x, w, y); }

void conv_forward(const ConvProblem& p, const uint32_t* x, const uint32_t* w, uint32_t* y) {
  conv_forward_impl(p, x, w, y);
}

void conv_transpose(const ConvProblem& p, const float* x, const float* w, float* y) {
  const Geo3 g(p.geometry);
  const int64_t cg = p.in_per_group(), mg = p.out_per_group();
  const int64_t kc = g.kernel_count(), in_size = g.in_count(), out_size = g.out_count();
  const int64_t rows = mg * kc;
  const int64_t chunk = column_chunk(rows, in_size);
  std::vector<float> col(static_cast<size_t>(rows * chunk));
  std::fill(y, y + p.batch * p.out_channels * out_size, 0.0f);
  for (int64_t n = 0; n < p.batch; ++n)
    for (int64_t grp = 0; grp < p.groups; ++grp) {
      const float* xg = x + (n * p.in_channels + grp * cg) * in_size;
      const float* wg = w + grp * cg * rows;  // [cg][mg * kc]
      float* yg = y + (n * p.out_channels + grp * mg) * out_size;
      for (int64_t q0 = 0; q0 < in_size; q0 += chunk) {
        const int64_t nc = std::min(chunk, in_size - q0);
        // col[(m, tap)][q] = sum over c of w[c][(m, tap)] * x[c][q]
        gemm(rows, nc, cg, MatrixView<float>::transposed(wg, rows), MatrixView<float>{xg + q0, in_size, 1},
             col.data(), nc, false);
        col2im(g, col.data(), mg, q0, nc, yg);
      }
    }
}

}  // namespace npuforge::model
