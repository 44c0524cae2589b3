// The ONNX importer on models built with protobuf in the test: weights, Constant forms,
// TensorProto encodings, Identity/Dropout removal, and every malformed-input error.
#include <gtest/gtest.h>

#include "model/infer.h"
#include "model/onnx_import.h"
#include "onnx_builder.h"
#include "test_ops.h"
#include "util/error.h"
#include "util/rng.h"

namespace npuforge::model {
namespace {

using testing::floats;
using testing::int64s;
using testing::OnnxBuilder;

Graph import(const OnnxBuilder& b, const std::string& source = "m.onnx") {
  const std::string bytes = b.bytes();
  return import_onnx_bytes({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()}, source);
}

std::string import_error(const OnnxBuilder& b) {
  try {
    import(b);
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

#define EXPECT_CONTAINS(text, part) EXPECT_NE(std::string(text).find(part), std::string::npos) << (text)

TEST(OnnxImport, InitializersInputsOutputsAndSymbolicDims) {
  OnnxBuilder b;
  b.input("x", DType::kFloat32, {-1, 3}).input("w", DType::kFloat32, {3});  // w: also an initializer (IR < 4 style)
  b.initializer("w", floats({3}, {1, 2, 3}));
  b.node("Add", {"x", "w"}, {"y"}, "add");
  b.output("y", DType::kFloat32, {-1, 3});
  const Graph g = import(b);
  EXPECT_EQ(g.opset, 13);
  EXPECT_EQ(g.inputs, std::vector<std::string>{"x"});
  EXPECT_EQ(g.outputs, std::vector<std::string>{"y"});
  ASSERT_TRUE(g.is_constant("w"));
  EXPECT_EQ(g.find_constant("w")->values<float>()[2], 3.0f);
  const ValueInfo& x = *g.find_value("x");
  EXPECT_TRUE(x.has_shape);
  EXPECT_EQ(x.shape, (Shape{kUnknownDim, 3}));
  EXPECT_EQ(x.dim_names[0], "N");
  EXPECT_FALSE(x.shape_known());
  ASSERT_EQ(g.nodes.size(), 1u);
  EXPECT_EQ(g.nodes[0].name, "add");
}

TEST(OnnxImport, ConstantNodeFormsBecomeConstants) {
  OnnxBuilder b;
  b.input("x", DType::kFloat32, {2});
  auto& c1 = b.node("Constant", {}, {"c_tensor"});
  OnnxBuilder::attr_tensor(c1, "value", floats({2}, {0.5f, -1}));
  auto& c2 = b.node("Constant", {}, {"c_float"});
  auto* a = c2.add_attribute();
  a->set_name("value_float");
  a->set_type(onnx::AttributeProto_AttributeType_FLOAT);
  a->set_f(2.5f);
  auto& c3 = b.node("Constant", {}, {"c_floats"});
  a = c3.add_attribute();
  a->set_name("value_floats");
  a->set_type(onnx::AttributeProto_AttributeType_FLOATS);
  a->add_floats(1);
  a->add_floats(2);
  auto& c4 = b.node("Constant", {}, {"c_int"});
  OnnxBuilder::attr_int(c4, "value_int", 7);
  auto& c5 = b.node("Constant", {}, {"c_ints"});
  a = c5.add_attribute();
  a->set_name("value_ints");
  a->set_type(onnx::AttributeProto_AttributeType_INTS);
  a->add_ints(4);
  a->add_ints(-5);
  for (const char* c : {"c_tensor", "c_float", "c_floats", "c_int", "c_ints"}) b.output(c, DType::kFloat32);
  const Graph g = import(b);
  EXPECT_TRUE(g.nodes.empty());
  EXPECT_EQ(*g.find_constant("c_tensor"), floats({2}, {0.5f, -1}));
  EXPECT_EQ(*g.find_constant("c_float"), Tensor::scalar<float>(2.5f));
  EXPECT_EQ(*g.find_constant("c_floats"), floats({2}, {1, 2}));
  EXPECT_EQ(*g.find_constant("c_int"), Tensor::scalar<int64_t>(7));
  EXPECT_EQ(*g.find_constant("c_ints"), int64s({2}, {4, -5}));

  OnnxBuilder s;
  s.input("x", DType::kFloat32, {2});
  auto& cs = s.node("Constant", {}, {"c"}, "strings");
  a = cs.add_attribute();
  a->set_name("value_string");
  a->set_type(onnx::AttributeProto_AttributeType_STRING);
  a->set_s("hello");
  s.output("c", DType::kFloat32);
  EXPECT_CONTAINS(import_error(s), "m.onnx: node 'strings' (Constant): a Constant with attribute 'value_string' is not supported");
}

TEST(OnnxImport, TensorProtoTypedFieldsAndRawData) {
  onnx::TensorProto p;
  p.set_data_type(onnx::TensorProto_DataType_INT8);
  p.add_dims(3);
  for (int v : {-128, 0, 127}) p.add_int32_data(v);
  std::string bytes = p.SerializeAsString();
  const auto span = [](const std::string& s) { return std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(s.data()), s.size()); };
  Tensor t = parse_tensor_pb(span(bytes), "t.pb");
  EXPECT_EQ(t, Tensor::from<int8_t>({3}, std::vector<int8_t>{-128, 0, 127}));

  p.Clear();
  p.set_data_type(onnx::TensorProto_DataType_BOOL);
  p.add_dims(2);
  p.add_int32_data(1);
  p.add_int32_data(0);
  bytes = p.SerializeAsString();
  const bool expected_bools[] = {true, false};
  EXPECT_EQ(parse_tensor_pb(span(bytes), "t.pb"), Tensor::from<bool>({2}, expected_bools));
  const Tensor bools = parse_tensor_pb(span(bytes), "t.pb");
  EXPECT_EQ(bools.dtype(), DType::kBool);
  EXPECT_EQ(bools.int_at(0), 1);
  EXPECT_EQ(bools.int_at(1), 0);

  p.Clear();
  p.set_data_type(onnx::TensorProto_DataType_INT64);
  p.add_dims(2);
  p.add_int64_data(int64_t{1} << 40);
  p.add_int64_data(-3);
  bytes = p.SerializeAsString();
  EXPECT_EQ(parse_tensor_pb(span(bytes), "t.pb"), int64s({2}, {int64_t{1} << 40, -3}));

  p.Clear();
  p.set_name("w");
  p.set_data_type(onnx::TensorProto_DataType_FLOAT);
  p.add_dims(2);
  p.add_float_data(1.5f);
  bytes = p.SerializeAsString();
  try {
    parse_tensor_pb(span(bytes), "t.pb");
    FAIL();
  } catch (const Error& e) {
    EXPECT_CONTAINS(e.what(), "t.pb: tensor 'w': float_data holds 1 values, the shape 2 needs 2");
  }

  // raw_data, little-endian int32.
  p.Clear();
  p.set_data_type(onnx::TensorProto_DataType_INT32);
  p.add_dims(1);
  p.set_raw_data(std::string("\x01\x02\x00\x80", 4));
  bytes = p.SerializeAsString();
  EXPECT_EQ(parse_tensor_pb(span(bytes), "t.pb").values<int32_t>()[0], static_cast<int32_t>(0x80000201u));
  p.set_raw_data(std::string("\x01\x02\x00", 3));
  bytes = p.SerializeAsString();
  EXPECT_THROW(parse_tensor_pb(span(bytes), "t.pb"), Error);

  p.Clear();
  p.set_name("d");
  p.set_data_type(onnx::TensorProto_DataType_DOUBLE);
  p.add_dims(1);
  p.add_double_data(1.0);
  bytes = p.SerializeAsString();
  try {
    parse_tensor_pb(span(bytes), "t.pb");
    FAIL();
  } catch (const Error& e) {
    EXPECT_CONTAINS(e.what(), "t.pb: tensor 'd': element type DOUBLE is not supported");
  }

  const std::string junk = "\xff\xff\xff\xff";
  EXPECT_THROW(parse_tensor_pb(span(junk), "junk.pb"), Error);
}

TEST(OnnxImport, ExternalDataIsAClearError) {
  OnnxBuilder b;
  b.input("x", DType::kFloat32, {2});
  onnx::TensorProto w;
  w.set_name("w");
  w.set_data_type(onnx::TensorProto_DataType_FLOAT);
  w.add_dims(2);
  w.set_data_location(onnx::TensorProto_DataLocation_EXTERNAL);
  auto* e = w.add_external_data();
  e->set_key("location");
  e->set_value("weights.bin");
  *b.graph().add_initializer() = w;
  b.node("Add", {"x", "w"}, {"y"});
  b.output("y", DType::kFloat32, {2});
  EXPECT_CONTAINS(import_error(b), "m.onnx: initializer 'w': tensor data stored in an external file is not supported");
}

TEST(OnnxImport, IdentityRemovalKeepsOutputNames) {
  // x -> Relu -> r -> Identity -> y (graph output); weights aliased through Identity.
  OnnxBuilder b;
  b.input("x", DType::kFloat32, {2});
  b.initializer("w0", floats({2}, {1, 1}));
  b.node("Identity", {"w0"}, {"w"}, "alias");
  b.node("Add", {"x", "w"}, {"s"}, "add");
  b.node("Relu", {"s"}, {"r"}, "relu");
  b.node("Identity", {"r"}, {"y"}, "out");
  b.node("Identity", {"x"}, {"x_copy"}, "passthrough");  // input straight to an output: kept
  b.output("y", DType::kFloat32, {2});
  b.output("x_copy", DType::kFloat32, {2});
  const Graph g = import(b);
  ASSERT_EQ(g.nodes.size(), 3u);
  EXPECT_EQ(g.nodes[0].op_type, "Add");
  EXPECT_EQ(g.nodes[0].inputs, (std::vector<std::string>{"x", "w0"}));
  EXPECT_EQ(g.nodes[1].op_type, "Relu");
  EXPECT_EQ(g.nodes[1].outputs, std::vector<std::string>{"y"});
  EXPECT_EQ(g.nodes[2].op_type, "Identity");
  EXPECT_EQ(g.outputs, (std::vector<std::string>{"y", "x_copy"}));
}

TEST(OnnxImport, DropoutRemovedUnlessTrainingOrMaskUsed) {
  OnnxBuilder b(13);
  b.input("x", DType::kFloat32, {2});
  b.node("Dropout", {"x"}, {"d", "mask"}, "drop");
  b.node("Relu", {"d"}, {"y"});
  b.output("y", DType::kFloat32, {2});
  Graph g = import(b);
  ASSERT_EQ(g.nodes.size(), 1u);
  EXPECT_EQ(g.nodes[0].inputs, std::vector<std::string>{"x"});

  b.output("mask", DType::kBool, {2});
  EXPECT_CONTAINS(import_error(b), "m.onnx: node 'drop' (Dropout): the mask output is used");

  OnnxBuilder t(13);
  t.input("x", DType::kFloat32, {2});
  t.initializer("ratio", Tensor::scalar<float>(0.5f));
  t.initializer("training", Tensor::scalar<bool>(true));
  t.node("Dropout", {"x", "ratio", "training"}, {"y"}, "drop");
  t.output("y", DType::kFloat32, {2});
  EXPECT_CONTAINS(import_error(t), "node 'drop' (Dropout): training_mode is true");
}

TEST(OnnxImport, SubgraphsAreAClearErrorNamingTheNode) {
  OnnxBuilder b;
  b.input("c", DType::kBool, {});
  auto& n = b.node("If", {"c"}, {"y"}, "branch");
  auto* a = n.add_attribute();
  a->set_name("then_branch");
  a->set_type(onnx::AttributeProto_AttributeType_GRAPH);
  a->mutable_g()->set_name("then");
  b.output("y", DType::kFloat32);
  EXPECT_CONTAINS(import_error(b), "m.onnx: node 'branch' (If): attribute 'then_branch' holds a subgraph");
}

TEST(OnnxImport, MissingInitializerAndDanglingOutputAreErrors) {
  OnnxBuilder b;
  b.input("x", DType::kFloat32, {2});
  b.node("Add", {"x", "bias"}, {"y"}, "add");
  b.output("y", DType::kFloat32, {2});
  EXPECT_CONTAINS(import_error(b), "m.onnx: node 'add' (Add): input 'bias' is not a graph input, an initializer");

  OnnxBuilder d;
  d.input("x", DType::kFloat32, {2});
  d.node("Relu", {"x"}, {"r"});
  d.output("nothing", DType::kFloat32, {2});
  EXPECT_CONTAINS(import_error(d), "m.onnx: graph output 'nothing' is not produced by any node");
}

TEST(OnnxImport, UnsupportedTypesOfInputsAreErrors) {
  OnnxBuilder b;
  auto* v = b.graph().add_input();
  v->set_name("x");
  v->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto_DataType_DOUBLE);
  b.node("Relu", {"x"}, {"y"});
  b.output("y", DType::kFloat32);
  EXPECT_CONTAINS(import_error(b), "m.onnx: graph input 'x': element type DOUBLE is not supported");

  OnnxBuilder s;
  v = s.graph().add_input();
  v->set_name("seq");
  v->mutable_type()->mutable_sequence_type();
  s.node("Relu", {"seq"}, {"y"});
  s.output("y", DType::kFloat32);
  EXPECT_CONTAINS(import_error(s), "graph input 'seq': has a sequence type; only dense tensors are supported");
}

TEST(OnnxImport, NodesGetUniqueNamesAndAreSorted) {
  OnnxBuilder b;
  b.input("x", DType::kFloat32, {2});
  b.node("Relu", {"a"}, {"y"});  // reads a value produced later in the file
  b.node("Relu", {"x"}, {"a"});
  b.output("y", DType::kFloat32, {2});
  const Graph g = import(b);
  ASSERT_EQ(g.nodes.size(), 2u);
  EXPECT_EQ(g.nodes[0].outputs[0], "a");
  EXPECT_NE(g.nodes[0].name, g.nodes[1].name);
  EXPECT_EQ(g.nodes[0].name, "Relu_1");
}

TEST(OnnxImport, MalformedFilesAreErrorsNamingTheFile) {
  OnnxBuilder b;
  b.input("x", DType::kFloat32, {1, 64});
  b.initializer("w", Tensor(DType::kFloat32, {1, 64}));
  b.node("Add", {"x", "w"}, {"y"});
  b.output("y", DType::kFloat32, {1, 64});
  const std::string good = b.bytes();
  const auto error_of = [](const std::string& bytes, const std::string& file) {
    try {
      import_onnx_file(testing::write_temp(file, bytes));
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  EXPECT_CONTAINS(error_of("", "empty.onnx"), "empty.onnx: empty file, not an ONNX model");
  // Every truncation of a valid model is an error, never a crash or a partial graph.
  for (size_t len = 1; len < good.size(); len += 7) {
    const std::string msg = error_of(good.substr(0, len), "cut.onnx");
    EXPECT_CONTAINS(msg, "cut.onnx") << " at length " << len;
  }
  Rng rng(11);
  for (int k = 0; k < 50; ++k) {
    std::string junk(1 + rng.below(400), '\0');
    for (char& c : junk) c = static_cast<char>(rng.below(256));
    EXPECT_CONTAINS(error_of(junk, "junk.onnx"), "junk.onnx");
  }
  try {
    import_onnx_file(testing::temp_dir() / "does_not_exist.onnx");
    FAIL();
  } catch (const Error& e) {
    EXPECT_CONTAINS(e.what(), "does_not_exist.onnx: cannot open ONNX model");
  }
}

TEST(OnnxImport, OpsetOutsideSevenToSeventeenIsAnErrorNamingTheOp) {
  for (int64_t opset : {6, 18}) {
    OnnxBuilder b(opset);
    b.input("x", DType::kFloat32, {2});
    b.node("Relu", {"x"}, {"y"}, "act");
    b.output("y", DType::kFloat32, {2});
    Graph g = import(b);
    try {
      infer_shapes(g, testing::test_infer());
      FAIL() << opset;
    } catch (const Error& e) {
      EXPECT_CONTAINS(e.what(), fmt::format("node 'act' (Relu): the model's opset {} of the default ONNX domain is not "
                                            "supported (npuforge reads opsets 7 to 17)", opset));
    }
  }
}

}  // namespace
}  // namespace npuforge::model
