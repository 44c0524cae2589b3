// Memory-map YAML: load with errors naming file, line, buffer index and field; save in the
// documented layout (one flow mapping per buffer, offsets in hex).
#include "util/file_io.h"
#include "bundle/memmap.h"
#include "bundle/memmap_fast.h"
#include "bundle/memmap_text.h"
#include "bundle/text_sink.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <span>

#include "util/error.h"
#include "util/yaml_util.h"

namespace npuforge::bundle {
namespace {

using util::read_int;

constexpr int64_t kMaxIndex = INT64_MAX / 2;

// The leading '#' lines of the file, without "# ", joined by newlines.
std::string leading_comment(std::string_view text) {
  std::string header;
  size_t pos = 0;
  while (pos < text.size() && text[pos] == '#') {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos + 1, end - pos - 1);
    if (!line.empty() && line.front() == ' ') line.remove_prefix(1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (!header.empty()) header += '\n';
    header += line;
    pos = end + 1;
  }
  return header;
}

MemBuffer read_buffer(const YAML::Node& node, size_t index, std::string_view source) {
  const std::string what = fmt::format("buffers[{}]", index);
  util::reject_unknown_keys(node, {"symbol", "offset", "size", "first", "last", "producer", "consumers"},
                           source, what);
  auto key = [&](std::string_view field) { return fmt::format("{}.{}", what, field); };
  auto need = [&](const char* field) {
    const YAML::Node v = node[field];
    if (!v) {
      throw Error(fmt::format("{}: {} has no '{}'", util::where(source, node), what, field));
    }
    return v;
  };
  MemBuffer b;
  b.symbol = util::read_string(need("symbol"), key("symbol"), source);
  if (b.symbol.empty()) {
    throw Error(fmt::format("{}: '{}' must not be empty", util::where(source, node), key("symbol")));
  }
  b.offset = SramAddr{uint32_t(util::read_int(need("offset"), key("offset"), source, 0, UINT32_MAX))};
  b.size = Bytes{uint64_t(util::read_int(need("size"), key("size"), source, 1, UINT32_MAX))};
  b.first = util::read_int(need("first"), key("first"), source, 0, kMaxIndex);
  b.last = util::read_int(need("last"), key("last"), source, 0, kMaxIndex);
  if (b.last < b.first) {
    throw Error(fmt::format("{}: '{}' = {} is before '{}' = {} (the lifetime [first, last] is "
                            "inclusive)",
                            util::where(source, node), key("last"), b.last, key("first"), b.first));
  }
  if (const YAML::Node p = node["producer"]) {
    b.producer = util::read_int(p, key("producer"), source, kNoProducer, kMaxIndex);
  }
  if (const YAML::Node c = node["consumers"]) {
    if (!c.IsSequence()) {
      throw Error(fmt::format("{}: '{}' must be a list of instruction indices",
                              util::where(source, c), key("consumers")));
    }
    for (size_t i = 0; i < c.size(); ++i) {
      b.consumers.push_back(
          util::read_int(c[i], fmt::format("{}[{}]", key("consumers"), i), source, 0, kMaxIndex));
    }
  }
  return b;
}

// A list of instruction indices, ascending.
std::vector<int64_t> read_indices(const YAML::Node& node, const std::string& key, std::string_view source) {
  if (!node.IsSequence()) {
    throw Error(fmt::format("{}: '{}' must be a list of instruction indices", util::where(source, node), key));
  }
  std::vector<int64_t> out;
  for (size_t i = 0; i < node.size(); ++i) {
    out.push_back(util::read_int(node[i], fmt::format("{}[{}]", key, i), source, 0, kMaxIndex));
    if (i > 0 && out[i] < out[i - 1]) {
      throw Error(fmt::format("{}: '{}[{}]' = {} is below the previous entry {} (the list must be ascending)",
                              util::where(source, node[i]), key, i, out[i], out[i - 1]));
    }
  }
  return out;
}

MemDdrBuffer read_ddr_buffer(const YAML::Node& node, size_t index, std::string_view source) {
  const std::string what = fmt::format("ddr_buffers[{}]", index);
  util::reject_unknown_keys(node, {"name", "region", "offset", "size", "first", "last", "writers", "readers"},
                           source, what);
  auto key = [&](std::string_view field) { return fmt::format("{}.{}", what, field); };
  auto need = [&](const char* field) {
    const YAML::Node v = node[field];
    if (!v) throw Error(fmt::format("{}: {} has no '{}'", util::where(source, node), what, field));
    return v;
  };
  MemDdrBuffer b;
  b.name = util::read_string(need("name"), key("name"), source);
  if (b.name.empty()) {
    throw Error(fmt::format("{}: '{}' must not be empty", util::where(source, node), key("name")));
  }
  if (const YAML::Node r = node["region"]) b.region = util::read_string(r, key("region"), source);
  b.offset = DdrAddr{uint64_t(util::read_int(need("offset"), key("offset"), source, 0, INT64_MAX / 2))};
  b.size = Bytes{uint64_t(util::read_int(need("size"), key("size"), source, 1, INT64_MAX / 2))};
  b.first = util::read_int(need("first"), key("first"), source, 0, kMaxIndex);
  b.last = util::read_int(need("last"), key("last"), source, 0, kMaxIndex);
  if (b.last < b.first) {
    throw Error(fmt::format("{}: '{}' = {} is before '{}' = {} (the lifetime [first, last] is inclusive)",
                            util::where(source, node), key("last"), b.last, key("first"), b.first));
  }
  if (const YAML::Node w = node["writers"]) b.writers = read_indices(w, key("writers"), source);
  if (const YAML::Node r = node["readers"]) b.readers = read_indices(r, key("readers"), source);
  for (const auto* list : {&b.writers, &b.readers}) {
    for (int64_t i : *list) {
      if (!b.live_at(i)) {
        throw Error(fmt::format("{}: {} accesses it at instruction {}, outside its lifetime [{}, {}]",
                                util::where(source, node), what, i, b.first, b.last));
      }
    }
  }
  return b;
}

std::string index_list(const std::vector<int64_t>& v) {
  std::string out = "[";
  for (size_t i = 0; i < v.size(); ++i) out += fmt::format("{}{}", i ? ", " : "", v[i]);
  return out + "]";
}

}  // namespace

MemMap MemMap::load_string(std::string_view yaml_text, std::string_view source_name) {
  if (auto fast = parse_generated_memmap(yaml_text)) return std::move(*fast);
  return load_yaml_string(yaml_text, source_name);
}

MemMap MemMap::load_yaml_string(std::string_view yaml_text, std::string_view source_name) {
  const YAML::Node root = util::load_yaml_string(yaml_text, source_name);
  util::reject_unknown_keys(root, {"sram_bytes", "alignment", "instructions", "buffers", "ddr_buffers"},
                           source_name, "memory map");
  MemMap m;
  m.header = leading_comment(yaml_text);
  const YAML::Node sram = root["sram_bytes"];
  if (!sram) throw Error(fmt::format("{}: memory map has no 'sram_bytes'", source_name));
  m.sram_bytes = Bytes{uint64_t(util::read_int(sram, "sram_bytes", source_name, 1, 1ll << 32))};
  if (const YAML::Node a = root["alignment"]) {
    m.alignment = Bytes{uint64_t(util::read_int(a, "alignment", source_name, 1, 1ll << 31))};
  }
  if (const YAML::Node n = root["instructions"]) {
    m.instructions = util::read_int(n, "instructions", source_name, 0, kMaxIndex);
  }
  const YAML::Node buffers = root["buffers"];
  if (buffers && !buffers.IsNull()) {
    if (!buffers.IsSequence()) {
      throw Error(fmt::format("{}: 'buffers' must be a list", util::where(source_name, buffers)));
    }
    for (size_t i = 0; i < buffers.size(); ++i) {
      m.buffers.push_back(read_buffer(buffers[i], i, source_name));
    }
  }
  const YAML::Node ddr = root["ddr_buffers"];
  if (ddr && !ddr.IsNull()) {
    if (!ddr.IsSequence()) {
      throw Error(fmt::format("{}: 'ddr_buffers' must be a list", util::where(source_name, ddr)));
    }
    for (size_t i = 0; i < ddr.size(); ++i) m.ddr_buffers.push_back(read_ddr_buffer(ddr[i], i, source_name));
  }
  return m;
}

MemMap MemMap::load_file(const std::filesystem::path& path) {
  return load_string(util::read_file(path, "memory map"), path.string());
}

std::string MemMap::to_yaml() const {
  std::string out;
  out.reserve(64 + header.size() + buffers.size() * 96);
  StringSink sink(out);
  put_memmap_head(sink, header, sram_bytes.value, alignment.value, instructions, !buffers.empty());
  for (const MemBuffer& b : buffers) {
    auto put = [&](std::string_view symbol) {
      put_buffer_line(
          sink, symbol.size(), [symbol](char* o) { return util::write_text(o, symbol); }, b.offset.value,
          b.size.value, b.first, b.last, b.producer == kNoProducer ? nullptr : &b.producer,
          std::span<const int64_t>(b.consumers));
    };
    if (is_plain_symbol(b.symbol)) {
      put(b.symbol);  // what the emitter writes for such a name, without its cost
    } else {
      YAML::Emitter quoted;  // quotes a symbol only when YAML needs it
      quoted << b.symbol;
      put(quoted.c_str());
    }
  }
  if (ddr_buffers.empty()) return out;  // generated programs: the format as before
  out += "ddr_buffers:\n";
  for (const MemDdrBuffer& b : ddr_buffers) {
    YAML::Emitter name;
    name << b.name;
    out += fmt::format("  - {{name: {}", name.c_str());
    if (!b.region.empty()) {
      YAML::Emitter region;
      region << b.region;
      out += fmt::format(", region: {}", region.c_str());
    }
    out += fmt::format(", offset: 0x{:x}, size: {}, first: {}, last: {}", b.offset.value, b.size.value, b.first,
                       b.last);
    if (!b.writers.empty()) out += ", writers: " + index_list(b.writers);
    if (!b.readers.empty()) out += ", readers: " + index_list(b.readers);
    out += "}\n";
  }
  return out;
}

void MemMap::save_file(const std::filesystem::path& path) const {
  util::write_file(path, to_yaml(), "memory map");
}

}  // namespace npuforge::bundle
