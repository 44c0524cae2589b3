#include "gen/program_check.h"

#include <algorithm>
#include <array>
#include <memory>
#include <numeric>
#include <unordered_map>

#include <fmt/core.h>

#include "isa/token_order.h"

namespace npuforge::gen {
namespace {

class Checker {
 public:
  Checker(std::span<const isa::Instruction> prog, const bundle::MemMap& map, uint64_t ddr, ProgramCheckOptions o)
      : prog_(prog), map_(map), ddr_(ddr), opt_(o) {}

  ProgramCheckResult run() {
    if (prog_.empty() || prog_.back().spec->mnemonic != "halt")
      add(ProgramOutcome::kNoHalt, static_cast<int64_t>(prog_.size()) - 1, "the program does not end with halt");
    for (size_t i = 0; i < prog_.size(); ++i)
      if (std::string msg = isa::validate(prog_[i]); !msg.empty())
        add(ProgramOutcome::kInvalidInstruction, static_cast<int64_t>(i), fmt::format("{}: {}", where(i), msg));
    clocks();
    extents();
    sram_races();
    ddr_races();
    return std::move(res_);
  }

 private:
  std::string where(size_t i) const { return fmt::format("instruction {} ({})", i, prog_[i].spec->mnemonic); }
  unsigned queue(size_t i) const { return static_cast<unsigned>(prog_[i].spec->queue); }

  void add(ProgramOutcome o, int64_t instr, std::string msg) {
    ++res_.total_findings;
    if (res_.findings.size() < opt_.max_findings) res_.findings.push_back({o, instr, std::move(msg)});
  }

  // Happens-before from the tokens (isa::TokenOrder, the model the simulator checks with).
  // On top of pairing, a generated program must give every wait its signal earlier in
  // program order, so that in-order dispatch (and the golden model) never blocks on it.
  void clocks() {
    order_ = std::make_unique<isa::TokenOrder>(std::vector<isa::Instruction>(prog_.begin(), prog_.end()));
    for (auto [i, p] : order_->unmatched_waits())
      add(ProgramOutcome::kWaitWithoutSignal, static_cast<int64_t>(i),
          fmt::format("{}: waits on {}->{} but no signal on that channel is left for it", where(i),
                      isa::to_string(static_cast<isa::Queue>(p)), isa::to_string(prog_[i].spec->queue)));
    for (auto [signal, wait] : order_->token_pairs())
      if (signal > wait)
        add(ProgramOutcome::kWaitWithoutSignal, static_cast<int64_t>(wait),
            fmt::format("{}: its token comes from {}, later in program order", where(wait), where(signal)));
    for (auto [i, q] : order_->unmatched_signals())
      add(ProgramOutcome::kUnmatchedSignal, static_cast<int64_t>(i),
          fmt::format("{}: its signal to {} is never taken by a wait", where(i), isa::to_string(static_cast<isa::Queue>(q))));
  }

  // a happens before b (or they share a queue, which runs in order).
  bool ordered(size_t a, size_t b) const {
    const unsigned qa = queue(a);
    if (qa >= 3 || qa == queue(b)) return true;
    return order_->happens_before(a, b);
  }

  void extents() {
    // Buffers naming each instruction, as (buffer, is_write).
    std::vector<std::vector<std::pair<size_t, bool>>> named(prog_.size());
    for (size_t b = 0; b < map_.buffers.size(); ++b) {
      const auto& buf = map_.buffers[b];
      if (buf.producer >= 0 && size_t(buf.producer) < prog_.size()) named[buf.producer].push_back({b, true});
      for (int64_t c : buf.consumers)
        if (c >= 0 && size_t(c) < prog_.size()) named[c].push_back({b, false});
    }
    for (size_t i = 0; i < prog_.size(); ++i) {
      for (const isa::Extent& e : isa::extents(prog_[i])) {
        if (e.bytes == 0) continue;
        const std::string& field = prog_[i].spec->fields[e.field].name;
        if (e.space == isa::Space::Ddr) {
          if (e.addr + e.bytes > ddr_)
            add(ProgramOutcome::kDdrOutOfRange, static_cast<int64_t>(i),
                fmt::format("{}: {} DDR [{:#x}, {:#x}) leaves the {} bytes of DDR", where(i), field, e.addr,
                            e.addr + e.bytes, ddr_));
          continue;
        }
        const bool write = e.access == isa::Access::Write;
        bool inside = false;
        std::string names;
        for (auto [b, w] : named[i]) {
          if (w != write) continue;
          const auto& buf = map_.buffers[b];
          names += fmt::format(" {} [{:#x}, {:#x})", buf.symbol, buf.offset.value, buf.offset.value + buf.size.value);
          inside = inside || (e.addr >= buf.offset.value && e.addr + e.bytes <= buf.offset.value + buf.size.value);
        }
        if (!inside)
          add(ProgramOutcome::kUnnamedAccess, static_cast<int64_t>(i),
              fmt::format("{}: {} {} [{:#x}, {:#x}) lies in no buffer it {}:{}", where(i), write ? "writes" : "reads",
                          field, e.addr, e.addr + e.bytes, write ? "produces" : "consumes",
                          names.empty() ? " (none)" : names));
      }
    }
  }

