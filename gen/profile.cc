#include "util/file_io.h"
#include "gen/profile.h"

#include <algorithm>
#include <fstream>
#include <initializer_list>
#include <limits>
#include <sstream>

#include <fmt/core.h>

#include "util/error.h"
#include "util/yaml_util.h"

namespace npuforge::gen {
namespace {

using util::read_double;
using util::read_int;
using util::reject_unknown_keys;
using util::where;

constexpr std::string_view kOpNames[kNumOpKinds] = {"load", "store", "gemm", "im2col", "eltwise",
                                                    "pool", "move",  "lut",  "nop",    "sync"};
constexpr std::string_view kDirectedNames[kNumDirected] = {"checkerboard", "exact_fit", "merge_both",
                                                           "fill_last_byte", "tiny_buffers", "extremes"};

// Reads the profile's YAML tree; `src` names the file in every error.
class Reader {
 public:
  Reader(Profile& p, std::string_view src, const isa::Isa& isa) : p_(p), src_(src), isa_(isa) {}

  void top(const YAML::Node& root) {
    if (root.IsNull()) return;
    util::reject_unknown_keys(root,
                        {"length", "mix", "sizes", "shapes", "dependencies", "lifetime", "token_density",
                         "allocator", "directed"},
                        src_, "profile");
    if (auto n = root["length"]) p_.length = util::read_int(n, "length", src_, 1, 100'000'000);
    if (auto n = root["mix"]) mix(n);
    if (auto n = root["sizes"]) sizes(n);
    if (auto n = root["shapes"]) shapes(n);
    if (auto n = root["dependencies"]) dependencies(n);
    if (auto n = root["lifetime"]) p_.lifetime = range(n, "lifetime", 1, 100'000'000);
    if (auto n = root["token_density"]) p_.token_density = util::read_double(n, "token_density", src_, 0, 1);
    if (auto n = root["allocator"]) alloc(n);
    if (auto n = root["directed"]) directed(n);
  }

 private:
  // The largest value all of `fields` of instruction `mnemonic` hold: a shape drawn for them
  // must fit each.
  int64_t field_max(std::string_view mnemonic, std::initializer_list<std::string_view> fields) const {
    int64_t most = std::numeric_limits<int64_t>::max();
    for (std::string_view f : fields) most = std::min(most, isa_.max_value(mnemonic, f));
    return most;
  }

  // A [min, max] shape range of `fields`: at least `lo` and at most what they hold.
  Range shape(const YAML::Node& n, std::string_view key, int64_t lo, std::string_view mnemonic,
              std::initializer_list<std::string_view> fields) {
    int64_t hi = 0;
    try {
      hi = field_max(mnemonic, fields);
    } catch (const Error& e) {  // an ISA without the instruction or field
      throw Error(fmt::format("{}: '{}': ISA {}: {}", util::where(src_, n), key, isa_.name(), e.what()));
    }
    return range(n, key, lo, hi);
  }

  // [min, max] as a two-element list, both within [lo, hi] and min <= max.
  Range range(const YAML::Node& n, std::string_view key, int64_t lo, int64_t hi) {
    if (!n.IsSequence() || n.size() != 2)
      throw Error(fmt::format("{}: '{}' must be a list [min, max]", util::where(src_, n), key));
    Range r{util::read_int(n[0], key, src_, lo, hi), util::read_int(n[1], key, src_, lo, hi)};
    if (r.min > r.max)
      throw Error(fmt::format("{}: '{}' = [{}, {}] has min > max", util::where(src_, n), key, r.min, r.max));
    return r;
  }

  void mix(const YAML::Node& n) {
    util::reject_unknown_keys(n, {"load", "store", "gemm", "im2col", "eltwise", "pool", "move", "lut", "nop", "sync"}, src_,
                        "mix");
    for (unsigned i = 0; i < kNumOpKinds; ++i)
      if (auto v = n[std::string(kOpNames[i])]) p_.mix[i] = util::read_double(v, fmt::format("mix.{}", kOpNames[i]), src_, 0, 1e6);
    double total = 0;
    for (double w : p_.mix) total += w;
    if (total <= 0) throw Error(fmt::format("{}: 'mix' weights must not all be zero", util::where(src_, n)));
  }

