// Reductions and ArgMax/ArgMin against naive loops over every axes choice; axes as input
// (opset 13 ReduceSum), noop_with_empty_axes, integer types, shape inference, errors.
#include <cmath>
#include <functional>

#include <gtest/gtest.h>

#include "tests/model/conv_reference.h"
#include "tests/model/op_harness.h"

namespace npuforge::model::testing {
namespace {

// Reference: groups the input's elements by output cell (reduced axes dropped), then
// applies `combine` to each group's values in row-major order.
std::vector<double> ref_reduce(const Tensor& x, const std::vector<int64_t>& axes,
                               const std::function<double(const std::vector<double>&)>& combine) {
  std::vector<bool> reduced(x.rank(), axes.empty());
  for (int64_t a : axes) reduced[static_cast<size_t>(a < 0 ? a + static_cast<int64_t>(x.rank()) : a)] = true;
  Shape kept;
  for (size_t i = 0; i < x.rank(); ++i) kept.push_back(reduced[i] ? 1 : x.shape()[i]);
  std::vector<std::vector<double>> groups(static_cast<size_t>(element_count(kept)));
  for_each_index(x.shape(), [&](const std::vector<int64_t>& idx) {
    std::vector<int64_t> cell = idx;
    for (size_t i = 0; i < cell.size(); ++i)
      if (reduced[i]) cell[i] = 0;
    groups[static_cast<size_t>(flat(kept, cell))].push_back(x.real_at(flat(x.shape(), idx)));
  });
  std::vector<double> out;
  for (const auto& g : groups) out.push_back(combine(g));
  return out;
}

double sum_of(const std::vector<double>& v, const std::function<double(double)>& f) {
  double s = 0;
  for (double x : v) s += f(x);
  return s;
}

struct ReduceOp {
  const char* name;
  std::function<double(const std::vector<double>&)> combine;
};

const std::vector<ReduceOp>& reduce_ops() {
  static const std::vector<ReduceOp> ops = {
      {"ReduceSum", [](const auto& v) { return sum_of(v, [](double x) { return x; }); }},
      {"ReduceMean", [](const auto& v) { return sum_of(v, [](double x) { return x; }) / v.size(); }},
      {"ReduceMax", [](const auto& v) { return *std::max_element(v.begin(), v.end()); }},
      {"ReduceMin", [](const auto& v) { return *std::min_element(v.begin(), v.end()); }},
      {"ReduceProd", [](const auto& v) { double p = 1; for (double x : v) p *= x; return p; }},
      {"ReduceL1", [](const auto& v) { return sum_of(v, [](double x) { return std::fabs(x); }); }},
      {"ReduceL2", [](const auto& v) { return std::sqrt(sum_of(v, [](double x) { return x * x; })); }},
      {"ReduceLogSum", [](const auto& v) { return std::log(sum_of(v, [](double x) { return x; })); }},
      {"ReduceLogSumExp", [](const auto& v) { return std::log(sum_of(v, [](double x) { return std::exp(x); })); }},
      {"ReduceSumSquare", [](const auto& v) { return sum_of(v, [](double x) { return x * x; }); }},
  };
  return ops;
}

TEST(Reduce, EveryOpEveryAxesChoice) {
  Rng rng(61);
  const Tensor x = random_floats({2, 3, 4}, rng, 0.5f, 1.5f);  // positive: LogSum is defined
  const std::vector<std::vector<int64_t>> choices = {{}, {0}, {1}, {-1}, {0, 2}, {2, 0, 1}};
  for (const ReduceOp& op : reduce_ops())
    for (const auto& axes : choices)
      for (int64_t keep : {0, 1}) {
        SCOPED_TRACE(::testing::Message() << op.name << " axes " << axes.size() << " keepdims " << keep);
        Node node = op_node(op.name, 1, {{"keepdims", keep}});
        if (!axes.empty()) node.attributes["axes"] = Attribute{axes};
        const Tensor y = run_checked(node, {&x}, 11)[0];
        EXPECT_TRUE(near_all(y, ref_reduce(x, axes, op.combine), 1e-6, 1e-7));
        Shape expected;
        for (int64_t i = 0; i < 3; ++i) {
          const bool r = axes.empty() || std::count(axes.begin(), axes.end(), i) || std::count(axes.begin(), axes.end(), i - 3);
          if (!r) expected.push_back(x.shape()[static_cast<size_t>(i)]);
          else if (keep) expected.push_back(1);
        }
        EXPECT_EQ(y.shape(), expected);
      }
}

TEST(Reduce, AxesInputAndNoopWithEmptyAxes) {
  Rng rng(62);
  const Tensor x = random_floats({3, 2, 5}, rng);
  const Tensor axes = tensor<int64_t>({2}, {0, -1}), none = Tensor(DType::kInt64, {0});
  const Node node = op_node("ReduceSum", 2, {{"keepdims", int64_t{0}}});
  const Tensor y = run_checked(node, {&x, &axes}, 13)[0];
  EXPECT_TRUE(near_all(y, ref_reduce(x, {0, 2}, reduce_ops()[0].combine), 1e-6, 1e-7));
  EXPECT_EQ(run_checked(node, {&x, &none}, 13)[0].shape(), Shape{});  // empty axes: everything
  const Node noop = op_node("ReduceSum", 2, {{"noop_with_empty_axes", int64_t{1}}});
  EXPECT_EQ(run_checked(noop, {&x, &none}, 13)[0], x);
  EXPECT_EQ(run_checked(op_node("ReduceSum", 1, {{"noop_with_empty_axes", int64_t{1}}}), {&x}, 13)[0], x);
  // Axes known only at run time: with keepdims the rank is kept, without it nothing is known.
  const InferResult keep = infer_op(op_node("ReduceSum", 2), {info_of(x), info_of(axes)}, 13);
  EXPECT_EQ(keep.outputs[0].shape, (Shape{kUnknownDim, kUnknownDim, kUnknownDim}));
  EXPECT_FALSE(infer_op(node, {info_of(x), info_of(axes)}, 13).outputs[0].has_shape);
  EXPECT_EQ(infer_op(node, {info_of(x), info_of(axes)}, 13, {nullptr, &axes}).outputs[0].shape, (Shape{2}));
}

TEST(Reduce, IntegerTypes) {
  Rng rng(63);
  const Tensor x = random_ints<int32_t>({3, 4}, rng, -100, 100);
  for (const char* op : {"ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd"}) {
    const Tensor y = run_checked(op_node(op, 1, {{"axes", std::vector<int64_t>{1}}}), {&x}, 11)[0];
    EXPECT_EQ(y.dtype(), DType::kInt32);
    const auto& r = *std::find_if(reduce_ops().begin(), reduce_ops().end(), [&](const ReduceOp& o) { return std::string(o.name) == op; });
    EXPECT_TRUE(near_all(y, ref_reduce(x, {1}, r.combine), 0, 0)) << op;
  }
  // Integer mean truncates toward zero.
  const Tensor v = tensor<int64_t>({1, 3}, {-7, 0, 0});
  EXPECT_EQ(run_op(op_node("ReduceMean", 1), {&v}, 11)[0].int_at(0), -2);
  const Tensor u = random_ints<uint8_t>({2, 3}, rng, 0, 255);
  EXPECT_TRUE(fails_with([&] { run_op(op_node("ReduceSum", 1), {&u}, 11); }, "type uint8, not supported by this reduction"));
  EXPECT_TRUE(fails_with([&] { run_op(op_node("ReduceL2", 1), {&x}, 11); }, "type int32, not supported"));
}

TEST(Reduce, Errors) {
  Rng rng(64);
  const Tensor x = random_floats({2, 2}, rng);
  EXPECT_TRUE(fails_with([&] { run_op(op_node("ReduceMean", 1, {{"axes", std::vector<int64_t>{2}}}), {&x}, 11); }, "axis 2 is out of range"));
  EXPECT_TRUE(fails_with([&] { run_op(op_node("ReduceMean", 1, {{"axes", std::vector<int64_t>{1, -1}}}), {&x}, 11); }, "listed twice"));
}

TEST(ArgMaxArgMin, TiesKeepdimsAndLastIndex) {
  const Tensor x = tensor<float>({2, 4}, {3, 7, 7, 1, 5, 5, -2, 5});
  auto arg = [&](const char* op, AttrList attrs, int64_t opset = 13) { return run_checked(op_node(op, 1, attrs), {&x}, opset)[0]; };
  EXPECT_EQ(arg("ArgMax", {{"axis", int64_t{1}}}), tensor<int64_t>({2, 1}, {1, 0}));
  EXPECT_EQ(arg("ArgMax", {{"axis", int64_t{1}}, {"select_last_index", int64_t{1}}}), tensor<int64_t>({2, 1}, {2, 3}));
  EXPECT_EQ(arg("ArgMin", {{"axis", int64_t{-1}}, {"keepdims", int64_t{0}}}), tensor<int64_t>({2}, {3, 2}));
  EXPECT_EQ(arg("ArgMax", {}), tensor<int64_t>({1, 4}, {1, 0, 0, 1}));
  EXPECT_EQ(arg("ArgMin", {{"select_last_index", int64_t{1}}}), tensor<int64_t>({1, 4}, {0, 1, 1, 0}));
  // select_last_index only exists from opset 12.
  EXPECT_EQ(arg("ArgMax", {{"axis", int64_t{1}}, {"select_last_index", int64_t{1}}}, 11), tensor<int64_t>({2, 1}, {1, 0}));
  Rng rng(65);
  const Tensor xi = random_ints<int8_t>({3, 5}, rng, -128, 127);
  const Tensor yi = run_checked(op_node("ArgMax", 1, {{"axis", int64_t{1}}, {"keepdims", int64_t{0}}}), {&xi})[0];
  for (int64_t r = 0; r < 3; ++r) {
    int64_t best = 0;
    for (int64_t c = 1; c < 5; ++c)
      if (xi.int_at(r * 5 + c) > xi.int_at(r * 5 + best)) best = c;
    EXPECT_EQ(yi.int_at(r), best);
  }
  EXPECT_TRUE(fails_with([&] { arg("ArgMax", {{"axis", int64_t{2}}}); }, "axis 2 is out of range"));
}

}  // namespace
}  // namespace npuforge::model::testing
