#include "model/npy.h"

#include <cctype>
#include <cstring>
#include <optional>
#include <string>

#include <fmt/core.h>

#include "util/error.h"
#include "util/file_io.h"

namespace npuforge::model {
namespace {

constexpr std::string_view kMagic = "\x93NUMPY";

// The header is a Python dict literal, e.g.
//   {'descr': '<f4', 'fortran_order': False, 'shape': (1, 3, 224, 224), }
// This parser accepts exactly that grammar: string keys, string/bool/tuple values.
class HeaderParser {
 public:
  HeaderParser(std::string_view text, std::string_view source) : text_(text), source_(source) {}

  struct Header {
    std::string descr;
    std::optional<bool> fortran_order;
    std::optional<Shape> shape;
  };

  Header parse() {
    Header h;
    bool have_descr = false;
    expect('{');
    while (true) {
      skip_space();
      if (peek() == '}') break;
      const std::string key = quoted();
      expect(':');
      skip_space();
      if (key == "descr") {
        h.descr = quoted();
        have_descr = true;
      } else if (key == "fortran_order") {
        h.fortran_order = boolean();
      } else if (key == "shape") {
        h.shape = tuple();
      } else {
        fail(fmt::format("unknown header key '{}'", key));
      }
      skip_space();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      skip_space();
      if (peek() != '}') fail("expected ',' or '}' in the header");
    }
    if (!have_descr) fail("header has no 'descr'");
    if (!h.fortran_order) fail("header has no 'fortran_order'");
    if (!h.shape) fail("header has no 'shape'");
    return h;
  }

 private:
  [[noreturn]] void fail(std::string_view what) const {
    throw Error(fmt::format("{}: bad .npy header: {} (header: {})", source_, what, text_));
  }
  char peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  void skip_space() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  void expect(char c) {
    skip_space();
    if (peek() != c) fail(fmt::format("expected '{}'", c));
    ++pos_;
  }
  std::string quoted() {
    skip_space();
    const char q = peek();
    if (q != '\'' && q != '"') fail("expected a quoted string");
    const size_t end = text_.find(q, pos_ + 1);
    if (end == std::string_view::npos) fail("unterminated string");
    std::string s(text_.substr(pos_ + 1, end - pos_ - 1));
    pos_ = end + 1;
    return s;
  }
  bool boolean() {
    if (text_.substr(pos_, 4) == "True") {
      pos_ += 4;
      return true;
    }
    if (text_.substr(pos_, 5) == "False") {
      pos_ += 5;
      return false;
    }
    fail("expected True or False");
  }
  Shape tuple() {
    Shape shape;
    expect('(');
    while (true) {
      skip_space();
      if (peek() == ')') break;
      int64_t v = 0;
      size_t digits = 0;
      while (std::isdigit(static_cast<unsigned char>(peek()))) {
        if (v > (INT64_MAX - 9) / 10) fail("dimension too large");
        v = v * 10 + (text_[pos_++] - '0');
        ++digits;
      }
      if (digits == 0) fail("expected a non-negative integer dimension");
      shape.push_back(v);
      skip_space();
      if (peek() == ',') ++pos_;
      else if (peek() != ')') fail("expected ',' or ')' in the shape");
    }
    ++pos_;
    return shape;
  }

