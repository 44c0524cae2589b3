#include "regress/shrink.h"

#include <algorithm>
#include <array>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <fmt/core.h>

#include "bundle/files.h"
#include "isa/assembler.h"
#include "regress/ddmin.h"
#include "bundle/program.h"
#include "util/error.h"
#include "util/file_io.h"

namespace npuforge::regress {
namespace {

bool touches(const isa::Instruction& in, const bundle::MemBuffer& b) {
  const uint64_t lo = b.offset.value, hi = lo + b.size.value;
  for (const auto& e : isa::extents(in)) {
    if (e.bytes == 0 || e.space != isa::Space::Sram) continue;
    if (e.addr < hi && lo < e.addr + e.bytes) return true;
  }
  return false;
}

// partner[i][q]: for a signal bit q of instruction i, the instruction whose wait consumes
// it; for a wait bit q, the instruction whose signal satisfies it (SIZE_MAX if none).
std::vector<std::array<size_t, 2 * isa::kNumQueues>> token_partners(const std::vector<isa::Instruction>& instrs) {
  constexpr size_t kNone = SIZE_MAX;
  std::vector<std::array<size_t, 2 * isa::kNumQueues>> partner(instrs.size());
  for (auto& p : partner) p.fill(kNone);
  for (unsigned from = 0; from < isa::kNumQueues; ++from) {
    for (unsigned to = 0; to < isa::kNumQueues; ++to) {
      if (from == to) continue;
      std::vector<size_t> sig, wait;
      for (size_t i = 0; i < instrs.size(); ++i) {
        const unsigned q = static_cast<unsigned>(instrs[i].spec->queue);
        if (q == from && (instrs[i].signal_mask() >> to & 1u)) sig.push_back(i);
        if (q == to && (instrs[i].wait_mask() >> from & 1u)) wait.push_back(i);
      }
      for (size_t k = 0; k < std::min(sig.size(), wait.size()); ++k) {
        partner[sig[k]][to] = wait[k];                      // signal slot: 0..2
        partner[wait[k]][isa::kNumQueues + from] = sig[k];  // wait slot: 3..5
      }
    }
  }
  return partner;
}

// The buffer each SRAM operand of the program names (the one live there that holds its first
// byte), in instruction order, for the listing.
std::vector<isa::SymbolRef> operand_buffers(const ShrinkProgram& p) {
  std::vector<std::vector<size_t>> live(p.instrs.size());  // buffers live at each instruction
  for (size_t b = 0; b < p.map.buffers.size(); ++b) {
    const bundle::MemBuffer& buf = p.map.buffers[b];
    for (int64_t i = std::max<int64_t>(buf.first, 0); i <= buf.last && static_cast<size_t>(i) < live.size(); ++i)
      live[static_cast<size_t>(i)].push_back(b);
  }
  std::vector<isa::SymbolRef> out;
  for (size_t i = 0; i < p.instrs.size(); ++i) {
    for (const isa::Extent& e : isa::extents(p.instrs[i])) {
      if (e.bytes == 0 || e.space != isa::Space::Sram) continue;
      for (size_t b : live[i]) {
        const bundle::MemBuffer& buf = p.map.buffers[b];
        if (e.addr < buf.offset.value || e.addr >= buf.offset.value + buf.size.value) continue;
        out.push_back({i, e.field, buf.symbol, static_cast<int64_t>(e.addr - buf.offset.value)});
        break;
      }
    }
  }
  return out;
}

}  // namespace

ShrinkProgram restrict_to(const ShrinkProgram& p, const std::vector<size_t>& keep_in) {
  std::vector<size_t> keep = keep_in;
  if (!p.instrs.empty() && (keep.empty() || keep.back() != p.instrs.size() - 1)) keep.push_back(p.instrs.size() - 1);
  std::vector<int64_t> new_index(p.instrs.size(), -1);
  for (size_t k = 0; k < keep.size(); ++k) new_index[keep[k]] = static_cast<int64_t>(k);
  const auto partner = token_partners(p.instrs);

  ShrinkProgram out;
  out.ddr = p.ddr;
  for (size_t i : keep) {
    isa::Instruction in = p.instrs[i];
    for (unsigned q = 0; q < isa::kNumQueues; ++q) {
      const size_t s = partner[i][q], w = partner[i][isa::kNumQueues + q];
      if ((in.signal_mask() >> q & 1u) && (s == SIZE_MAX || new_index[s] < 0)) {
        in.set(isa::kSignalSlot, in.signal_mask() & ~(1u << q));
      }
      if ((in.wait_mask() >> q & 1u) && (w == SIZE_MAX || new_index[w] < 0)) {
        in.set(isa::kWaitSlot, in.wait_mask() & ~(1u << q));
      }
    }
    out.instrs.push_back(in);
  }
  out.map = p.map;
  out.map.buffers.clear();
  out.map.instructions = static_cast<int64_t>(out.instrs.size());
  for (const auto& b : p.map.buffers) {
    bundle::MemBuffer nb = b;
    nb.first = -1;
    const int64_t lo = std::max<int64_t>(b.first, 0);
    const int64_t hi = std::min<int64_t>(b.last, static_cast<int64_t>(p.instrs.size()) - 1);
    for (int64_t i = lo; i <= hi; ++i) {
      if (new_index[i] < 0 || !touches(p.instrs[i], b)) continue;
      if (nb.first < 0) nb.first = new_index[i];
      nb.last = new_index[i];
    }
    if (nb.first < 0) continue;
    nb.producer = (b.producer >= 0 && static_cast<size_t>(b.producer) < new_index.size())
                      ? new_index[b.producer] : bundle::kNoProducer;
    if (nb.producer < 0) nb.producer = bundle::kNoProducer;
    nb.consumers.clear();
    for (int64_t c : b.consumers) {
      if (c >= 0 && static_cast<size_t>(c) < new_index.size() && new_index[c] >= 0) nb.consumers.push_back(new_index[c]);
    }
    out.map.buffers.push_back(std::move(nb));
  }
  return out;
}

ShrinkProgram drop_buffers(const ShrinkProgram& p, const std::vector<size_t>& drop) {
  std::vector<uint8_t> gone(p.instrs.size(), 0);
  for (size_t d : drop) {
    const auto& b = p.map.buffers.at(d);
    for (int64_t i = std::max<int64_t>(b.first, 0); i <= b.last && static_cast<size_t>(i) < p.instrs.size(); ++i) {
      if (touches(p.instrs[i], b)) gone[i] = 1;
    }
  }
  std::vector<size_t> keep;
  for (size_t i = 0; i < p.instrs.size(); ++i) {
    if (!gone[i]) keep.push_back(i);
  }
  return restrict_to(p, keep);
}

ShrinkResult shrink(const ShrinkProgram& p, const Oracle& oracle, size_t max_tests) {
  ShrinkResult res;
  res.from_instrs = p.instrs.size();
  res.from_buffers = p.map.buffers.size();
  res.kind = oracle(p);
  res.tests = 1;
  if (res.kind.cause == Cause::None) throw Error("shrink: the program does not fail, nothing to shrink");
  auto same = [&](const ShrinkProgram& c) {
    ++res.tests;
    return oracle(c) == res.kind;
  };
  // Phase 1: buffers (a buffer and all its uses go at once: big, legal steps).
  std::vector<size_t> all(p.map.buffers.size());
  for (size_t i = 0; i < all.size(); ++i) all[i] = i;
  DdminStats st;
  const auto kept_buffers = ddmin(all, [&](const std::vector<size_t>& keep) {
    std::vector<size_t> drop;
    std::set_difference(all.begin(), all.end(), keep.begin(), keep.end(), std::back_inserter(drop));
    return same(drop_buffers(p, drop));
  }, &st, max_tests / 2);
  std::vector<size_t> drop;
  std::set_difference(all.begin(), all.end(), kept_buffers.begin(), kept_buffers.end(), std::back_inserter(drop));
  ShrinkProgram cur = drop_buffers(p, drop);
  // Phase 2: instructions (the final HALT stays).
  std::vector<size_t> idx(cur.instrs.empty() ? 0 : cur.instrs.size() - 1);
  for (size_t i = 0; i < idx.size(); ++i) idx[i] = i;
  if (!idx.empty()) {
    const auto kept = ddmin(idx, [&](const std::vector<size_t>& keep) { return same(restrict_to(cur, keep)); },
                            &st, max_tests - std::min(max_tests, res.tests));
    cur = restrict_to(cur, kept);
  }
  res.program = std::move(cur);
  return res;
}

void write_program(const isa::Isa& isa, const ShrinkProgram& p, const std::filesystem::path& prefix) {
  const std::vector<isa::SymbolRef> operands = operand_buffers(p);
  const bundle::Listing listing{
      fmt::format("npuforge shrink: {} instructions, {} buffers", p.instrs.size(), p.map.buffers.size()),
      "SRAM operands name their buffers in the comments", operands};
  bundle::write_bundle(isa, prefix, p.instrs, p.map, p.ddr, listing);
}

Oracle verify_oracle(const isa::Isa& isa, const isa::NpuConfig& npu, const sim::verify::Options& options) {
  return [&isa, npu, options](const ShrinkProgram& p) -> SeedKind {
    bundle::Program candidate;
    candidate.name = "candidate";
    candidate.isa = &isa;
    candidate.instrs = p.instrs;
    candidate.memmap = p.map;
    candidate.ddr_init = p.ddr;
    candidate.config = npu;
    if (!candidate.validate().empty()) return SeedKind{Cause::Simulator};
    try {
      return kind_of(sim::verify::run(candidate, options));
    } catch (const std::exception&) {
      return SeedKind{Cause::Simulator};
    }
  };
}

}  // namespace npuforge::regress
