#include "compiler/qgraph_io.h"

#include <bit>
#include <cstring>

#include <fmt/core.h>

#include "model/load.h"
#include "util/error.h"
#include "util/file_io.h"

namespace npuforge::compiler {
namespace {

constexpr char kMagic[8] = {'N', 'P', 'F', 'Q', 'G', 'R', 'F', '2'};

class Writer {
 public:
  std::vector<uint8_t> out;
  void u64(uint64_t v) {
    for (int i = 0; i < 8; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
  }
  void i64(int64_t v) { u64(static_cast<uint64_t>(v)); }
  void u8(uint8_t v) { out.push_back(v); }
  void f32(float v) { u64(std::bit_cast<uint32_t>(v)); }
  void str(const std::string& s) {
    u64(s.size());
    out.insert(out.end(), s.begin(), s.end());
  }
  void id(TensorId t) { u64(t.value); }
  void strs(const std::vector<std::string>& v) {
    u64(v.size());
    for (const auto& s : v) str(s);
  }
  void ids(const std::vector<TensorId>& v) {
    u64(v.size());
    for (TensorId t : v) id(t);
  }
  template <typename T, typename F>
  void list(const std::vector<T>& v, F&& each) {
    u64(v.size());
    for (const T& x : v) each(x);
  }
  void window(const Window& w) {
    for (int64_t v : {w.kernel_h, w.kernel_w, w.stride_h, w.stride_w, w.dilation_h, w.dilation_w, w.pad_top, w.pad_left,
                      w.pad_bottom, w.pad_right})
      i64(v);
  }
  void requant(const isa::RequantParams& r) {
    u64(r.scale);
    u64(r.shift);
    u8(r.relu);
  }
  void weights(const std::vector<int8_t>& w, const std::vector<int32_t>& bias, const std::vector<float>& scales,
               const std::vector<isa::RequantParams>& rq) {
    list(w, [&](int8_t v) { u8(static_cast<uint8_t>(v)); });
    list(bias, [&](int32_t v) { i64(v); });
    list(scales, [&](float v) { f32(v); });
    list(rq, [&](const isa::RequantParams& r) { requant(r); });
  }
};

class Reader {
 public:
  Reader(const std::vector<uint8_t>& b, std::string source) : b_(b), source_(std::move(source)) {}
  [[noreturn]] void fail(const std::string& what) const {
    throw Error(fmt::format("{}: {} (at byte {})", source_, what, at_));
  }
  void need(uint64_t n) const {
    if (n > b_.size() - at_) fail("truncated QGraph file");
  }
  uint64_t u64() {
    need(8);
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v |= uint64_t{b_[at_ + i]} << (8 * i);
    at_ += 8;
    return v;
  }
  int64_t i64() { return static_cast<int64_t>(u64()); }
  uint8_t u8() {
    need(1);
    return b_[at_++];
  }
  float f32() {
    const uint64_t v = u64();
    if (v > UINT32_MAX) fail("bad float");
    return std::bit_cast<float>(static_cast<uint32_t>(v));
  }
  uint64_t count(uint64_t unit = 1) {
    const uint64_t n = u64();
    if (n > (b_.size() - at_) / unit) fail(fmt::format("truncated QGraph file: a list of {} entries does not fit", n));
    return n;
  }
  std::string str() {
    const uint64_t n = count();
    std::string s(reinterpret_cast<const char*>(b_.data() + at_), n);
    at_ += n;
    return s;
  }
  TensorId id() {
    const uint64_t v = u64();
    if (v >= tensors) fail(fmt::format("tensor id {} out of range ({} tensors)", v, tensors));
    return TensorId{static_cast<uint32_t>(v)};
  }
  std::vector<std::string> strs() {
    std::vector<std::string> v(count(8));
    for (auto& s : v) s = str();
    return v;
  }
  std::vector<TensorId> ids() {
    std::vector<TensorId> v(count(8));
    for (auto& t : v) t = id();
    return v;
  }
  Window window() {
    Window w;
    for (int64_t* v : {&w.kernel_h, &w.kernel_w, &w.stride_h, &w.stride_w, &w.dilation_h, &w.dilation_w, &w.pad_top,
                       &w.pad_left, &w.pad_bottom, &w.pad_right})
      *v = i64();
    return w;
  }
  isa::RequantParams requant() {
    isa::RequantParams r;
    const uint64_t scale = u64(), shift = u64();
    if (scale > UINT32_MAX || shift > 63) fail("requant field out of range");
    r.scale = static_cast<uint32_t>(scale);
    r.shift = static_cast<uint32_t>(shift);
    r.relu = u8() != 0;
    return r;
  }
  template <typename Op>
  void weights(Op& op) {
    op.weights.resize(count());
    for (auto& v : op.weights) v = static_cast<int8_t>(u8());
    op.bias.resize(count(8));
    for (auto& v : op.bias) v = static_cast<int32_t>(i64());
    op.weight_scales.resize(count(8));
    for (auto& v : op.weight_scales) v = f32();
    op.requant.resize(count(17));
    for (auto& r : op.requant) r = requant();
  }
  bool done() const { return at_ == b_.size(); }
  uint64_t tensors = 0;

