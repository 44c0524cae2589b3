#include "sim/checkers.h"

#include <algorithm>
#include <climits>
#include <map>
#include <set>
#include <span>

#include <fmt/core.h>

#include "util/error.h"
#include "sim/ddr_owner.h"
#include "sim/hazard_map.h"
#include "sim/run_map.h"
#include "sim/shadow.h"

namespace npuforge::sim {
namespace {

struct KindInfo {
  FindingKind kind;
  std::string_view name;
  std::string_view checker;
};
constexpr KindInfo kKinds[] = {
    {FindingKind::OutsideBuffer, "outside-buffer", "shadow"},
    {FindingKind::UnownedAccess, "unowned-access", "shadow"},
    {FindingKind::ReadUnwritten, "read-unwritten", "shadow"},
    {FindingKind::AfterLastUse, "after-last-use", "shadow"},
    {FindingKind::BeforeFirstUse, "before-first-use", "shadow"},
    {FindingKind::LiveOverlap, "live-overlap", "overlap"},
    {FindingKind::Hazard, "hazard", "hazard"},
    {FindingKind::Deadlock, "deadlock", "hazard"},
    {FindingKind::UnconsumedSignal, "unconsumed-signal", "hazard"},
    {FindingKind::OrderViolation, "order-violation", "executor"},
    {FindingKind::OutOfRange, "out-of-range", "executor"},
    {FindingKind::DdrMismatch, "ddr-mismatch", "golden"},
    {FindingKind::RtlMismatch, "rtl-mismatch", "rtl"},
    {FindingKind::DdrClobber, "ddr-clobber", "ddr"},
    {FindingKind::DdrStaleRead, "ddr-stale-read", "ddr"},
};

std::string_view queue_name(const isa::Instruction& in) { return isa::to_string(in.spec->queue); }

}  // namespace

static_assert(std::size(kKinds) == kNumFindingKinds);

std::string_view to_string(FindingKind k) { return kKinds[static_cast<size_t>(k)].name; }
std::string_view checker_of(FindingKind k) { return kKinds[static_cast<size_t>(k)].checker; }

std::optional<FindingKind> finding_kind_named(std::string_view name) {
  for (const KindInfo& k : kKinds)
    if (k.name == name) return k.kind;
  return std::nullopt;
}

std::string format(const Finding& f) {
  std::string s = fmt::format("[{}/{}]", checker_of(f.kind), to_string(f.kind));
  if (f.instr >= 0) s += fmt::format(" #{} {}", f.instr, f.mnemonic);
  if (!f.symbol.empty()) s += fmt::format(" %{}", f.symbol);
  if (f.bytes > 0) {
    s += fmt::format(" {}[{:#x}, {:#x})", f.space == isa::Space::Sram ? "sram" : "ddr", f.addr,
                     f.addr + f.bytes);
  }
  if (!f.detail.empty()) s += ": " + f.detail;
  if (f.other_instr >= 0 || !f.other_symbol.empty()) {
    s += "; other:";
    if (f.other_instr >= 0) s += fmt::format(" #{} {}", f.other_instr, f.other_mnemonic);
    if (!f.other_symbol.empty()) s += fmt::format(" %{}", f.other_symbol);
  }
  return s;
}

// Shadow memory: the buffer index plus, per SRAM byte, the buffer that last wrote it.
struct Checkers::Shadow {
  Shadow(const bundle::MemMap& map, uint64_t sram_bytes, size_t instructions, bool overlap)
      : by_first(sorted_by_first(map)), index(map, sram_bytes, by_first), overlap_done(map.buffers.size(), 0) {
    born_from.resize(instructions + 1);
    for (size_t i = 0, k = 0; i <= instructions; ++i) {
      while (k < by_first.size() && by_first[k].first < static_cast<int64_t>(i)) ++k;
      born_from[i] = static_cast<uint32_t>(k);
    }
    if (overlap) find_candidates(map);
  }
  static std::vector<std::pair<int64_t, int32_t>> sorted_by_first(const bundle::MemMap& map) {
    std::vector<std::pair<int64_t, int32_t>> out;
    out.reserve(map.buffers.size());
    for (size_t b = 0; b < map.buffers.size(); ++b) out.emplace_back(map.buffers[b].first, static_cast<int32_t>(b));
    // A map lists its buffers roughly in `first` order: sorting is then skipped.
    if (!std::is_sorted(out.begin(), out.end())) std::sort(out.begin(), out.end());
    return out;
  }
  // The (first, buffer) entries of the buffers that become live at instruction i.
  std::span<const std::pair<int64_t, int32_t>> born_at(int64_t i) const {
    if (i >= 0 && static_cast<size_t>(i) + 1 < born_from.size()) {
      return {by_first.data() + born_from[static_cast<size_t>(i)], by_first.data() + born_from[static_cast<size_t>(i) + 1]};
    }
    const auto range = std::equal_range(by_first.begin(), by_first.end(), std::pair<int64_t, int32_t>{i, INT32_MIN},
                                        [](const auto& x, const auto& y) { return x.first < y.first; });
    return {range.first, range.second};
  }
  // Which buffers each buffer meets when it becomes live depends on the map alone: found
  // once (instead of an index query over every byte granule of every buffer as it becomes
  // live).
  void find_candidates(const bundle::MemMap& map);
  std::span<const int32_t> overlap_candidates(size_t b) const { return cands.of(b); }
  std::vector<std::pair<int64_t, int32_t>> by_first;  // (first, buffer), sorted
  // Per SRAM byte, the buffer that last wrote it is HazardMap::Seg::writer of the SRAM run
  // map (Checkers::sram_runs_), beside the hazard checker's state: one lookup per access.
  BufferIndex index;
  // by_first[born_from[i], born_from[i + 1]) become live at instruction i: no binary search
  // (a cache miss per step) at every instruction's start.
  std::vector<uint32_t> born_from;
  std::vector<uint8_t> overlap_done;                  // per buffer
  std::vector<int32_t> scratch;
  std::vector<BufferIndex::Holder> holders;
  OverlapCandidates cands;  // per buffer (empty without the overlap checker)
};

void Checkers::Shadow::find_candidates(const bundle::MemMap& map) {
  cands = find_overlap_candidates(map, index, by_first);
  // A buffer that meets no other (no candidates, no one's candidate: every pair of buffers
  // whose bytes meet while both live is in the later-born one's list) is the only holder of
  // its bytes while it lives: the index may answer its bytes from a cache.
  std::vector<uint8_t> exclusive(map.buffers.size(), 1);
  for (size_t b = 0; b < map.buffers.size(); ++b) {
    if (cands.begin[b] != cands.begin[b + 1]) exclusive[b] = 0;
    for (int32_t c : cands.of(b)) exclusive[static_cast<size_t>(c)] = 0;
  }
  index.mark_exclusive(std::move(exclusive));
}

// A nested name for DdrOwnership, so that checkers.h need not include ddr_owner.h.
class Checkers::DdrOwner : public DdrOwnership {
 public:
  using DdrOwnership::DdrOwnership;
};

Checkers::Checkers(const bundle::Program& program, const Semantics& sem, CheckerOptions options)
    : program_(&program), sem_(&sem), options_(options) {
  const size_t n = program.instrs.size();
  if (n > static_cast<size_t>(INT32_MAX)) {
    throw Error(fmt::format("checkers: {} instructions; at most {} are supported", n, INT32_MAX));
  }
  const uint64_t sram = program.config.sram_bytes.value;
  if (program.memmap && (options_.shadow || options_.overlap)) {
    shadow_ = std::make_unique<Shadow>(*program.memmap, sram, n, options_.overlap);
  }
  if (program.memmap && !program.memmap->ddr_buffers.empty() && options_.shadow) {
    ddr_owner_ = std::make_unique<DdrOwner>(*program.memmap);
  }
  shadow_on_ = shadow_ && options_.shadow;
  overlap_on_ = shadow_ && options_.overlap;
  sram_bytes_ = sram;
  ddr_bytes_ = program.config.ddr_bytes.value;
  if (options_.hazard || shadow_on_) sram_runs_ = std::make_unique<HazardMap>(sram);
  if (options_.hazard) ddr_hazards_ = std::make_unique<DdrHazardMap>(program.config.ddr_bytes.value);
  finish_time_.assign(n, UINT64_MAX);
  start_time_.assign(n, 0);
  started_.assign(n, 0);
  options_.batch = std::max<size_t>(options_.batch, 1);
  batch_ = std::min(options_.batch, kMaxBatch);
  log_ = std::make_unique_for_overwrite<Event[]>(batch_);
  instrs_ = n;
  // Last: building the order allocates megabytes of temporaries and frees them. Built first,
  // they left a hole under the checkers' structures that those structures then filled when
  // they were on (the model's memory came from fresh pages) and did not when they were off
  // (the model's came from the hole, already faulted in): hundreds of page faults of the
  // model's that depended on the checkers. Built last, they are freed at the top of the heap,
  // where the model's memory comes from either way.
  order_ = std::make_unique<TokenOrder>(program.instrs);
}

// Nothing reads the findings after this, but a check that throws would have thrown when
// its event came (a destructor must not).
Checkers::~Checkers() {
  try {
    flush();
  } catch (...) {
  }
}

Finding Checkers::base(size_t instr, FindingKind kind) const {
  Finding f;
  f.kind = kind;
  if (instr < program_->instrs.size()) {
    f.instr = static_cast<int64_t>(instr);
    f.mnemonic = program_->instrs[instr].spec->mnemonic;
  }
  return f;
}

bool Checkers::keeping() const {
  return options_.max_errors == 0 || findings_.size() < options_.max_errors;
}

void Checkers::count_only(FindingKind kind) {
  ++total_;
  ++by_kind_[static_cast<size_t>(kind)];
}

void Checkers::report(Finding f) {
  flush();
  add(std::move(f));
}

void Checkers::add(Finding f) {
  ++total_;
  ++by_kind_[static_cast<size_t>(f.kind)];
  if (options_.max_errors == 0 || findings_.size() < options_.max_errors) {
    findings_.push_back(std::move(f));
  }
}

void Checkers::do_start(size_t instr, uint64_t time) {
  if (started_[instr]) return;
  started_[instr] = 1;
  start_time_[instr] = time;
  for (unsigned q = 0; q < isa::kNumQueues; ++q) {
    const int64_t p = order_->latest_before(instr, q);
    if (p >= 0 && finish_time_[static_cast<size_t>(p)] > time) report_order(instr, p, time);
  }
  if (overlap_on_) check_overlap_at(instr);
}

// Out of line (as the other reports): do_start, run per instruction, keeps a small frame.
void Checkers::report_order(size_t instr, int64_t p, uint64_t time) {
  Finding f = base(instr, FindingKind::OrderViolation);
  f.other_instr = p;
  f.other_mnemonic = program_->instrs[static_cast<size_t>(p)].spec->mnemonic;
  f.detail = fmt::format("started at {} before a token/barrier predecessor finished", time);
  add(std::move(f));
}

void Checkers::check_overlap_at(size_t instr) {
  // Most instructions make no buffer live: back before any set-up (born_at's checks).
  const auto& from = shadow_->born_from;
  if (instr + 1 < from.size() && from[instr] == from[instr + 1]) return;
  const auto born = shadow_->born_at(static_cast<int64_t>(instr));
  for (const auto& entry : born) {
    const size_t b = static_cast<size_t>(entry.second);
    shadow_->overlap_done[b] = 1;
    // Most buffers meet no other (and an empty one has no candidates): their MemBuffer (a
    // cache miss each, ~100 bytes apart) is loaded only to report.
    const auto cands = shadow_->overlap_candidates(b);
    if (cands.empty()) {
      shadow_->index.expect(static_cast<int32_t>(b));  // its producer's access comes next
    } else {
      check_overlaps(instr, b, cands);
    }
  }
}

// Buffer b becomes live at instr on bytes of the candidates (its overlap candidates).
void Checkers::check_overlaps(size_t instr, size_t b, std::span<const int32_t> cands) {
  const auto& map = *program_->memmap;
  const auto& idx = shadow_->index;
  const int64_t i = static_cast<int64_t>(instr);
  // Looked up only for a buffer with candidates (most have none).
  auto is_move = [&] { return instr < program_->instrs.size() && sem_->op(program_->instrs[instr]) == Op::Move; };
  const auto& nb = map.buffers[b];
  if (nb.size.value == 0) return;
  for (int32_t c : cands) {
    const auto& ob = idx.buffer(c);
    if (ob.last == i && ob.first < i && is_move()) continue;  // compaction hand-over
    const std::pair<size_t, size_t> key = std::minmax(b, static_cast<size_t>(c));  // copies
    if (!reported_pairs_.insert({key.first + (size_t{1} << 62), key.second}).second) continue;
    const uint64_t lo = std::max<uint64_t>(nb.offset.value, ob.offset.value);
    const uint64_t hi = std::min<uint64_t>(idx.end(static_cast<int32_t>(b)), idx.end(c));
    Finding f = base(instr, FindingKind::LiveOverlap);
    f.symbol = nb.symbol;
    f.addr = lo;
    f.bytes = hi - lo;
    f.other_symbol = ob.symbol;
    f.detail = fmt::format("buffer [{:#x}, +{}) live [{}, {}] overlaps live [{}, {}] of the other",
                           nb.offset.value, nb.size.value, nb.first, nb.last, ob.first, ob.last);
    add(std::move(f));
  }
}

// An SRAM access (clipped to the scratchpad when logged).
void Checkers::do_sram(const Event& e) {
  ShadowAccess sa;
  if (shadow_on_) sa = shadow_owner(e);
  if (sram_runs_) check_sram_runs(e, sa);
}

// A row of a DDR access (on_access logs each row a 2-D DMA touches).
void Checkers::do_ddr(const Event& e) {
  if (ddr_owner_) check_ddr_owner(e);
  if (e.flags & kHazard) check_ddr_hazard(e);
}

// Out of line (its vector's set-up and tear-down): do_ddr then needs no frame and jumps to
// check_ddr_hazard.
void Checkers::check_ddr_owner(const Event& e) {
  std::vector<Finding> found;
  ddr_owner_->access(e.instr, program_->instrs[e.instr].spec->mnemonic, start_time_[e.instr], e.flags & kWrite,
                     e.a, e.b, found);
  for (Finding& f : found) add(std::move(f));
}

std::string Checkers::symbol_at(uint64_t addr, size_t instr) const {
  if (!shadow_) return {};
  std::vector<int32_t> ids;
  shadow_->index.live_at(addr, static_cast<int64_t>(instr), ids);
  return ids.empty() ? std::string{} : shadow_->index.buffer(ids.front()).symbol;
}

// The shadow's checks of an SRAM access that need no run map: the buffer the operand names
// (none: an unowned access, reported) and the bytes past its end (reported).
// Inline, the common case alone (the index's cache answers, the access inside its buffer):
// do_sram then needs no frame and jumps to check_sram_runs.
Checkers::ShadowAccess Checkers::shadow_owner(const Event& e) {
  BufferIndex::Holder h;
  const uint64_t end = e.a + e.b;
  if (shadow_->index.sole_at(e.a, e.instr, h) && end <= h.end) return {h.id, end};
  return shadow_owner_slow(e);
}

// shadow_owner's other cases: a search of the index, an access past its buffer's end.
Checkers::ShadowAccess Checkers::shadow_owner_slow(const Event& e) {
  BufferIndex::Holder h;
  NamedBuffer own;
  if (shadow_->index.sole_at(e.a, e.instr, h)) {  // the index's cache: the only live holder
    own = {h.id, h.end};
  } else if (own = named_buffer(e); own.id == BufferIndex::kNone) {
    return {};
  }
  const uint64_t end = e.a + e.b;
  if (end > own.end) report_outside(e, own);
  return {own.id, std::min(end, own.end)};
}

// The buffer an SRAM access names, from a search of the index (kNone: none, reported).
Checkers::NamedBuffer Checkers::named_buffer(const Event& e) {
  auto& sh = *shadow_;
  const auto& idx = sh.index;
  const size_t instr = e.instr;
  const int64_t i = e.instr;
  const bool write = e.flags & kWrite;
  const uint64_t addr = e.a;
  idx.live_at(addr, i, sh.holders);
  if (sh.holders.empty()) {  // the address names no live buffer
    Finding f = base(instr, FindingKind::UnownedAccess);
    f.addr = addr;
    f.bytes = e.b;
    f.detail = fmt::format("{} of operand '{}' names no live buffer", write ? "write" : "read",
                           program_->instrs[instr].spec->fields[e.field].name);
    if (int32_t d = idx.dead_before(addr, i); d != BufferIndex::kNone) {
      f.kind = FindingKind::AfterLastUse;
      f.symbol = idx.buffer(d).symbol;
      f.detail += fmt::format(": %{} was last used by #{}", f.symbol, idx.buffer(d).last);
    } else if (int32_t b = idx.born_after(addr, i); b != BufferIndex::kNone) {
      f.kind = FindingKind::BeforeFirstUse;
      f.symbol = idx.buffer(b).symbol;
      f.detail += fmt::format(": %{} becomes live at #{}", f.symbol, idx.buffer(b).first);
    }
    add(std::move(f));
    return {};
  }
  // Several live holders only at a hand-over (or in a broken map): a write names the buffer
  // it produces, a read the one that existed before.
  // Its first instruction and end come from the index: no MemBuffer loaded unless reported.
  BufferIndex::Holder own = sh.holders.front();
  if (sh.holders.size() > 1) {
    for (const auto& h : sh.holders) {
      if ((h.first == i) == write) own = h;
    }
  }
  return {own.id, own.end};
}

// An SRAM access runs past the end of the buffer it names.
void Checkers::report_outside(const Event& e, const NamedBuffer& own) {
  if (!keeping()) return count_only(FindingKind::OutsideBuffer);
  const auto& ob = shadow_->index.buffer(own.id);
  Finding f = base(e.instr, FindingKind::OutsideBuffer);
  f.symbol = ob.symbol;
  f.addr = own.end;
  f.bytes = e.a + e.b - own.end;
  f.other_symbol = symbol_at(own.end, e.instr);
  f.detail = fmt::format("{} runs {} bytes past the end of %{} [{:#x}, {:#x}){}",
                         e.flags & kWrite ? "write" : "read", f.bytes, ob.symbol, ob.offset.value,
                         own.end, f.other_symbol.empty() ? " into unowned bytes" : "");
  add(std::move(f));
}

// A read of [addr, inside_end) for `own` found the first byte not written for it at `bad`,
// the next one that is at `good`; `other` wrote the first.
void Checkers::report_unwritten(size_t instr, int32_t own, uint64_t bad, uint64_t good, int32_t other) {
  if (!keeping()) return count_only(FindingKind::ReadUnwritten);
  const auto& idx = shadow_->index;
  Finding f = base(instr, FindingKind::ReadUnwritten);
  f.symbol = idx.buffer(own).symbol;
  f.addr = bad;
  f.bytes = good - bad;
  if (other != BufferIndex::kNone) f.other_symbol = idx.buffer(other).symbol;
  f.detail = other == BufferIndex::kNone
                 ? std::string("bytes never written")
                 : fmt::format("bytes still hold data of another buffer");
  add(std::move(f));
}

void Checkers::report_hazard(size_t instr, isa::Space space, bool write, int64_t other,
                             bool other_wrote, uint64_t lo, uint64_t hi) {
  const std::pair<size_t, size_t> key = std::minmax(static_cast<size_t>(other), instr);
  if (!reported_pairs_.insert(key).second) return;
  if (!keeping()) return count_only(FindingKind::Hazard);
  const auto& in = program_->instrs[instr];
  const auto& oi = program_->instrs[static_cast<size_t>(other)];
  Finding f = base(instr, FindingKind::Hazard);
  f.space = space;
  f.addr = lo;
  f.bytes = hi - lo;
  f.other_instr = other;
  f.other_mnemonic = oi.spec->mnemonic;
  if (space == isa::Space::Sram) {
    f.symbol = symbol_at(lo, instr);
    f.other_symbol = symbol_at(lo, static_cast<size_t>(other));
  }
  f.detail = fmt::format("{} ({}) {} bytes the other ({}) {}, and no token orders them",
                         write ? "write" : "read", queue_name(in), write && other_wrote ? "overwrites" : "touches",
                         queue_name(oi), other_wrote ? "writes" : "reads");
  add(std::move(f));
}

void Checkers::on_end() {
  flush();
  if (ended_) return;
  ended_ = true;
  if (shadow_ && options_.overlap) {
    std::vector<int64_t> pending;
    for (size_t b = 0; b < shadow_->overlap_done.size(); ++b) {
      if (!shadow_->overlap_done[b]) pending.push_back(program_->memmap->buffers[b].first);
    }
    std::sort(pending.begin(), pending.end());
    pending.erase(std::unique(pending.begin(), pending.end()), pending.end());
    for (int64_t i : pending) check_overlap_at(static_cast<size_t>(std::max<int64_t>(i, 0)));
  }
  if (!options_.hazard) return;
  auto qname = [&](unsigned q) { return isa::to_string(static_cast<isa::Queue>(q)); };
  for (const auto& [i, p] : order_->unmatched_waits()) {
    Finding f = base(i, FindingKind::Deadlock);
    f.detail = fmt::format("waits for a token from {} that no {} instruction signals", qname(p), qname(p));
    add(std::move(f));
  }
  if (order_->unmatched_waits().empty() && !order_->stuck().empty()) {
    Finding f = base(order_->stuck().front(), FindingKind::Deadlock);
    f.detail = fmt::format("never starts: {} instructions wait on each other in a cycle",
                           order_->stuck().size());
    add(std::move(f));
  }
  for (const auto& [i, q] : order_->unmatched_signals()) {
    Finding f = base(i, FindingKind::UnconsumedSignal);
    f.detail = fmt::format("signals {} but no {} instruction waits for this token", qname(q), qname(q));
    add(std::move(f));
  }
}

std::string findings_summary(uint64_t total, const KindCounts& by_kind, std::span<const Finding> kept) {
  if (total == 0) return "no findings\n";
  std::string s = fmt::format("{} finding(s):", total);
  for (const auto& k : kKinds) {
    if (const uint64_t c = by_kind[static_cast<size_t>(k.kind)]) s += fmt::format(" {} {}", k.name, c);
  }
  s += "\n";
  for (const auto& f : kept) s += "  " + format(f) + "\n";
  if (kept.size() < total) {
    s += fmt::format("  ... and {} more (raise --max-errors to see them)\n", total - kept.size());
  }
  return s;
}

std::string Checkers::summary() const {
  flushed();
  KindCounts counts{};
  std::copy_n(by_kind_.begin(), counts.size(), counts.begin());
  return findings_summary(total_, counts, findings_);
}

}  // namespace npuforge::sim
