// .npy reading and writing: round trips for every dtype, NumPy's own bytes, bad files.
#include <gtest/gtest.h>

#include "model/npy.h"
#include "onnx_builder.h"
#include "util/error.h"

namespace npuforge::model {
namespace {

#define EXPECT_CONTAINS(text, part) EXPECT_NE(std::string(text).find(part), std::string::npos) << (text)

std::span<const uint8_t> span_of(const std::string& s) { return {reinterpret_cast<const uint8_t*>(s.data()), s.size()}; }

std::string npy_error(const std::string& bytes) {
  try {
    parse_npy(span_of(bytes), "x.npy");
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

// A header of NumPy's format version `major`, padded like NumPy pads it.
std::string npy_bytes(int major, const std::string& dict, const std::string& data) {
  const size_t prefix = major == 1 ? 10 : 12;
  std::string header = dict;
  while ((prefix + header.size() + 1) % 64) header += ' ';
  header += '\n';
  std::string out = "\x93NUMPY";
  out += static_cast<char>(major);
  out += '\0';
  const size_t n = header.size();
  out += static_cast<char>(n & 0xff);
  out += static_cast<char>((n >> 8) & 0xff);
  if (major != 1) {
    out += static_cast<char>((n >> 16) & 0xff);
    out += static_cast<char>((n >> 24) & 0xff);
  }
  return out + header + data;
}

TEST(Npy, RoundTripEveryDtype) {
  const float f[] = {1.5f, -2.0f, 0.0f, 3.25f, 1e-30f, -7.0f};
  const uint8_t u[] = {0, 255, 7};
  const int8_t i8[] = {-128, 127, 0, 1};
  const int32_t i32[] = {INT32_MIN, INT32_MAX};
  const int64_t i64[] = {INT64_MIN, 5, INT64_MAX};
  const bool b[] = {true, false, true};
  for (const Tensor& t : {Tensor::from<float>({2, 3}, f), Tensor::from<uint8_t>({3}, u),
                          Tensor::from<int8_t>({2, 1, 2}, i8), Tensor::from<int32_t>({2}, i32),
                          Tensor::from<int64_t>({3}, i64), Tensor::from<bool>({3}, b),
                          Tensor::scalar<float>(4.0f), Tensor(DType::kFloat32, {0, 3})}) {
    const std::vector<uint8_t> bytes = encode_npy(t);
    EXPECT_EQ(bytes.size() % 64, t.byte_size() % 64);  // header padded to 64 bytes
    EXPECT_EQ(parse_npy(bytes, "t.npy"), t) << shape_str(t.shape()) << " " << dtype_name(t.dtype());
  }
  const auto path = testing::temp_dir() / "rt.npy";
  write_npy(path, Tensor::from<float>({2, 3}, f));
  EXPECT_EQ(read_npy(path), Tensor::from<float>({2, 3}, f));
}

TEST(Npy, GoldenHeaderAsNumPyWritesIt) {
  // numpy.save of np.arange(3, dtype=np.int32).reshape(1, 3): this exact 128-byte preamble
  // (header length 118 = 'v'), the data at offset 128.
  const std::vector<uint8_t> bytes = encode_npy(Tensor::from<int32_t>({1, 3}, std::vector<int32_t>{0, 1, 2}));
  ASSERT_EQ(bytes.size(), 128u + 12u);
  EXPECT_EQ(std::string(bytes.begin(), bytes.begin() + 10), std::string("\x93NUMPY\x01\x00v\x00", 10));
  const std::string header(bytes.begin() + 10, bytes.begin() + 128);
  EXPECT_EQ(header, "{'descr': '<i4', 'fortran_order': False, 'shape': (1, 3), }" + std::string(58, ' ') + "\n");
  EXPECT_EQ(bytes[128 + 4], 1);
  const std::vector<uint8_t> rank1 = encode_npy(Tensor::from<float>({5}, std::vector<float>(5, 0.0f)));
  EXPECT_NE(std::string(rank1.begin(), rank1.begin() + 128).find("'shape': (5,), }"), std::string::npos);
  const std::vector<uint8_t> scalar = encode_npy(Tensor::scalar<int64_t>(1));
  EXPECT_NE(std::string(scalar.begin(), scalar.begin() + 128).find("'shape': (), }"), std::string::npos);
}

TEST(Npy, ReadsVersionsTwoAndThree) {
  const std::string data("\x01\x00\x00\x00\x02\x00\x00\x00", 8);
  for (int major : {1, 2, 3}) {
    const Tensor t = parse_npy(span_of(npy_bytes(major, "{'descr': '<i4', 'fortran_order': False, 'shape': (2,), }", data)), "v.npy");
    EXPECT_EQ(t, Tensor::from<int32_t>({2}, std::vector<int32_t>{1, 2})) << major;
  }
  // Key order and spacing may vary; '|u1' and '<u1' are the same type.
  const Tensor u = parse_npy(span_of(npy_bytes(1, "{'shape':(2,1),'fortran_order':False,'descr':'<u1'}", "\x05\x06")), "u.npy");
  EXPECT_EQ(u, Tensor::from<uint8_t>({2, 1}, std::vector<uint8_t>{5, 6}));
}

TEST(Npy, BadFilesAreClearErrors) {
  const std::string ok_header = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }";
  EXPECT_CONTAINS(npy_error("hello"), "x.npy: not a .npy file");
  EXPECT_CONTAINS(npy_error(""), "x.npy: not a .npy file");
  EXPECT_CONTAINS(npy_error(npy_bytes(1, ok_header, std::string(7, '\0'))), "x.npy: truncated .npy file");
  EXPECT_CONTAINS(npy_error(npy_bytes(1, ok_header, std::string(9, '\0'))), "x.npy: 1 bytes after the data");
  EXPECT_CONTAINS(npy_error(npy_bytes(1, ok_header, std::string(8, '\0')).substr(0, 30)), "x.npy: truncated .npy file");
  EXPECT_CONTAINS(npy_error(npy_bytes(1, "{'descr': '<f4', 'fortran_order': True, 'shape': (2,), }", std::string(8, '\0'))),
                  "x.npy: .npy arrays in Fortran order are not supported");
  EXPECT_CONTAINS(npy_error(npy_bytes(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (1,), }", std::string(8, '\0'))),
                  "x.npy: .npy dtype '<f8' is not supported");
  EXPECT_CONTAINS(npy_error(npy_bytes(1, "{'descr': '>i4', 'fortran_order': False, 'shape': (1,), }", std::string(4, '\0'))),
                  "big-endian");
  EXPECT_CONTAINS(npy_error(npy_bytes(1, "{'descr': '<f4', 'shape': (1,), }", std::string(4, '\0'))),
                  "x.npy: bad .npy header: header has no 'fortran_order'");
  EXPECT_CONTAINS(npy_error(npy_bytes(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1, -2), }", "")),
                  "x.npy: bad .npy header: expected a non-negative integer dimension");
  EXPECT_CONTAINS(npy_error(npy_bytes(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1 2), }", "")),
                  "expected ',' or ')' in the shape");
  EXPECT_CONTAINS(npy_error(npy_bytes(1, "{'descr': '|b1', 'fortran_order': False, 'shape': (1,), }", "\x02")),
                  "bool array holds a byte other than 0 or 1");
  EXPECT_CONTAINS(npy_error(npy_bytes(4, ok_header, std::string(8, '\0'))), "format version 4.0 is not supported");
  EXPECT_CONTAINS(npy_error(npy_bytes(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (100000000000, 100000000000), }", "")),
                  "x.npy: ");
  try {
    read_npy(testing::temp_dir() / "missing.npy");
    FAIL();
  } catch (const Error& e) {
    EXPECT_CONTAINS(e.what(), "missing.npy: cannot open .npy file");
  }
}

}  // namespace
}  // namespace npuforge::model
