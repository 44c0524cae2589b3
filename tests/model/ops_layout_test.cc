// Data movement ops: Gather, GatherElements, Concat, Split, Slice, Transpose, Pad, Tile,
// Expand; hand values, Slice and Pad against naive references, opset variants, errors.
#include <algorithm>
#include <numeric>

#include <gtest/gtest.h>

#include "ops_test_util.h"
#include "util/rng.h"

namespace npuforge::model {
namespace {

using namespace testing;

// 0, 1, 2, ... in `shape`.
Tensor iota(Shape shape) {
  Tensor t(DType::kFloat32, std::move(shape));
  std::iota(t.values<float>().begin(), t.values<float>().end(), 0.0f);
  return t;
}

TEST(Gather, AxisAndNegativeIndices) {
  Node n = make_node("Gather", 2);
  const Tensor x = iota({3, 2});
  EXPECT_EQ(run1(n, 13, {x, I64({2}, {2, -3})}), F({2, 2}, {4, 5, 0, 1}));
  set_attr(n, "axis", int64_t{1});
  EXPECT_EQ(run1(n, 13, {x, I32({2, 1}, {1, 0})}), F({3, 2, 1}, {1, 0, 3, 2, 5, 4}));
  EXPECT_EQ(run1(n, 13, {x, I64({}, {-1})}), F({3}, {1, 3, 5}));  // scalar index drops the axis
  expect_error([&] { run1(n, 13, {x, I64({1}, {2})}); }, {"(Gather)", "index 2 is out of range"});
  expect_error([&] { run1(n, 13, {x, F({1}, {0})}); }, {"indices", "float32"});
  EXPECT_EQ(infer(n, 13, {info_of(DType::kFloat32, {kUnknownDim, 5}), info_of(DType::kInt64, {4, 2})}).outputs[0].shape,
            (Shape{kUnknownDim, 4, 2}));
}

TEST(GatherElements, PicksAlongTheAxis) {
  Node n = make_node("GatherElements", 2);
  set_attr(n, "axis", int64_t{1});
  EXPECT_EQ(run1(n, 13, {F({2, 2}, {1, 2, 3, 4}), I64({2, 2}, {0, 0, 1, -2})}), F({2, 2}, {1, 1, 4, 3}));
  set_attr(n, "axis", int64_t{0});
  EXPECT_EQ(run1(n, 13, {iota({3, 3}), I64({2, 3}, {1, 2, 0, 2, 0, 0})}), F({2, 3}, {3, 7, 2, 6, 1, 2}));
  expect_error([&] { run1(n, 13, {iota({3, 3}), I64({1, 3}, {3, 0, 0})}); }, {"(GatherElements)", "out of range"});
}

TEST(Concat, JoinsAlongAnyAxis) {
  Node n = make_node("Concat", 3);
  set_attr(n, "axis", int64_t{-1});
  const Tensor y = run1(n, 13, {F({2, 1}, {1, 2}), F({2, 2}, {3, 4, 5, 6}), F({2, 0}, {})});
  EXPECT_EQ(y, F({2, 3}, {1, 3, 4, 2, 5, 6}));
  set_attr(n, "axis", int64_t{0});
  expect_error([&] { run1(n, 13, {F({2, 1}, {1, 2}), F({2, 2}, {3, 4, 5, 6}), F({2, 0}, {})}); },
               {"(Concat)", "does not fit"});
  const InferResult r = infer(n, 13, {info_of(DType::kFloat32, {kUnknownDim, 3}), info_of(DType::kFloat32, {2, 3}),
                                      info_of(DType::kFloat32, {2, kUnknownDim})});
  EXPECT_EQ(r.outputs[0].shape, (Shape{kUnknownDim, 3}));
  const InferResult s = infer(n, 13, {info_of(DType::kFloat32, {1, 3}), info_of(DType::kFloat32, {2, 3})});
  EXPECT_EQ(s.outputs[0].shape, (Shape{3, 3}));
  expect_error([&] { run1(make_node("Concat", 1), 13, {F({1}, {1})}); }, {"'axis'"});
}

TEST(Split, EqualAndExplicitParts) {
  Node n = make_node("Split", 1, 3);
  std::vector<Tensor> parts = run(n, 13, {iota({6})});
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(parts[2], F({2}, {4, 5}));
  Node v = make_node("Split", 2, 2);
  set_attr(v, "axis", int64_t{1});
  parts = run(v, 13, {iota({2, 3}), I64({2}, {1, 2})});
  EXPECT_EQ(parts[0], F({2, 1}, {0, 3}));
  EXPECT_EQ(parts[1], F({2, 2}, {1, 2, 4, 5}));
  Node a = make_node("Split", 1, 2);  // opset < 13: attribute
  set_attr(a, "split", std::vector<int64_t>{0, 3});
  parts = run(a, 11, {iota({3})});
  EXPECT_EQ(parts[0].shape(), (Shape{0}));
  EXPECT_EQ(parts[1], iota({3}));
  expect_error([&] { run(make_node("Split", 1, 4), 13, {iota({6})}); }, {"(Split)", "4 equal parts"});
  expect_error([&] { run(v, 13, {iota({2, 3}), I64({2}, {1, 1})}); }, {"sums to 2"});
  const InferResult r = infer(v, 13, {info_of(DType::kFloat32, {kUnknownDim, 3}), const_of(I64({2}, {2, 1}))});
  EXPECT_EQ(r.outputs[1].shape, (Shape{kUnknownDim, 1}));
}

// Naive reference of one sliced axis: clamp as the spec says, then step until past end.
std::vector<int64_t> slice_reference(int64_t start, int64_t end, int64_t step, int64_t dim) {
  if (start < 0) start += dim;
  if (end < 0) end += dim;
  std::vector<int64_t> out;
  if (dim == 0) return out;
  start = step > 0 ? std::clamp<int64_t>(start, 0, dim) : std::clamp<int64_t>(start, 0, dim - 1);
  end = step > 0 ? std::clamp<int64_t>(end, 0, dim) : std::clamp<int64_t>(end, -1, dim - 1);
  for (int64_t i = start; step > 0 ? i < end : i > end; i += step) out.push_back(i);
  return out;
}

TEST(Slice, RandomArgumentsMatchNaiveReference) {
  Rng rng(11);
  for (int k = 0; k < 2000; ++k) {
    const int64_t rows = rng.range(0, 5), cols = rng.range(1, 6);
    const Tensor x = iota({rows, cols});
    const int64_t axis = rng.range(-2, 1);
    const int64_t dim = axis == 0 || axis == -2 ? rows : cols;
    const auto pick = [&] { return rng.chance(0.1) ? (rng.chance(0.5) ? INT64_MAX : INT64_MIN) : rng.range(-8, 8); };
    const int64_t start = pick(), end = pick();
    int64_t step = rng.range(-3, 3);
    if (step == 0) step = 1;
    const Tensor y = run1(make_node("Slice", 5), 13, {x, I64({1}, {start}), I64({1}, {end}), I64({1}, {axis}), I64({1}, {step})});
    const std::vector<int64_t> picks = slice_reference(start, end, step, dim);
    const bool on_rows = axis == 0 || axis == -2;
    ASSERT_EQ(y.shape(), (on_rows ? Shape{static_cast<int64_t>(picks.size()), cols} : Shape{rows, static_cast<int64_t>(picks.size())}))
        << start << ":" << end << ":" << step << " on axis " << axis;
    for (int64_t r = 0; r < y.shape()[0]; ++r)
      for (int64_t c = 0; c < y.shape()[1]; ++c) {
        const int64_t sr = on_rows ? picks[static_cast<size_t>(r)] : r, sc = on_rows ? c : picks[static_cast<size_t>(c)];
        ASSERT_EQ(y.values<float>()[static_cast<size_t>(r * y.shape()[1] + c)], static_cast<float>(sr * cols + sc));
      }
  }
}

TEST(Slice, AttributesBeforeOpset10AndDefaults) {
  Node a = make_node("Slice", 1);
  set_attr(a, "starts", std::vector<int64_t>{1, 0});
  set_attr(a, "ends", std::vector<int64_t>{2, -1});
  EXPECT_EQ(run1(a, 9, {iota({3, 3})}), F({1, 2}, {3, 4}));
  // No axes: the first len(starts) axes; no steps: 1.
  EXPECT_EQ(run1(make_node("Slice", 3), 13, {iota({3, 3}), I64({1}, {1}), I64({1}, {10})}), F({2, 3}, {3, 4, 5, 6, 7, 8}));
  EXPECT_EQ(run1(make_node("Slice", 5), 13, {iota({4}), I32({1}, {-1}), I32({1}, {-5}), std::nullopt, I32({1}, {-2})}),
            F({2}, {3, 1}));
  expect_error([&] { run1(make_node("Slice", 5), 13, {iota({4}), I64({1}, {0}), I64({1}, {1}), I64({1}, {0}), I64({1}, {0})}); },
               {"(Slice)", "step is 0"});
  expect_error([&] { run1(make_node("Slice", 4), 13, {iota({2, 2}), I64({1}, {0}), I64({1}, {1}), I64({2}, {0, 1})}); },
               {"same length"});
}

TEST(Slice, InferKnownAndUnknown) {
  const Node n = make_node("Slice", 4);
  InferResult r = infer(n, 13, {info_of(DType::kFloat32, {kUnknownDim, 10}), const_of(I64({1}, {2})), const_of(I64({1}, {-2})),
                                const_of(I64({1}, {1}))});
  EXPECT_EQ(r.outputs[0].shape, (Shape{kUnknownDim, 6}));
  r = infer(n, 13, {info_of(DType::kFloat32, {4, 10}), info_of(DType::kInt64, {1}), const_of(I64({1}, {-2})),
                    const_of(I64({1}, {1}))});
  EXPECT_EQ(r.outputs[0].shape, (Shape{kUnknownDim, kUnknownDim}));
}

TEST(Transpose, PermAndDefaultReverse) {
  Node n = make_node("Transpose", 1);
  EXPECT_EQ(run1(n, 13, {iota({2, 3})}), F({3, 2}, {0, 3, 1, 4, 2, 5}));
  set_attr(n, "perm", std::vector<int64_t>{1, 2, 0});
  const Tensor y = run1(n, 13, {iota({2, 3, 4})});
  EXPECT_EQ(y.shape(), (Shape{3, 4, 2}));
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t j = 0; j < 4; ++j)
      for (int64_t k = 0; k < 2; ++k) EXPECT_EQ(y.values<float>()[static_cast<size_t>((i * 4 + j) * 2 + k)], k * 12 + i * 4 + j);
  set_attr(n, "perm", std::vector<int64_t>{0, 0, 1});
  expect_error([&] { run1(n, 13, {iota({2, 3, 4})}); }, {"(Transpose)", "not a permutation"});
}

TEST(Pad, ConstantReflectEdge) {
  Node n = make_node("Pad", 3);
  const Tensor x = F({2, 3}, {1, 2, 3, 4, 5, 6});
  EXPECT_EQ(run1(n, 13, {x, I64({4}, {0, 1, 1, 0}), F({}, {9})}), F({3, 4}, {9, 1, 2, 3, 9, 4, 5, 6, 9, 9, 9, 9}));
  set_attr(n, "mode", std::string("reflect"));
  EXPECT_EQ(run1(n, 13, {x, I64({4}, {0, 2, 0, 1}), std::nullopt}), F({2, 6}, {3, 2, 1, 2, 3, 2, 6, 5, 4, 5, 6, 5}));
  set_attr(n, "mode", std::string("edge"));
  EXPECT_EQ(run1(n, 13, {x, I64({4}, {1, 0, 0, 2}), std::nullopt}), F({3, 5}, {1, 2, 3, 3, 3, 1, 2, 3, 3, 3, 4, 5, 6, 6, 6}));
  set_attr(n, "mode", std::string("wrap"));
  expect_error([&] { run1(n, 13, {x, I64({4}, {0, 0, 0, 0}), std::nullopt}); }, {"(Pad)", "mode 'wrap'"});
}

TEST(Pad, NegativePadsCropThenPad) {
  Node n = make_node("Pad", 2);
  const Tensor x = F({5}, {1, 2, 3, 4, 5});
  EXPECT_EQ(run1(n, 13, {x, I64({2}, {-2, 1})}), F({4}, {3, 4, 5, 0}));
  set_attr(n, "mode", std::string("reflect"));  // reflects the cropped [3, 4, 5]
  EXPECT_EQ(run1(n, 13, {x, I64({2}, {-2, 2})}), F({5}, {3, 4, 5, 4, 3}));
  expect_error([&] { run1(n, 13, {x, I64({2}, {0, 5})}); }, {"reflect pads"});
  expect_error([&] { run1(make_node("Pad", 2), 13, {x, I64({2}, {-4, -2})}); }, {"crop more"});
}

TEST(Pad, AttributesBeforeOpset11AndTypes) {
  Node a = make_node("Pad", 1);
  set_attr(a, "pads", std::vector<int64_t>{1, 1});
  set_attr(a, "value", 2.5f);
  EXPECT_EQ(run1(a, 10, {F({1}, {7})}), F({3}, {2.5f, 7, 2.5f}));
  expect_error([&] { run1(a, 10, {I32({1}, {7})}); }, {"int32", "opset 10"});
  EXPECT_EQ(run1(make_node("Pad", 3), 13, {I8({1}, {7}), I64({2}, {1, 0}), I8({}, {-1})}), I8({2}, {-1, 7}));
  expect_error([&] { run1(make_node("Pad", 2), 13, {F({1}, {7}), I64({1}, {1})}); }, {"pads has 1 entries"});
  EXPECT_EQ(infer(make_node("Pad", 2), 13, {info_of(DType::kFloat32, {kUnknownDim, 3}), const_of(I64({4}, {0, 1, 0, 1}))})
                .outputs[0].shape,
            (Shape{kUnknownDim, 5}));
}

TEST(Tile, RepeatsEveryAxis) {
  EXPECT_EQ(run1(make_node("Tile", 2), 13, {F({2}, {1, 2}), I64({1}, {3})}), F({6}, {1, 2, 1, 2, 1, 2}));
  EXPECT_EQ(run1(make_node("Tile", 2), 13, {F({1, 2}, {1, 2}), I64({2}, {2, 0})}).shape(), (Shape{2, 0}));
  EXPECT_EQ(run1(make_node("Tile", 2), 13, {F({2, 1}, {1, 2}), I64({2}, {1, 2})}), F({2, 2}, {1, 1, 2, 2}));
  expect_error([] { run1(make_node("Tile", 2), 13, {F({2}, {1, 2}), I64({2}, {1, 1})}); }, {"(Tile)", "repeats has 2"});
}

TEST(Expand, BroadcastsBothWays) {
  EXPECT_EQ(run1(make_node("Expand", 2), 13, {F({3, 1}, {1, 2, 3}), I64({2}, {1, 1})}).shape(), (Shape{3, 1}));
  const Tensor y = run1(make_node("Expand", 2), 13, {F({3, 1}, {1, 2, 3}), I64({3}, {2, 1, 2})});
  EXPECT_EQ(y.shape(), (Shape{2, 3, 2}));
  EXPECT_EQ(vals<float>(y), (std::vector<float>{1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3}));
  expect_error([] { run1(make_node("Expand", 2), 13, {F({3}, {1, 2, 3}), I64({1}, {2})}); }, {"(Expand)", "do not broadcast"});
  EXPECT_EQ(infer(make_node("Expand", 2), 13, {info_of(DType::kFloat32, {3, 1}), const_of(I64({3}, {2, 1, 4}))}).outputs[0].shape,
            (Shape{2, 3, 4}));
}

}  // namespace
}  // namespace npuforge::model