  void size_dist(const YAML::Node& n, std::string_view kind, SizeDist& d) {
    const std::string w = fmt::format("sizes.{}", kind);
    util::reject_unknown_keys(n, {"min", "max", "dist", "unit", "largest_free", "whole_sram", "odd"}, src_, w);
    // An operand is at most the SRAM the address fields reach.
    const auto sram_space = static_cast<int64_t>(isa_.addressable_bytes(isa::Space::Sram));
    if (auto v = n["min"]) d.bytes.min = util::read_int(v, w + ".min", src_, 1, sram_space);
    if (auto v = n["max"]) d.bytes.max = util::read_int(v, w + ".max", src_, 1, sram_space);
    if (d.bytes.min > d.bytes.max)
      throw Error(fmt::format("{}: '{}' has min {} > max {}", util::where(src_, n), w, d.bytes.min, d.bytes.max));
    if (auto v = n["dist"]) {
      const std::string s = util::read_string(v, w + ".dist", src_);
      if (s != "uniform" && s != "log_uniform")
        throw Error(fmt::format("{}: '{}.dist' = '{}' must be uniform or log_uniform", util::where(src_, v), w, s));
      d.log_uniform = s == "log_uniform";
    }
    if (auto v = n["unit"]) d.unit = util::read_double(v, w + ".unit", src_, 0, 1);
    if (auto v = n["largest_free"]) d.largest_free = util::read_double(v, w + ".largest_free", src_, 0, 1);
    if (auto v = n["whole_sram"]) d.whole_sram = util::read_double(v, w + ".whole_sram", src_, 0, 1);
    if (auto v = n["odd"]) d.odd = util::read_double(v, w + ".odd", src_, 0, 1);
    if (d.unit + d.largest_free + d.whole_sram + d.odd > 1)
      throw Error(fmt::format("{}: '{}' corner bins (unit + largest_free + whole_sram + odd) sum above 1",
                              util::where(src_, n), w));
  }

  void sizes(const YAML::Node& n) {
    util::reject_unknown_keys(n, {"load", "vector"}, src_, "sizes");
    if (auto v = n["load"]) size_dist(v, "load", p_.load_sizes);
    if (auto v = n["vector"]) size_dist(v, "vector", p_.vector_sizes);
  }

  void shapes(const YAML::Node& n) {
    util::reject_unknown_keys(n, {"gemm", "pool", "im2col"}, src_, "shapes");
    if (auto g = n["gemm"]) {
      util::reject_unknown_keys(g, {"m", "n", "k", "bias", "per_channel"}, src_, "shapes.gemm");
      if (auto v = g["m"]) p_.gemm_m = shape(v, "shapes.gemm.m", 1, "gemm", {"m"});
      if (auto v = g["n"]) p_.gemm_n = shape(v, "shapes.gemm.n", 1, "gemm", {"n"});
      if (auto v = g["k"]) p_.gemm_k = shape(v, "shapes.gemm.k", 1, "gemm", {"k"});
      if (auto v = g["bias"]) p_.gemm_bias = util::read_double(v, "shapes.gemm.bias", src_, 0, 1);
      if (auto v = g["per_channel"]) p_.gemm_per_channel = util::read_double(v, "shapes.gemm.per_channel", src_, 0, 1);
    }
    if (auto g = n["pool"]) {
      util::reject_unknown_keys(g, {"h", "w", "c", "window", "stride", "pad", "count_pad"}, src_, "shapes.pool");
      if (auto v = g["h"]) p_.pool_h = shape(v, "shapes.pool.h", 1, "pool", {"h"});
      if (auto v = g["w"]) p_.pool_w = shape(v, "shapes.pool.w", 1, "pool", {"w"});
      if (auto v = g["c"]) p_.pool_c = shape(v, "shapes.pool.c", 1, "pool", {"c"});
      if (auto v = g["window"]) p_.pool_window = shape(v, "shapes.pool.window", 1, "pool", {"window_h", "window_w"});
      if (auto v = g["stride"]) p_.pool_stride = shape(v, "shapes.pool.stride", 1, "pool", {"stride_h", "stride_w"});
      if (auto v = g["pad"])
        p_.pool_pad = shape(v, "shapes.pool.pad", 0, "pool", {"pad_top", "pad_left", "pad_bottom", "pad_right"});
      if (auto v = g["count_pad"]) p_.pool_count_pad = util::read_double(v, "shapes.pool.count_pad", src_, 0, 1);
    }
    if (auto g = n["im2col"]) {
      util::reject_unknown_keys(g, {"h", "w", "c", "kernel", "stride", "pad", "dilation"}, src_, "shapes.im2col");
      if (auto v = g["h"]) p_.im2col_h = shape(v, "shapes.im2col.h", 1, "im2col", {"h"});
      if (auto v = g["w"]) p_.im2col_w = shape(v, "shapes.im2col.w", 1, "im2col", {"w"});
      if (auto v = g["c"]) p_.im2col_c = shape(v, "shapes.im2col.c", 1, "im2col", {"c"});
      if (auto v = g["kernel"]) p_.im2col_kernel = shape(v, "shapes.im2col.kernel", 1, "im2col", {"kh", "kw"});
      if (auto v = g["stride"])
        p_.im2col_stride = shape(v, "shapes.im2col.stride", 1, "im2col", {"stride_h", "stride_w"});
      if (auto v = g["pad"])
        p_.im2col_pad = shape(v, "shapes.im2col.pad", 0, "im2col", {"pad_top", "pad_left", "pad_bottom", "pad_right"});
      if (auto v = g["dilation"])
        p_.im2col_dilation = shape(v, "shapes.im2col.dilation", 1, "im2col", {"dil_h", "dil_w"});
    }
  }

