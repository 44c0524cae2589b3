#pragma once
// Naive N-d convolution loops for the tests: every output element summed directly from its
// definition, in double (float ops) or int64 (integer ops), with explicit pads only.
#include <cstdint>
#include <functional>
#include <vector>

#include "model/tensor.h"

namespace npuforge::model::testing {

struct RefConvAttrs {
  std::vector<int64_t> strides, dilations, pad_begin, pad_end;  // one per spatial axis
  int64_t group = 1;
};

// Calls f(index) for every multi-index below `dims` in row-major order.
inline void for_each_index(const std::vector<int64_t>& dims, const std::function<void(const std::vector<int64_t>&)>& f) {
  for (int64_t d : dims)
    if (d <= 0) return;
  std::vector<int64_t> idx(dims.size(), 0);
  while (true) {
    f(idx);
    size_t a = dims.size();
    while (a > 0) {
      if (++idx[a - 1] < dims[a - 1]) break;
      idx[a - 1] = 0;
      --a;
    }
    if (a == 0) return;
  }
}

inline int64_t flat(const std::vector<int64_t>& dims, const std::vector<int64_t>& idx) {
  int64_t f = 0;
  for (size_t i = 0; i < dims.size(); ++i) f = f * dims[i] + idx[i];
  return f;
}

// y = conv(x, w) + b with x [N, C, in...], w [M, C/group, k...]; `value(t, i)` reads
// element i of t as double (lets the integer tests subtract zero points).
inline std::vector<double> ref_conv(const Tensor& x, const Tensor& w, const RefConvAttrs& a, Shape* out_shape,
                                    const std::function<double(const Tensor&, int64_t)>& value,
                                    const std::vector<double>& bias = {}) {
  const size_t r = x.rank() - 2;
  const Shape& xs = x.shape();
  const Shape& ws = w.shape();
  Shape os{xs[0], ws[0]};
  for (size_t i = 0; i < r; ++i) {
    const int64_t eff = (ws[i + 2] - 1) * a.dilations[i] + 1;
    os.push_back((xs[i + 2] + a.pad_begin[i] + a.pad_end[i] - eff) / a.strides[i] + 1);
  }
  *out_shape = os;
  const int64_t cg = ws[1], mg = ws[0] / a.group;
  std::vector<double> y(static_cast<size_t>(element_count(os)), 0.0);
  for_each_index(os, [&](const std::vector<int64_t>& o) {
    const int64_t n = o[0], m = o[1], g = m / mg;
    double sum = 0;
    for (int64_t c = 0; c < cg; ++c)
      for_each_index(Shape(ws.begin() + 2, ws.end()), [&](const std::vector<int64_t>& k) {
        std::vector<int64_t> xi{n, g * cg + c};
        for (size_t i = 0; i < r; ++i) {
          const int64_t src = o[i + 2] * a.strides[i] - a.pad_begin[i] + k[i] * a.dilations[i];
          if (src < 0 || src >= xs[i + 2]) return;
          xi.push_back(src);
        }
        std::vector<int64_t> wi{m, c};
        wi.insert(wi.end(), k.begin(), k.end());
        sum += value(x, flat(xs, xi)) * value(w, flat(ws, wi));
      });
    y[static_cast<size_t>(flat(os, o))] = sum + (bias.empty() ? 0.0 : bias[static_cast<size_t>(m)]);
  });
  return y;
}

inline double real_value(const Tensor& t, int64_t i) { return t.real_at(i); }

}  // namespace npuforge::model::testing