  std::string_view text_;
  std::string_view source_;
  size_t pos_ = 0;
};

// '<f4' and friends. One-byte types carry '|' (or any order mark); wider ones must be
// little-endian ('<', or '=' which NumPy only writes on little-endian hosts for us).
DType dtype_from_descr(const std::string& descr, std::string_view source) {
  const auto bad = [&](std::string_view why) -> Error {
    return Error(fmt::format("{}: .npy dtype '{}' is not supported ({}); expected one of <f4, |u1, |i1, <i4, <i8, |b1",
                             source, descr, why));
  };
  if (descr.size() < 3) throw bad("malformed");
  const char order = descr[0];
  const std::string code = descr.substr(1);
  std::optional<DType> t;
  if (code == "f4") t = DType::kFloat32;
  else if (code == "u1") t = DType::kUInt8;
  else if (code == "i1") t = DType::kInt8;
  else if (code == "i4") t = DType::kInt32;
  else if (code == "i8") t = DType::kInt64;
  else if (code == "b1") t = DType::kBool;
  if (!t) throw bad("element type");
  if (order == '>' && dtype_size(*t) > 1) throw bad("big-endian");
  if (order != '<' && order != '|' && order != '=' && order != '>') throw bad("byte order mark");
  return *t;
}

std::string descr_of(DType t) {
  switch (t) {
    case DType::kFloat32: return "<f4";
    case DType::kUInt8: return "|u1";
    case DType::kInt8: return "|i1";
    case DType::kInt32: return "<i4";
    case DType::kInt64: return "<i8";
    case DType::kBool: return "|b1";
  }
  return "?";
}

}  // namespace

Tensor parse_npy(std::span<const uint8_t> bytes, std::string_view source) {
  const auto too_short = [&](std::string_view what) {
    return Error(fmt::format("{}: truncated .npy file ({} bytes; {})", source, bytes.size(), what));
  };
  if (bytes.size() < kMagic.size() || std::memcmp(bytes.data(), kMagic.data(), kMagic.size()) != 0)
    throw Error(fmt::format("{}: not a .npy file (the magic string \\x93NUMPY is missing)", source));
  if (bytes.size() < 10) throw too_short("no header length");
  const uint8_t major = bytes[6];
  size_t header_len = 0, header_start = 0;
  if (major == 1) {
    header_len = bytes[8] | (size_t{bytes[9]} << 8);
    header_start = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) throw too_short("no header length");
    header_len = bytes[8] | (size_t{bytes[9]} << 8) | (size_t{bytes[10]} << 16) | (size_t{bytes[11]} << 24);
    header_start = 12;
  } else {
    throw Error(fmt::format("{}: .npy format version {}.{} is not supported (1, 2 or 3)", source, major, bytes[7]));
  }
  if (bytes.size() - header_start < header_len) throw too_short("the header is cut off");
  const std::string_view header(reinterpret_cast<const char*>(bytes.data() + header_start), header_len);
  const auto h = HeaderParser(header, source).parse();
  if (*h.fortran_order)
    throw Error(fmt::format("{}: .npy arrays in Fortran order are not supported (save with "
                            "numpy.ascontiguousarray first)", source));
  const DType dtype = dtype_from_descr(h.descr, source);
  Tensor t = [&] {
    try {
      return Tensor(dtype, *h.shape);
    } catch (const Error& e) {
      throw Error(fmt::format("{}: {}", source, e.what()));
    }
  }();
  const size_t body = bytes.size() - header_start - header_len;
  if (body < t.byte_size())
    throw too_short(fmt::format("shape {} of {} needs {} data bytes, {} present", shape_str(t.shape()),
                                dtype_name(dtype), t.byte_size(), body));
  if (body > t.byte_size())
    throw Error(fmt::format("{}: {} bytes after the data of shape {} ({})", source, body - t.byte_size(),
                            shape_str(t.shape()), dtype_name(dtype)));
  if (t.byte_size()) std::memcpy(t.bytes().data(), bytes.data() + header_start + header_len, t.byte_size());
  if (dtype == DType::kBool) {
    for (std::byte& b : t.bytes())
      if (std::to_integer<uint8_t>(b) > 1) throw Error(fmt::format("{}: bool array holds a byte other than 0 or 1", source));
  }
  return t;
}

Tensor read_npy(const std::filesystem::path& path) {
  const std::vector<uint8_t> bytes = util::read_binary_file(path, ".npy file");
  return parse_npy(bytes, path.string());
}

std::vector<uint8_t> encode_npy(const Tensor& tensor) {
  std::string shape;  // "()", "(5,)", "(2, 3)" as Python writes tuples
  for (size_t i = 0; i < tensor.rank(); ++i) shape += fmt::format("{}{}", i ? ", " : "", tensor.shape()[i]);
  if (tensor.rank() == 1) shape += ',';
  std::string header = fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': ({}), }}",
                                   descr_of(tensor.dtype()), shape);
  // Magic (6) + version (2) + length (2) + header + '\n' is padded to a multiple of 64.
  const size_t unpadded = 10 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header += '\n';
  std::vector<uint8_t> out(kMagic.begin(), kMagic.end());
  out.push_back(1);
  out.push_back(0);
  out.push_back(static_cast<uint8_t>(header.size() & 0xff));
  out.push_back(static_cast<uint8_t>(header.size() >> 8));
  out.insert(out.end(), header.begin(), header.end());
  const auto data = tensor.bytes();
  const auto* p = reinterpret_cast<const uint8_t*>(data.data());
  out.insert(out.end(), p, p + data.size());
  return out;
}

void write_npy(const std::filesystem::path& path, const Tensor& tensor) {
  util::write_file(path, encode_npy(tensor), ".npy file");
}

}  // namespace npuforge::model