  void dependencies(const YAML::Node& n) {
    util::reject_unknown_keys(n, {"chain_depth", "fan_out", "fan_in"}, src_, "dependencies");
    if (auto v = n["chain_depth"]) p_.chain_depth = util::read_int(v, "dependencies.chain_depth", src_, 0, 1000);
    if (auto v = n["fan_out"]) p_.fan_out = range(v, "dependencies.fan_out", 0, 64);
    if (auto v = n["fan_in"]) p_.fan_in = util::read_double(v, "dependencies.fan_in", src_, 0, 1);
  }

  void alloc(const YAML::Node& n) {
    util::reject_unknown_keys(n, {"fit", "oom"}, src_, "allocator");
    if (auto v = n["fit"]) {
      try {
        p_.fit = allocator::parse_policy(util::read_string(v, "allocator.fit", src_));
      } catch (const Error& e) {
        throw Error(fmt::format("{}: 'allocator.fit': {}", util::where(src_, v), e.what()));
      }
    }
    if (auto v = n["oom"]) {
      const std::string s = util::read_string(v, "allocator.oom", src_);
      if (s == "retire") p_.oom = OomPolicy::Retire;
      else if (s == "compact") p_.oom = OomPolicy::Compact;
      else if (s == "spill") p_.oom = OomPolicy::Spill;
      else
        throw Error(fmt::format("{}: 'allocator.oom' = '{}' must be retire, compact or spill", util::where(src_, v), s));
    }
  }

  void directed(const YAML::Node& n) {
    util::reject_unknown_keys(n, {"rate", "count", "sequences"}, src_, "directed");
    if (auto v = n["rate"]) p_.directed_rate = util::read_double(v, "directed.rate", src_, 0, 1);
    if (auto v = n["count"]) p_.directed_count = range(v, "directed.count", 1, 4096);
    if (auto s = n["sequences"]) {
      util::reject_unknown_keys(s, {"checkerboard", "exact_fit", "merge_both", "fill_last_byte", "tiny_buffers", "extremes"},
                                src_,
                          "directed.sequences");
      p_.directed.fill(0);  // listing sequences selects exactly those
      for (unsigned i = 0; i < kNumDirected; ++i)
        if (auto v = s[std::string(kDirectedNames[i])])
          p_.directed[i] = util::read_double(v, fmt::format("directed.sequences.{}", kDirectedNames[i]), src_, 0, 1e6);
      double total = 0;
      for (double w : p_.directed) total += w;
      if (total <= 0 && p_.directed_rate > 0)
        throw Error(fmt::format("{}: 'directed.sequences' weights must not all be zero", util::where(src_, s)));
    }
  }

  Profile& p_;
  std::string src_;
  const isa::Isa& isa_;
};

}  // namespace

std::string_view op_name(OpKind kind) { return kOpNames[static_cast<unsigned>(kind)]; }
std::string_view directed_name(Directed d) { return kDirectedNames[static_cast<unsigned>(d)]; }
std::string_view oom_name(OomPolicy policy) {
  switch (policy) {
    case OomPolicy::Retire: return "retire";
    case OomPolicy::Compact: return "compact";
    case OomPolicy::Spill: return "spill";
  }
  return "?";
}

Profile Profile::load_string(std::string_view yaml_text, std::string_view source_name, const isa::Isa& isa) {
  Profile p;
  p.source = std::string(source_name);
  p.hash = util::fnv1a64(yaml_text);
  Reader(p, source_name, isa).top(util::load_yaml_string(yaml_text, source_name));
  return p;
}

Profile Profile::load_file(const std::filesystem::path& path, const isa::Isa& isa) {
  return load_string(util::read_file(path, "profile"), path.string(), isa);
}

}  // namespace npuforge::gen
