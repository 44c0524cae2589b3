// MaxPool, AveragePool, LpPool and the global pools against naive window loops, with
// output extents worked out by hand (ceil_mode, dilations, the dropped last window).
#include <cmath>
#include <limits>

#include <gtest/gtest.h>

#include "tests/model/conv_reference.h"
#include "tests/model/op_harness.h"

namespace npuforge::model::testing {
namespace {

enum class Kind { kMax, kAvg, kAvgIncludePad, kL2 };

struct PoolCase {
  const char* name;
  Shape x;
  std::vector<int64_t> kernel, strides, dilations, pads;
  bool ceil_mode;
  Shape expected_out_spatial;  // by hand from the ONNX formulas
};

// Reference values for given output extents; indices: flat input offset of the first max.
std::vector<double> ref_pool(const Tensor& x, const PoolCase& c, Kind kind, std::vector<int64_t>* indices) {
  const size_t r = c.kernel.size();
  Shape out{x.shape()[0], x.shape()[1]};
  out.insert(out.end(), c.expected_out_spatial.begin(), c.expected_out_spatial.end());
  std::vector<double> y;
  for_each_index(out, [&](const std::vector<int64_t>& o) {
    double best = -std::numeric_limits<double>::infinity(), sum = 0;
    int64_t valid = 0, padded = 0, best_at = -1;
    for_each_index(c.kernel, [&](const std::vector<int64_t>& t) {
      std::vector<int64_t> xi{o[0], o[1]};
      bool inside = true, inside_padded = true;
      for (size_t i = 0; i < r; ++i) {
        const int64_t pos = o[i + 2] * c.strides[i] - c.pads[i] + t[i] * c.dilations[i];
        inside = inside && pos >= 0 && pos < x.shape()[i + 2];
        inside_padded = inside_padded && pos < x.shape()[i + 2] + c.pads[i + r];
        xi.push_back(pos);
      }
      padded += inside_padded;
      if (!inside) return;
      const double v = x.real_at(flat(x.shape(), xi));
      ++valid;
      sum += kind == Kind::kL2 ? v * v : v;
      if (v > best) best = v, best_at = flat(x.shape(), xi);
    });
    if (indices) indices->push_back(best_at);
    switch (kind) {
      case Kind::kMax: y.push_back(best); break;
      case Kind::kAvg: y.push_back(sum / valid); break;
      case Kind::kAvgIncludePad: y.push_back(sum / padded); break;
      case Kind::kL2: y.push_back(std::sqrt(sum)); break;
    }
  });
  return y;
}

const std::vector<PoolCase>& pool_cases() {
  static const std::vector<PoolCase> cases = {
      {"3x3 s2 p1", {2, 3, 7, 7}, {3, 3}, {2, 2}, {1, 1}, {1, 1, 1, 1}, false, {4, 4}},
      {"asymmetric", {1, 2, 6, 5}, {2, 3}, {1, 2}, {1, 1}, {0, 1, 1, 2}, false, {6, 3}},
      {"ceil_mode", {1, 2, 6, 6}, {3, 3}, {2, 2}, {1, 1}, {0, 0, 0, 0}, true, {3, 3}},
      // span 5 + 2 - 2 = 5: ceil gives 4, but window 3 would start in the end padding: 3.
      {"ceil_mode drops last window", {1, 1, 5, 5}, {2, 2}, {2, 2}, {1, 1}, {1, 1, 1, 1}, true, {3, 3}},
      {"ceil_mode overhang with pads", {1, 2, 6, 7}, {3, 3}, {2, 2}, {1, 1}, {1, 1, 1, 1}, true, {4, 4}},
      {"dilated", {1, 2, 8, 9}, {2, 3}, {1, 2}, {3, 2}, {0, 1, 0, 1}, false, {5, 4}},
      {"1d", {2, 3, 11}, {3}, {2}, {1}, {1, 1}, false, {6}},
      {"3d", {1, 2, 5, 6, 4}, {2, 3, 2}, {2, 1, 2}, {1, 1, 1}, {1, 1, 0, 0, 1, 1}, true, {3, 6, 2}},
  };
  return cases;
}

Node pool_node(const char* op, const PoolCase& c, AttrList extra = {}, size_t outputs = 1) {
  Node n = op_node(op, 1,
                   {{"kernel_shape", c.kernel}, {"strides", c.strides}, {"dilations", c.dilations}, {"pads", c.pads},
                    {"ceil_mode", int64_t{c.ceil_mode}}},
                   outputs);
  for (const auto& [k, v] : extra) n.attributes[k] = Attribute{v};
  return n;
}

Shape full_shape(const PoolCase& c) {
  Shape s{c.x[0], c.x[1]};
  s.insert(s.end(), c.expected_out_spatial.begin(), c.expected_out_spatial.end());
  return s;
}

TEST(MaxPool, ValuesAndIndicesMatchNaiveLoops) {
  Rng rng(41);
  for (const PoolCase& c : pool_cases()) {
    SCOPED_TRACE(c.name);
    const Tensor x = random_floats(c.x, rng);
    const std::vector<Tensor> y = run_checked(pool_node("MaxPool", c, {}, 2), {&x});
    std::vector<int64_t> indices;
    const std::vector<double> expected = ref_pool(x, c, Kind::kMax, &indices);
    ASSERT_EQ(y[0].shape(), full_shape(c));
    EXPECT_TRUE(near_all(y[0], expected, 0, 0));
    ASSERT_EQ(y[1].dtype(), DType::kInt64);
    EXPECT_EQ(y[1].to_int64s(), indices);
  }
}

TEST(MaxPool, ColumnMajorIndicesAndFirstMaximumWins) {
  // Window 0 holds its maximum 5 twice: the first one (row-major) is chosen.
  const Tensor x = tensor<float>({1, 1, 2, 3}, {5, 1, 5, 5, 0, 2});
  const PoolCase c{"", {1, 1, 2, 3}, {2, 2}, {1, 1}, {1, 1}, {0, 0, 0, 0}, false, {1, 2}};
  const std::vector<Tensor> row = run_checked(pool_node("MaxPool", c, {}, 2), {&x});
  EXPECT_EQ(row[1].to_int64s(), (std::vector<int64_t>{0, 2}));
  // storage_order 1: index = h + w * H (column-major over the spatial axes).
  const std::vector<Tensor> col = run_checked(pool_node("MaxPool", c, {{"storage_order", int64_t{1}}}, 2), {&x});
  EXPECT_EQ(col[1].to_int64s(), (std::vector<int64_t>{0, 4}));
  EXPECT_EQ(col[0], row[0]);
}

TEST(MaxPool, EightBitInputsFromOpset12) {
  Rng rng(42);
  const PoolCase& c = pool_cases()[0];
  const Tensor xu = random_ints<uint8_t>(c.x, rng, 0, 255), xs = random_ints<int8_t>(c.x, rng, -128, 127);
  for (const Tensor* x : {&xu, &xs}) {
    const Tensor y = run_checked(pool_node("MaxPool", c), {x}, 12)[0];
    EXPECT_EQ(y.dtype(), x->dtype());
    EXPECT_TRUE(near_all(y, ref_pool(*x, c, Kind::kMax, nullptr), 0, 0));
  }
  EXPECT_TRUE(fails_with([&] { run_op(pool_node("MaxPool", c), {&xu}, 11); }, "type uint8, expected float32"));
}

TEST(AveragePool, BothPadCountsMatchNaiveLoops) {
  Rng rng(43);
  for (const PoolCase& c : pool_cases()) {
    SCOPED_TRACE(c.name);
    const Tensor x = random_floats(c.x, rng);
    for (const bool include : {false, true}) {
      const Tensor y = run_checked(pool_node("AveragePool", c, {{"count_include_pad", int64_t{include}}}), {&x})[0];
      ASSERT_EQ(y.shape(), full_shape(c));
      EXPECT_TRUE(near_all(y, ref_pool(x, c, include ? Kind::kAvgIncludePad : Kind::kAvg, nullptr), 1e-6, 1e-6))
          << "count_include_pad=" << include;
    }
  }
}

TEST(LpPool, NormOfEachWindow) {
  Rng rng(44);
  const PoolCase& c = pool_cases()[1];
  const Tensor x = random_floats(c.x, rng);
  const Tensor y = run_checked(pool_node("LpPool", c, {{"p", int64_t{2}}}), {&x})[0];
  EXPECT_TRUE(near_all(y, ref_pool(x, c, Kind::kL2, nullptr), 1e-6, 1e-6));
}

TEST(Pool, AutoPadEqualsExplicitPads) {
  Rng rng(45);
  const Tensor x = random_floats({1, 2, 7, 6}, rng);
  auto run = [&](const char* op, AttrList attrs) {
    Node n = op_node(op, 1, {{"kernel_shape", std::vector<int64_t>{3, 2}}, {"strides", std::vector<int64_t>{2, 2}}});
    for (const auto& [k, v] : attrs) n.attributes[k] = Attribute{v};
    return run_checked(n, {&x})[0];
  };
  // H: in 7, k 3, s 2 -> out 4, total 2 -> 1/1; W: in 6, k 2, s 2 -> out 3, total 0.
  for (const char* op : {"MaxPool", "AveragePool"}) {
    EXPECT_EQ(run(op, {{"auto_pad", std::string("SAME_UPPER")}}), run(op, {{"pads", std::vector<int64_t>{1, 0, 1, 0}}}));
    EXPECT_EQ(run(op, {{"auto_pad", std::string("VALID")}}), run(op, {}));
  }
  const Tensor x2 = random_floats({1, 1, 4, 4}, rng);
  Node n = op_node("AveragePool", 1, {{"kernel_shape", std::vector<int64_t>{2, 2}}, {"auto_pad", std::string("SAME_LOWER")}});
  Node e = op_node("AveragePool", 1, {{"kernel_shape", std::vector<int64_t>{2, 2}}, {"pads", std::vector<int64_t>{1, 1, 0, 0}}});
  EXPECT_EQ(run_checked(n, {&x2})[0], run_checked(e, {&x2})[0]);
}

TEST(GlobalPools, MaxMeanAndL2OverSpatialAxes) {
  Rng rng(46);
  for (const Shape& s : {Shape{2, 3, 5}, Shape{1, 4, 3, 6}, Shape{2, 2, 2, 3, 4}}) {
    const Tensor x = random_floats(s, rng);
    const int64_t planes = s[0] * s[1], size = x.numel() / planes;
    std::vector<double> mx, mean, l2;
    for (int64_t p = 0; p < planes; ++p) {
      double m = -1e30, sum = 0, sq = 0;
      for (int64_t j = 0; j < size; ++j) {
        const double v = x.real_at(p * size + j);
        m = std::max(m, v), sum += v, sq += v * v;
      }
      mx.push_back(m), mean.push_back(sum / size), l2.push_back(std::sqrt(sq));
    }
    Shape out(s.size(), 1);
    out[0] = s[0], out[1] = s[1];
    const Tensor ymax = run_checked(op_node("GlobalMaxPool", 1), {&x})[0];
    EXPECT_EQ(ymax.shape(), out);
    EXPECT_TRUE(near_all(ymax, mx, 0, 0));
    EXPECT_TRUE(near_all(run_checked(op_node("GlobalAveragePool", 1), {&x})[0], mean, 1e-6, 1e-7));
    EXPECT_TRUE(near_all(run_checked(op_node("GlobalLpPool", 1), {&x})[0], l2, 1e-6, 1e-7));
  }
}

TEST(Pool, InferAndErrors) {
  const Node node = op_node("MaxPool", 1, {{"kernel_shape", std::vector<int64_t>{3, 3}}, {"strides", std::vector<int64_t>{2, 2}}});
  EXPECT_EQ(infer_op(node, {known(DType::kFloat32, {kUnknownDim, 8, 9, kUnknownDim})}).outputs[0].shape,
            (Shape{kUnknownDim, 8, 4, kUnknownDim}));
  Rng rng(47);
  const Tensor x = random_floats({1, 1, 4, 4}, rng), flat_x = random_floats({4, 4}, rng);
  EXPECT_TRUE(fails_with([&] { run_op(op_node("MaxPool", 1), {&x}); }, "missing required attribute 'kernel_shape'"));
  EXPECT_TRUE(fails_with([&] { run_op(op_node("AveragePool", 1, {{"kernel_shape", std::vector<int64_t>{2, 2}}, {"pads", std::vector<int64_t>{2, 0, 0, 0}}}), {&x}); },
                         "must be smaller than the kernel"));
  EXPECT_TRUE(fails_with([&] { run_op(node, {&flat_x}); }, "1 to 3 spatial axes"));
  EXPECT_TRUE(fails_with([&] { run_op(op_node("MaxPool", 1, {{"kernel_shape", std::vector<int64_t>{5, 5}}}), {&x}); },
                         "smaller than the kernel extent"));
  EXPECT_TRUE(fails_with([&] { run_op(op_node("GlobalAveragePool", 1), {&flat_x}); }, "has no spatial axis"));
}

}  // namespace
}  // namespace npuforge::model::testing