 private:
  const std::vector<uint8_t>& b_;
  std::string source_;
  uint64_t at_ = 0;
};

// One writer/reader per QOp kind, in the variant's order (the tag is the variant index).
void put(Writer& w, const ConvOp& o) {
  w.id(o.input), w.id(o.output), w.window(o.window), w.i64(o.groups), w.i64(o.cin_per_group), w.i64(o.cout);
  w.weights(o.weights, o.bias, o.weight_scales, o.requant);
  w.u8(o.relu);
}
void put(Writer& w, const GemmOp& o) {
  w.id(o.input), w.id(o.output), w.i64(o.k), w.i64(o.n);
  w.weights(o.weights, o.bias, o.weight_scales, o.requant);
  w.u8(o.relu);
}
void put(Writer& w, const EltwiseOp& o) {
  w.u8(static_cast<uint8_t>(o.kind)), w.id(o.a), w.id(o.b), w.id(o.output), w.requant(o.requant), w.u8(o.broadcast_b);
}
void put(Writer& w, const ClampOp& o) {
  w.id(o.input), w.id(o.output), w.u8(static_cast<uint8_t>(o.lo)), w.u8(static_cast<uint8_t>(o.hi));
}
void put(Writer& w, const LutOp& o) {
  w.str(o.function), w.id(o.input), w.id(o.output);
  for (int8_t v : o.table) w.u8(static_cast<uint8_t>(v));
  w.list(o.channel_tables, [&](const LutOp::ChannelTable& t) {
    w.i64(t.c0), w.i64(t.c1);
    for (int8_t v : t.table) w.u8(static_cast<uint8_t>(v));
  });
}
void put(Writer& w, const PoolOp& o) {
  w.u8(static_cast<uint8_t>(o.kind)), w.id(o.input), w.id(o.output), w.window(o.window), w.u8(o.count_pad);
}
void put(Writer& w, const ConcatOp& o) { w.ids(o.inputs), w.id(o.output), w.i64(o.axis); }
void put(Writer& w, const AliasOp& o) { w.id(o.input), w.id(o.output); }
void put(Writer& w, const CpuStepOp& o) { w.ids(o.inputs), w.ids(o.outputs); }

QOp get_op(Reader& r, uint8_t tag, const std::filesystem::path& dir) {
  const std::vector<std::string> nodes = r.strs();
  switch (tag) {
    case 0: {
      ConvOp o;
      o.input = r.id(), o.output = r.id(), o.window = r.window();
      o.groups = r.i64(), o.cin_per_group = r.i64(), o.cout = r.i64();
      r.weights(o);
      o.relu = r.u8() != 0;
      o.nodes = nodes;
      return o;
    }
    case 1: {
      GemmOp o;
      o.input = r.id(), o.output = r.id(), o.k = r.i64(), o.n = r.i64();
      r.weights(o);
      o.relu = r.u8() != 0;
      o.nodes = nodes;
      return o;
    }
    case 2: {
      EltwiseOp o;
      const uint8_t kind = r.u8();
      if (kind > 1) r.fail("bad eltwise kind");
      o.kind = static_cast<EltwiseOp::Kind>(kind);
      o.a = r.id(), o.b = r.id(), o.output = r.id(), o.requant = r.requant();
      o.broadcast_b = r.u8() != 0;
      o.nodes = nodes;
      return o;
    }
    case 3: {
      ClampOp o;
      o.input = r.id(), o.output = r.id();
      o.lo = static_cast<int8_t>(r.u8()), o.hi = static_cast<int8_t>(r.u8());
      o.nodes = nodes;
      return o;
    }
    case 4: {
      LutOp o;
      o.function = r.str(), o.input = r.id(), o.output = r.id();
      for (int8_t& v : o.table) v = static_cast<int8_t>(r.u8());
      o.channel_tables.resize(r.count(8 + 8 + 256));
      for (LutOp::ChannelTable& t : o.channel_tables) {
        t.c0 = r.i64(), t.c1 = r.i64();
        for (int8_t& v : t.table) v = static_cast<int8_t>(r.u8());
      }
      o.nodes = nodes;
      return o;
    }
    case 5: {
      PoolOp o;
      const uint8_t kind = r.u8();
      if (kind > 1) r.fail("bad pool kind");
      o.kind = static_cast<PoolOp::Kind>(kind);
      o.input = r.id(), o.output = r.id(), o.window = r.window(), o.count_pad = r.u8() != 0;
      o.nodes = nodes;
      return o;
    }
    case 6: {
      ConcatOp o;
      o.inputs = r.ids(), o.output = r.id(), o.axis = r.i64();
      o.nodes = nodes;
      return o;
    }
    case 7: {
      AliasOp o;
      o.input = r.id(), o.output = r.id();
      o.nodes = nodes;
      return o;
    }
    case 8: {
      CpuStepOp o;
      o.inputs = r.ids(), o.outputs = r.ids();
      const std::string file = r.str();
      o.graph = model::load_model(dir / file);
      if (o.graph.inputs.size() != o.inputs.size() || o.graph.outputs.size() != o.outputs.size())
        r.fail(fmt::format("CPU step graph {} has {} inputs and {} outputs, the QGraph {} and {}", file,
                           o.graph.inputs.size(), o.graph.outputs.size(), o.inputs.size(), o.outputs.size()));
      o.nodes = nodes;
      return o;
    }
    default:
      r.fail(fmt::format("unknown op tag {}", tag));
  }
}

}  // namespace

std::vector<uint8_t> encode_qgraph(const QGraph& g, const std::function<std::string(size_t)>& cpu_graph_file) {
  Writer w;
  w.out.assign(kMagic, kMagic + 8);
  w.str(g.source);
  w.list(g.tensors, [&](const QTensor& t) {
    w.str(t.name);
    w.list(t.shape, [&](int64_t d) { w.i64(d); });
    w.u8(static_cast<uint8_t>(t.layout));
    w.u8(static_cast<uint8_t>(t.dtype));
    w.f32(t.scale);
    w.list(t.channel_scales, [&](float v) { w.f32(v); });
  });
  w.u64(g.ops.size());
  for (size_t i = 0; i < g.ops.size(); ++i) {
    const QOp& op = g.ops[i];
    w.u8(static_cast<uint8_t>(op.index()));
    w.strs(op_nodes(op));
    std::visit([&](const auto& o) { put(w, o); }, op);
    if (std::holds_alternative<CpuStepOp>(op)) w.str(cpu_graph_file(i));
  }
  for (const auto* ios : {&g.inputs, &g.outputs})
    w.list(*ios, [&](const GraphIO& io) {
      w.str(io.name);
      w.id(io.tensor);
    });
  w.list(g.segments, [&](const Segment& s) {
    w.u8(static_cast<uint8_t>(s.target));
    w.u64(s.first), w.u64(s.end);
    w.ids(s.inputs), w.ids(s.outputs);
  });
  return std::move(w.out);
}

void write_qgraph(const std::filesystem::path& path, const QGraph& g,
                  const std::function<std::string(size_t)>& cpu_graph_file) {
  util::write_file(path, encode_qgraph(g, cpu_graph_file), "QGraph");
}

QGraph decode_qgraph(const std::vector<uint8_t>& bytes, const std::filesystem::path& source) {
  Reader r(bytes, source.string());
  if (bytes.size() < 8 || std::memcmp(bytes.data(), kMagic, 8) != 0)
    throw Error(fmt::format("{}: not a QGraph file (expected the magic NPFQGRF2)", source.string()));
  for (int i = 0; i < 8; ++i) r.u8();
  QGraph g;
  g.source = r.str();
  g.tensors.resize(r.count(8));
  r.tensors = g.tensors.size();
  for (QTensor& t : g.tensors) {
    t.name = r.str();
    t.shape.resize(r.count(8));
    for (int64_t& d : t.shape) d = r.i64();
    const uint8_t layout = r.u8(), dtype = r.u8();
    if (layout > static_cast<uint8_t>(Layout::kOnnx)) r.fail(fmt::format("tensor '{}': bad layout {}", t.name, layout));
    t.layout = static_cast<Layout>(layout);
    if (dtype > static_cast<uint8_t>(model::DType::kBool)) r.fail(fmt::format("tensor '{}': bad dtype {}", t.name, dtype));
    t.dtype = static_cast<model::DType>(dtype);
    t.scale = r.f32();
    t.channel_scales.resize(r.count(8));
    for (float& v : t.channel_scales) v = r.f32();
  }
  g.ops.resize(r.count(9));
  const std::filesystem::path dir = source.parent_path();
  for (QOp& op : g.ops) {
    const uint8_t tag = r.u8();
    op = get_op(r, tag, dir);
  }
  for (auto* ios : {&g.inputs, &g.outputs}) {
    ios->resize(r.count(16));
    for (GraphIO& io : *ios) io.name = r.str(), io.tensor = r.id();
  }
  g.segments.resize(r.count(18));
  for (Segment& s : g.segments) {
    const uint8_t target = r.u8();
    if (target > 1) r.fail("bad segment target");
    s.target = static_cast<Target>(target);
    s.first = static_cast<uint32_t>(r.u64()), s.end = static_cast<uint32_t>(r.u64());
    s.inputs = r.ids(), s.outputs = r.ids();
  }
  if (!r.done()) r.fail("trailing bytes after the QGraph");
  validate(g);
  return g;
}

QGraph read_qgraph(const std::filesystem::path& path) {
  const std::string text = util::read_file(path, "QGraph");
  return decode_qgraph(std::vector<uint8_t>(text.begin(), text.end()), path);
}

}  // namespace npuforge::compiler
