// Gemm, MatMul, MatMulInteger and QLinearMatMul against naive loops; broadcasting, 1-D
// operands, shape inference and error cases.
#include <cmath>

#include <gtest/gtest.h>

#include "tests/model/conv_reference.h"
#include "tests/model/op_harness.h"

namespace npuforge::model::testing {
namespace {

// y[i][j] = sum_k a(i, k) * b(k, j) in double.
std::vector<double> naive_mm(int64_t m, int64_t n, int64_t k, const std::function<double(int64_t, int64_t)>& a,
                             const std::function<double(int64_t, int64_t)>& b) {
  std::vector<double> y(static_cast<size_t>(m * n), 0.0);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j)
      for (int64_t t = 0; t < k; ++t) y[static_cast<size_t>(i * n + j)] += a(i, t) * b(t, j);
  return y;
}

TEST(Gemm, TransposesAlphaBetaAndBroadcastC) {
  Rng rng(31);
  int variant = 0;
  for (int ta = 0; ta < 2; ++ta)
    for (int tb = 0; tb < 2; ++tb)
      for (int ci = 0; ci < 6; ++ci) {
        // One product crosses every GEMM block size (M > 64, K > 256, N > 512); the others are small.
        const bool big = ta == 1 && tb == 0 && ci == 4;
        const int64_t m = big ? 70 : 9, k = big ? 300 : 17, n = big ? 530 : 13;
        const Shape cs = std::vector<Shape>{{}, {n}, {1, n}, {m, 1}, {m, n}, {1}}[static_cast<size_t>(ci)];
        SCOPED_TRACE(::testing::Message() << "transA=" << ta << " transB=" << tb << " C=" << shape_str(cs));
        const Tensor a = random_floats(ta ? Shape{k, m} : Shape{m, k}, rng);
        const Tensor b = random_floats(tb ? Shape{n, k} : Shape{k, n}, rng);
        const Tensor c = random_floats(cs, rng);
        const float alpha = variant % 2 ? 0.5f : 1.0f, beta = variant % 3 ? 2.0f : 1.0f;
        ++variant;
        const Node node = op_node("Gemm", 3, {{"transA", int64_t{ta}}, {"transB", int64_t{tb}}, {"alpha", alpha}, {"beta", beta}});
        const Tensor y = run_checked(node, {&a, &b, &c})[0];
        std::vector<double> e = naive_mm(
            m, n, k, [&](int64_t i, int64_t t) { return a.real_at(ta ? t * m + i : i * k + t); },
            [&](int64_t t, int64_t j) { return b.real_at(tb ? j * k + t : t * n + j); });
        for (int64_t i = 0; i < m; ++i)
          for (int64_t j = 0; j < n; ++j) {
            const int64_t ci = cs.size() == 2 ? (cs[0] == 1 ? 0 : i) * cs[1] + (cs[1] == 1 ? 0 : j)
                                              : (cs.empty() || cs[0] == 1 ? 0 : j);
            double& v = e[static_cast<size_t>(i * n + j)];
            v = alpha * v + beta * c.real_at(ci);
          }
        EXPECT_TRUE(near_all(y, e, 1e-5, 1e-4));
      }
}

TEST(Gemm, OptionalCAndErrors) {
  Rng rng(32);
  const Tensor a = random_floats({3, 4}, rng), b = random_floats({4, 5}, rng);
  const Tensor y = run_checked(op_node("Gemm", 2), {&a, &b})[0];
  EXPECT_TRUE(near_all(y, naive_mm(3, 5, 4, [&](int64_t i, int64_t t) { return a.real_at(i * 4 + t); },
                                   [&](int64_t t, int64_t j) { return b.real_at(t * 5 + j); })));
  const Tensor c_bad = random_floats({3, 4}, rng), a3 = random_floats({1, 3, 4}, rng);
  EXPECT_TRUE(fails_with([&] { run_op(op_node("Gemm", 3), {&a, &b, &c_bad}); }, "does not broadcast to 3x5"));
  EXPECT_TRUE(fails_with([&] { run_op(op_node("Gemm", 2), {&a3, &b}); }, "must both be 2-D"));
  EXPECT_TRUE(fails_with([&] { run_op(op_node("Gemm", 2, {{"transB", int64_t{1}}}), {&a, &b}); }, "do not multiply"));
  const InferResult r = infer_op(op_node("Gemm", 2), {known(DType::kFloat32, {kUnknownDim, 4}), info_of(b)});
  EXPECT_EQ(r.outputs[0].shape, (Shape{kUnknownDim, 5}));
}

struct MatMulCase {
  Shape a, b, out;
};

TEST(MatMul, NumpySemantics) {
  const std::vector<MatMulCase> cases = {
      {{3, 4}, {4, 5}, {3, 5}},          {{4}, {4, 5}, {5}},
      {{3, 4}, {4}, {3}},                {{4}, {4}, {}},
      {{2, 3, 4}, {2, 4, 5}, {2, 3, 5}}, {{2, 1, 3, 4}, {3, 4, 5}, {2, 3, 3, 5}},
      {{3, 4}, {2, 4, 5}, {2, 3, 5}},    {{2, 3, 4}, {4}, {2, 3}},
      {{5}, {2, 5, 3}, {2, 3}},          {{1, 2, 9, 70}, {2, 1, 70, 20}, {2, 2, 9, 20}},
  };
  Rng rng(33);
  for (const MatMulCase& c : cases) {
    SCOPED_TRACE(shape_str(c.a) + " @ " + shape_str(c.b));
    const Tensor a = random_floats(c.a, rng), b = random_floats(c.b, rng);
    const Tensor y = run_checked(op_node("MatMul", 2), {&a, &b})[0];
    ASSERT_EQ(y.shape(), c.out);
    // Independent reference: promote, broadcast every batch axis by hand.
    const Shape pa = c.a.size() == 1 ? Shape{1, c.a[0]} : c.a, pb = c.b.size() == 1 ? Shape{c.b[0], 1} : c.b;
    const size_t rank = std::max(pa.size(), pb.size());
    Shape batch(rank - 2);
    auto dim = [&](const Shape& s, size_t i) { return i + s.size() < rank ? 1 : s[i + s.size() - rank]; };
    for (size_t i = 0; i + 2 < rank; ++i) batch[i] = std::max(dim(pa, i), dim(pb, i));
    const int64_t m = pa[pa.size() - 2], k = pa.back(), n = pb.back();
    std::vector<double> expected;
    for_each_index(batch.empty() ? Shape{1} : batch, [&](const std::vector<int64_t>& bi) {
      auto offset = [&](const Shape& s, int64_t mat) {
        int64_t off = 0;
        for (size_t i = 0; i + 2 < s.size(); ++i) {
          const size_t bidx = i + rank - s.size();
          off = off * s[i] + (s[i] == 1 || batch.empty() ? 0 : bi[bidx]);
        }
        return off * mat;
      };
      const int64_t ao = offset(pa, m * k), bo = offset(pb, k * n);
      const std::vector<double> y1 = naive_mm(m, n, k, [&](int64_t i, int64_t t) { return a.real_at(ao + i * k + t); },
                                              [&](int64_t t, int64_t j) { return b.real_at(bo + t * n + j); });
      expected.insert(expected.end(), y1.begin(), y1.end());
    });
    EXPECT_TRUE(near_all(y, expected, 1e-5, 1e-5));
  }
}

TEST(MatMul, InferAndErrors) {
  const Node node = op_node("MatMul", 2);
  EXPECT_EQ(infer_op(node, {known(DType::kFloat32, {kUnknownDim, 5, 4}), known(DType::kFloat32, {4, 7})}).outputs[0].shape,
            (Shape{kUnknownDim, 5, 7}));
  EXPECT_TRUE(fails_with([&] { infer_op(node, {known(DType::kFloat32, {5, 4}), known(DType::kFloat32, {3, 7})}); },
                         "inner dimensions 4 and 3"));
  EXPECT_TRUE(fails_with([&] { infer_op(node, {known(DType::kFloat32, {2, 5, 4}), known(DType::kFloat32, {3, 4, 7})}); },
                         "do not broadcast"));
  Rng rng(34);
  const Tensor s = Tensor::scalar(1.0f), v = random_floats({3}, rng);
  EXPECT_TRUE(fails_with([&] { run_op(node, {&s, &v}); }, "scalars do not multiply"));
  const Tensor i = random_ints<int32_t>({3}, rng, 0, 3);
  EXPECT_TRUE(fails_with([&] { run_op(node, {&i, &v}); }, "input 0 has type int32, expected float32"));
}

// ---- integer forms ----

TEST(MatMulInteger, ExactWithPerRowAndPerColumnZeroPoints) {
  Rng rng(35);
  const Tensor a = random_ints<uint8_t>({2, 5, 40}, rng, 0, 255);
  const Tensor b = random_ints<int8_t>({40, 9}, rng, -128, 127);
  const Tensor az = random_ints<uint8_t>({5}, rng, 100, 150), bz = random_ints<int8_t>({9}, rng, -5, 5);
  const Tensor az1 = Tensor::scalar<uint8_t>(128);
  for (const Tensor* a_zp : {&az, &az1}) {
    const Tensor y = run_checked(op_node("MatMulInteger", 4), {&a, &b, a_zp, &bz})[0];
    ASSERT_EQ(y.dtype(), DType::kInt32);
    ASSERT_EQ(y.shape(), (Shape{2, 5, 9}));
    std::vector<double> expected;
    for (int64_t batch = 0; batch < 2; ++batch) {
      const std::vector<double> e = naive_mm(
          5, 9, 40, [&](int64_t i, int64_t t) { return a.int_at((batch * 5 + i) * 40 + t) - a_zp->int_at(a_zp->numel() == 1 ? 0 : i); },
          [&](int64_t t, int64_t j) { return b.int_at(t * 9 + j) - bz.int_at(j); });
      expected.insert(expected.end(), e.begin(), e.end());
    }
    EXPECT_TRUE(near_all(y, expected, 0, 0));
  }
  // Without zero points.
  const Tensor y0 = run_checked(op_node("MatMulInteger", 2), {&a, &b})[0];
  EXPECT_EQ(y0.int_at(0), [&] {
    int64_t s = 0;
    for (int64_t t = 0; t < 40; ++t) s += a.int_at(t) * b.int_at(t * 9);
    return s;
  }());
  const Tensor bz_bad = random_ints<int8_t>({4}, rng, -5, 5);
  EXPECT_TRUE(fails_with([&] { run_op(op_node("MatMulInteger", 4), {&a, &b, &az1, &bz_bad}); }, "expected a scalar or 9 values"));
}

TEST(QLinearMatMul, PerColumnScalesRequantizeExactly) {
  Rng rng(36);
  const Tensor a = random_ints<uint8_t>({3, 4, 16}, rng, 0, 255);
  const Tensor b = random_ints<int8_t>({16, 6}, rng, -127, 127);
  const Tensor as = Tensor::scalar(0.03f), az = Tensor::scalar<uint8_t>(120);
  const Tensor bs = tensor<float>({6}, {0.002f, 0.004f, 0.001f, 0.003f, 0.0025f, 0.005f});
  const Tensor bz = tensor<int8_t>({6}, {0, 0, 0, 0, 0, 0});
  const Tensor ys = Tensor::scalar(0.04f), yz = Tensor::scalar<int8_t>(5);
  const Tensor y = run_checked(op_node("QLinearMatMul", 8), {&a, &as, &az, &b, &bs, &bz, &ys, &yz})[0];
  ASSERT_EQ(y.dtype(), DType::kInt8);
  ASSERT_EQ(y.shape(), (Shape{3, 4, 6}));
  for (int64_t i = 0; i < y.numel(); ++i) {
    const int64_t row = i / 6, col = i % 6;
    int64_t acc = 0;
    for (int64_t t = 0; t < 16; ++t) acc += (a.int_at(row * 16 + t) - 120) * b.int_at(t * 6 + col);
    const float mult = 0.03f * bs.values<float>()[static_cast<size_t>(col)] / 0.04f;
    const double q = std::nearbyint(static_cast<float>(acc) * mult) + 5;
    ASSERT_EQ(y.int_at(i), static_cast<int64_t>(std::min(127.0, std::max(-128.0, q)))) << "element " << i;
  }
}

TEST(QLinearMatMul, TiesRoundToEven) {
  // a - 10 = 1, 3, 5, -1; b = 1; multiplier 0.5 -> 0.5, 1.5, 2.5, -0.5 -> 0, 2, 2, -0 (+ zp 7)
  const Tensor a = tensor<uint8_t>({4, 1}, {11, 13, 15, 9}), b = tensor<uint8_t>({1, 1}, {1});
  const Tensor s1 = Tensor::scalar(1.0f), s2 = Tensor::scalar(2.0f);
  const Tensor az = Tensor::scalar<uint8_t>(10), bz = Tensor::scalar<uint8_t>(0), yz = Tensor::scalar<uint8_t>(7);
  const Tensor y = run_checked(op_node("QLinearMatMul", 8), {&a, &s1, &az, &b, &s1, &bz, &s2, &yz})[0];
  EXPECT_EQ(y, tensor<uint8_t>({4, 1}, {7, 9, 9, 7}));
}

}  // namespace
}  // namespace npuforge::model::testing