  void race(size_t a, size_t b, const std::string& what) {
    if (!ordered(a, b))
      add(ProgramOutcome::kRace, static_cast<int64_t>(b),
          fmt::format("{} is not ordered after {}: {}", where(b), where(a), what));
  }

  void sram_races() {
    const auto& bufs = map_.buffers;
    std::vector<size_t> order(bufs.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) { return bufs[x].first < bufs[y].first; });
    const uint64_t unit = std::max<uint64_t>(1, map_.alignment.value);
    std::vector<int64_t> owner(map_.sram_bytes.value / unit + 1, -1);
    auto valid = [&](int64_t i) { return i >= 0 && size_t(i) < prog_.size(); };
    for (size_t b : order) {
      const auto& buf = bufs[b];
      if (!valid(buf.producer)) continue;
      for (int64_t c : buf.consumers)
        if (valid(c)) race(buf.producer, c, fmt::format("it reads {} written by the other", buf.symbol));
      int64_t last_prev = -1;
      const uint64_t lo = buf.offset.value / unit, hi = std::min<uint64_t>((uint64_t(buf.offset.value) + buf.size.value + unit - 1) / unit, owner.size());
      for (uint64_t u = lo; u < hi; ++u) {
        const int64_t prev = owner[u];
        owner[u] = static_cast<int64_t>(b);
        if (prev < 0 || prev == last_prev) continue;
        last_prev = prev;
        const auto& pb = bufs[prev];
        if (pb.last >= buf.first) continue;  // lifetimes intersect: check_memmap's finding
        const std::string what = fmt::format("{} reuses bytes of {}", buf.symbol, pb.symbol);
        if (valid(pb.producer)) race(pb.producer, buf.producer, what);
        for (int64_t c : pb.consumers)
          if (valid(c)) race(c, buf.producer, what);
      }
    }
  }

  // DDR: per 64-byte granule the last writer and last reader; conflicting pairs in
  // different queues must be ordered.
  void ddr_races() {
    std::unordered_map<uint64_t, std::pair<int64_t, int64_t>> last;  // granule -> (writer, reader)
    for (size_t i = 0; i < prog_.size(); ++i) {
      for (const isa::Extent& e : isa::extents(prog_[i])) {
        if (e.bytes == 0 || e.space != isa::Space::Ddr || e.addr + e.bytes > ddr_) continue;
        const bool write = e.access == isa::Access::Write;
        int64_t seen_w = -1, seen_r = -1;
        for (uint64_t g = e.addr >> 6; g <= (e.addr + e.bytes - 1) >> 6; ++g) {
          auto it = last.find(g);
          if (it == last.end()) {
            if (write) last.emplace(g, std::pair<int64_t, int64_t>{int64_t(i), -1});
            continue;  // never written: input data, any number of readers
          }
          auto& [w, r] = it->second;
          if (w >= 0 && w != seen_w) {
            seen_w = w;
            race(w, i, fmt::format("both access DDR granule {:#x} and the earlier one writes it", g << 6));
          }
          if (write && r >= 0 && r != seen_r) {
            seen_r = r;
            race(r, i, fmt::format("it overwrites DDR granule {:#x} the earlier one reads", g << 6));
          }
          (write ? w : r) = static_cast<int64_t>(i);
        }
      }
    }
  }

  std::span<const isa::Instruction> prog_;
  const bundle::MemMap& map_;
  uint64_t ddr_;
  ProgramCheckOptions opt_;
  ProgramCheckResult res_;
  std::unique_ptr<isa::TokenOrder> order_;
};

}  // namespace

const char* to_string(ProgramOutcome o) {
  switch (o) {
    case ProgramOutcome::kGood: return "good";
    case ProgramOutcome::kInvalidInstruction: return "invalid-instruction";
    case ProgramOutcome::kUnnamedAccess: return "unnamed-access";
    case ProgramOutcome::kDdrOutOfRange: return "ddr-out-of-range";
    case ProgramOutcome::kWaitWithoutSignal: return "wait-without-signal";
    case ProgramOutcome::kUnmatchedSignal: return "unmatched-signal";
    case ProgramOutcome::kRace: return "race";
    case ProgramOutcome::kNoHalt: return "no-halt";
  }
  return "?";
}

std::string ProgramCheckResult::report() const {
  std::string out;
  for (const auto& f : findings) out += fmt::format("{}: {}\n", to_string(f.outcome), f.message);
  out += fmt::format("{} finding(s)\n", total_findings);
  return out;
}

ProgramCheckResult check_program(std::span<const isa::Instruction> program, const bundle::MemMap& map,
                                 uint64_t ddr_bytes, ProgramCheckOptions options) {
  return Checker(program, map, ddr_bytes, options).run();
}

}  // namespace npuforge::gen
