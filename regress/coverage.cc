#include "regress/coverage.h"

#include <algorithm>
#include <array>
#include <map>
#include <numeric>

#include <fmt/core.h>
#include <yaml-cpp/yaml.h>

#include "util/error.h"
#include "util/text.h"

namespace npuforge::regress {
namespace {

constexpr std::array<const char*, 3> kQueues{"load", "compute", "store"};
// Indexed like allocator::AllocEventKind.
constexpr std::array<const char*, 8> kAllocEvents{"exact_fit",  "split",      "skip",
                                                  "merge_prev", "merge_next", "merge_both",
                                                  "free_no_merge", "oom"};

std::vector<std::pair<std::string, uint64_t>> zero_bins(const std::vector<std::string>& names) {
  std::vector<std::pair<std::string, uint64_t>> bins;
  for (const auto& n : names) bins.emplace_back(n, 0);
  return bins;
}

std::vector<std::string> token_bins() {
  std::vector<std::string> out;
  for (unsigned w = 0; w < 3; ++w) {
    for (unsigned s = 0; s < 3; ++s) {
      if (w != s) out.push_back(fmt::format("{}_waits_{}", kQueues[w], kQueues[s]));
    }
  }
  return out;
}

unsigned queue_of(const isa::Instruction& in) { return static_cast<unsigned>(in.spec->queue); }

// Maps whose units would be too many for a table (odd sizes over a huge range: hand-written
// or planted ones) compare every pair instead.
std::vector<int64_t> previous_owner_last_pairwise(const std::vector<bundle::MemBuffer>& bufs) {
  std::vector<int64_t> prev(bufs.size(), -1);
  for (size_t i = 0; i < bufs.size(); ++i) {
    const auto& c = bufs[i];
    const uint64_t c_lo = c.offset.value, c_hi = c_lo + c.size.value;
    for (const auto& b : bufs) {
      const uint64_t b_lo = b.offset.value, b_hi = b_lo + b.size.value;
      if (b.last >= c.first || b_hi <= c_lo || c_hi <= b_lo) continue;
      prev[i] = std::max(prev[i], b.last);
    }
  }
  return prev;
}

}  // namespace

// A sweep over time with the last owner of each address unit (the gcd of every offset and
// size, so units never straddle a buffer edge): linear in the bytes placed, where comparing
// every pair was quadratic in the buffers.
std::vector<int64_t> previous_owner_last(const std::vector<bundle::MemBuffer>& bufs) {
  std::vector<int64_t> prev(bufs.size(), -1);
  uint64_t unit = 0, end = 0;
  for (const auto& b : bufs) {
    unit = std::gcd(unit, std::gcd(uint64_t{b.offset.value}, b.size.value));
    end = std::max(end, uint64_t{b.offset.value} + b.size.value);
  }
  if (unit == 0) return prev;
  if (end / unit > (uint64_t{1} << 22)) return previous_owner_last_pairwise(bufs);
  std::vector<size_t> by_first(bufs.size()), by_last(bufs.size());
  std::iota(by_first.begin(), by_first.end(), size_t{0});
  std::iota(by_last.begin(), by_last.end(), size_t{0});
  std::stable_sort(by_first.begin(), by_first.end(), [&](size_t a, size_t b) { return bufs[a].first < bufs[b].first; });
  std::stable_sort(by_last.begin(), by_last.end(), [&](size_t a, size_t b) { return bufs[a].last < bufs[b].last; });
  std::vector<int64_t> owner_last(end / unit, -1);  // per unit: the latest `last` of a dead owner
  size_t dead = 0;
  for (size_t c : by_first) {
    for (; dead < by_last.size() && bufs[by_last[dead]].last < bufs[c].first; ++dead) {
      const auto& b = bufs[by_last[dead]];
      for (uint64_t u = b.offset.value / unit; u < (b.offset.value + b.size.value) / unit; ++u) owner_last[u] = b.last;
    }
    const auto& cb = bufs[c];
    for (uint64_t u = cb.offset.value / unit; u < (cb.offset.value + cb.size.value) / unit; ++u)
      prev[c] = std::max(prev[c], owner_last[u]);
  }
  return prev;
}

namespace {

void sample_reuse(Coverage& cov, const gen::GeneratedProgram& prog, const bundle::MemMap& map) {
  const std::vector<int64_t> prev_last = previous_owner_last(map.buffers);
  for (size_t i = 0; i < map.buffers.size(); ++i) {
    const auto& c = map.buffers[i];
    const int64_t last = prev_last[i];
    if (last < 0 || c.first < 0 || static_cast<size_t>(std::max(last, c.first)) >= prog.bundle.instrs.size()) continue;
    const unsigned qb = queue_of(prog.bundle.instrs[last]);
    const unsigned qc = queue_of(prog.bundle.instrs[c.first]);
    if (qb >= 3 || qc >= 3 || qb == qc) continue;
    cov.hit("reuse", fmt::format("{}_after_{}", kQueues[qc], kQueues[qb]));
  }
}

}  // namespace

// ISA v2 features, bound by field name so that any instruction with the fields is sampled:
// "<mnemonic>.<feature>" bins for per-channel requant, dilation, per-side and per-axis shapes.
struct Feature {
  const char* name;
  std::vector<const char*> fields;  // all must exist
  bool (*hit)(const int64_t* v);    // v[i] = value of fields[i]
};
const std::vector<Feature>& features() {
  static const std::vector<Feature> f = {
      {"per_channel", {"per_channel"}, [](const int64_t* v) { return v[0] != 0; }},
      {"dilation", {"dil_h", "dil_w"}, [](const int64_t* v) { return v[0] > 1 || v[1] > 1; }},
      {"asym_pad", {"pad_top", "pad_left", "pad_bottom", "pad_right"},
       [](const int64_t* v) { return v[0] != v[2] || v[1] != v[3]; }},
      {"rect_stride", {"stride_h", "stride_w"}, [](const int64_t* v) { return v[0] != v[1]; }},
      {"rect_window", {"window_h", "window_w"}, [](const int64_t* v) { return v[0] != v[1]; }},
      {"count_pad", {"count_pad", "pad_top", "pad_left", "pad_bottom", "pad_right"},
       [](const int64_t* v) { return v[0] != 0 && (v[1] | v[2] | v[3] | v[4]) != 0; }},
  };
  return f;
}

// The feature bins of `spec`: bin name, the feature, the field slots it reads.
struct FeatureBin {
  std::string bin;
  const Feature* feature;
  std::vector<unsigned> slots;
};
std::vector<FeatureBin> feature_bins(const isa::InstrSpec& spec) {
  std::vector<FeatureBin> bins;
  for (const Feature& f : features()) {
    std::vector<unsigned> slots;
    for (const char* name : f.fields)
      if (auto slot = spec.field_index(name)) slots.push_back(*slot);
    if (slots.size() == f.fields.size()) bins.push_back({fmt::format("{}.{}", spec.mnemonic, f.name), &f, slots});
  }
  return bins;
}

size_t Coverage::Group::covered() const {
  return static_cast<size_t>(std::count_if(bins.begin(), bins.end(), [](auto& b) { return b.second > 0; }));
}

Coverage::Coverage(const isa::Isa& isa) {
  std::vector<std::string> ops;
  std::vector<std::string> fields;
  for (const auto& spec : isa.instructions()) {
    ops.push_back(spec.mnemonic);
    for (const FeatureBin& f : feature_bins(spec)) fields.push_back(f.bin);
  }
  std::vector<std::string> alloc(kAllocEvents.begin(), kAllocEvents.end());
  for (const char* p : {"oom_retire", "oom_compact", "oom_spill"}) alloc.push_back(p);
  std::vector<std::string> reuse;
  for (unsigned to : {0u, 1u}) {  // only load and compute produce SRAM buffers
    for (unsigned from = 0; from < 3; ++from) {
      if (from != to) reuse.push_back(fmt::format("{}_after_{}", kQueues[to], kQueues[from]));
    }
  }
  groups_ = {
      {"opcode", zero_bins(ops)},
      {"size", zero_bins({"unit", "small", "medium", "large", "whole_sram", "needs_padding"})},
      {"alloc", zero_bins(alloc)},
      {"tokens", zero_bins(token_bins())},
      {"reuse", zero_bins(reuse)},
      {"occupancy", zero_bins({"le_50", "50_90", "gt_90", "full"})},
      {"fields", zero_bins(fields)},
  };
}

Coverage::Group* Coverage::find(std::string_view name) {
  for (auto& g : groups_) {
    if (g.name == name) return &g;
  }
  return nullptr;
}
const Coverage::Group* Coverage::find(std::string_view name) const {
  return const_cast<Coverage*>(this)->find(name);
}

void Coverage::hit(std::string_view group, std::string_view bin, uint64_t n) {
  Group* g = find(group);
  if (g) {
    for (auto& b : g->bins) {
      if (b.first == bin) {
        b.second += n;
        return;
      }
    }
  }
  throw Error(fmt::format("coverage: no bin '{}' in group '{}'", bin, group));
}

uint64_t Coverage::count(std::string_view group, std::string_view bin) const {
  if (const Group* g = find(group)) {
    for (const auto& b : g->bins) {
      if (b.first == bin) return b.second;
    }
  }
  return 0;
}

void Coverage::set_seeds(uint64_t n) {
  seeds_ = n;
  for (auto& g : groups_) g.complete_after = g.complete() && n > 0 ? n : 0;
}

void Coverage::merge(const Coverage& other) {
  for (const auto& og : other.groups_) {
    Group* g = find(og.name);
    if (!g) {
      groups_.push_back({og.name, {}, 0});
      g = &groups_.back();
    }
    const bool was_complete = g->complete() && !g->bins.empty() && g->complete_after > 0;
    for (const auto& [name, n] : og.bins) {
      auto it = std::find_if(g->bins.begin(), g->bins.end(), [&](auto& b) { return b.first == name; });
      if (it == g->bins.end()) {
        g->bins.emplace_back(name, n);
      } else {
        it->second += n;
      }
    }
    if (!was_complete && g->complete()) g->complete_after = seeds_ + other.seeds_;
  }
  seeds_ += other.seeds_;
}

std::string Coverage::to_json() const {
  std::string j = fmt::format("{{\"seeds\": {}, \"groups\": {{", seeds_);
  for (size_t i = 0; i < groups_.size(); ++i) {
    const Group& g = groups_[i];
    j += fmt::format("{}\n  {}: {{\"complete_after\": {}, \"bins\": {{", i ? "," : "",
                     util::json_quote(g.name), g.complete_after);
    for (size_t k = 0; k < g.bins.size(); ++k) {
      j += fmt::format("{}{}: {}", k ? ", " : "", util::json_quote(g.bins[k].first), g.bins[k].second);
    }
    j += "}}";
  }
  return j + "\n}}\n";
}

Coverage Coverage::from_json(std::string_view text, std::string_view source) {
  Coverage c;
  try {
    const YAML::Node root = YAML::Load(std::string(text));
    if (!root.IsMap() || !root["groups"] || !root["groups"].IsMap()) {
      throw Error(fmt::format("{}: expected {{\"seeds\": N, \"groups\": {{...}}}}", source));
    }
    c.seeds_ = root["seeds"] ? root["seeds"].as<uint64_t>() : 0;
    for (const auto& g : root["groups"]) {
      Group group{g.first.as<std::string>(), {}, 0};
      if (g.second["complete_after"]) group.complete_after = g.second["complete_after"].as<uint64_t>();
      if (!g.second["bins"] || !g.second["bins"].IsMap()) {
        throw Error(fmt::format("{}: group '{}' has no 'bins' map", source, group.name));
      }
      for (const auto& b : g.second["bins"]) {
        group.bins.emplace_back(b.first.as<std::string>(), b.second.as<uint64_t>());
      }
      c.groups_.push_back(std::move(group));
    }
  } catch (const YAML::Exception& e) {
    throw Error(fmt::format("{}:{}: bad coverage JSON: {}", source, e.mark.line + 1, e.msg));
  }
  return c;
}

std::string Coverage::report(bool list_holes) const {
  std::string s = fmt::format("coverage over {} seeds\n", seeds_);
  size_t cov = 0, total = 0;
  for (const auto& g : groups_) {
    const size_t c = g.covered();
    cov += c;
    total += g.bins.size();
    s += fmt::format("  {:<10} {:>3}/{:<3} {:>6.1f}%", g.name, c, g.bins.size(),
                     g.bins.empty() ? 100.0 : 100.0 * c / g.bins.size());
    if (g.complete() && g.complete_after > 0) s += fmt::format("  complete after {} seeds", g.complete_after);
    s += "\n";
  }
  s += fmt::format("  {:<10} {:>3}/{:<3} {:>6.1f}%\n", "total", cov, total, total ? 100.0 * cov / total : 100.0);
  if (list_holes && cov < total) {
    s += "holes:\n";
    for (const auto& g : groups_) {
      for (const auto& [name, n] : g.bins) {
        if (n == 0) s += fmt::format("  {}.{}\n", g.name, name);
      }
    }
  }
  return s;
}

Coverage sample(const isa::Isa& isa, const gen::GeneratedProgram& prog, const bundle::MemMap& map,
                gen::OomPolicy oom_policy) {
  Coverage cov(isa);
  std::map<const isa::InstrSpec*, std::vector<FeatureBin>> bins_of;  // per instruction kind, made once
  for (const auto& in : prog.bundle.instrs) {
    cov.hit("opcode", in.spec->mnemonic);
    auto it = bins_of.find(in.spec);
    if (it == bins_of.end()) it = bins_of.emplace(in.spec, feature_bins(*in.spec)).first;
    for (const FeatureBin& f : it->second) {
      std::array<int64_t, 8> v{};
      for (size_t i = 0; i < f.slots.size(); ++i) v[i] = in.value(f.slots[i]);
      if (f.feature->hit(v.data())) cov.hit("fields", f.bin);
    }
    const unsigned q = queue_of(in);
    if (q >= 3) continue;
    for (unsigned s = 0; s < 3; ++s) {
      if (s != q && (in.wait_mask() >> s & 1u)) cov.hit("tokens", fmt::format("{}_waits_{}", kQueues[q], kQueues[s]));
    }
  }
  const uint64_t align = std::max<uint64_t>(1, prog.bundle.config.alignment.value);
  const uint64_t sram = prog.bundle.config.sram_bytes.value;
  for (const auto& sym : prog.symbols) {
    if (sym.padded == 0) continue;
    const uint64_t p = sym.padded;
    const char* bin = p == sram ? "whole_sram" : p <= align ? "unit" : p <= 16 * align ? "small"
                    : p <= sram / 16 ? "medium" : "large";
    cov.hit("size", bin);
    if (sym.written % align != 0) cov.hit("size", "needs_padding");
  }
  const auto& sum = prog.summary;
  for (size_t k = 0; k < kAllocEvents.size(); ++k) {
    if (sum.alloc_events[k] > 0) cov.hit("alloc", kAllocEvents[k], sum.alloc_events[k]);
  }
  if (sum.oom > 0) {
    const bool handled = oom_policy == gen::OomPolicy::Retire    ? sum.retired > 0
                         : oom_policy == gen::OomPolicy::Compact ? sum.compact_moves > 0
                                                                 : sum.spills > 0;
    const char* bins[] = {"oom_retire", "oom_compact", "oom_spill"};
    if (handled) cov.hit("alloc", bins[static_cast<size_t>(oom_policy)]);
  }
  sample_reuse(cov, prog, map);
  if (sram > 0) {
    const uint64_t peak = sum.peak_sram;
    const char* bin = peak >= sram ? "full" : peak * 10 > sram * 9 ? "gt_90" : peak * 2 > sram ? "50_90" : "le_50";
    cov.hit("occupancy", bin);
    if (peak >= sram) cov.hit("occupancy", "gt_90");  // a full SRAM is also above 90%
  }
  cov.set_seeds(1);
  return cov;
}

}  // namespace npuforge::regress
